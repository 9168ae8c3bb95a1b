"""qemu-run.sh against hostile or careless input, with a stand-in for qemu (conftest.py):
no kernel, no boot. Every refusal is one line on stderr, exit 125, before qemu starts;
the cached guest image is never handed to qemu writable; a killed qemu-run.sh takes its
guest with it."""
import os
import pty
import signal
import subprocess
import time

import pytest

from fakeqemu import QEMU_RUN, ROOT, gone_within, one_line_error, qemu_opts


# --- it still works -------------------------------------------------------------------
def test_payload_status_and_output_pass_through(qemu_run):
    r = qemu_run.run("--exec", "true", exit_status=7)
    assert r.returncode == 7, r.stderr
    assert r.stdout == "payload output\n"
    assert len(qemu_run.starts()) == 1


def test_out_file_gets_the_payload_output(qemu_run, tmp_path):
    out = tmp_path / "probe.ktap"
    r = qemu_run.run("--exec", "true", "--out", str(out), "--log", str(tmp_path / "console.log"))
    assert r.returncode == 0, r.stderr
    assert out.read_text() == "payload output\n"
    assert (tmp_path / "console.log").exists()


# --- finding 1: the cached image is never writable ---------------------------------------
def drive_specs(argv):
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-drive", "-blockdev")]


def assert_base_not_writable(rec, rootfs):
    """The base image reaches qemu only as the read-only backing of a throwaway overlay
    (or, if named on the command line at all, with readonly=on)."""
    for spec in drive_specs(rec["argv"]):
        if str(rootfs) in spec:
            assert "readonly=on" in spec or "read-only=on" in spec, f"base passed writable: {spec}"
    backing = [b for b in rec["backing"].values() if b]
    named = any(str(rootfs) in spec for spec in drive_specs(rec["argv"]))
    assert named or os.path.realpath(str(rootfs)) in [os.path.realpath(b) for b in backing], \
        f"the root disk is neither the base nor an overlay on it: {rec}"
    for spec in drive_specs(rec["argv"]):
        assert "snapshot=on" not in spec or str(rootfs) not in spec


def test_payload_boot_never_gets_the_base_writable(qemu_run):
    qemu_run.env["FAKE_QEMU_INSPECT"] = "1"
    r = qemu_run.run("--exec", "true")
    assert r.returncode == 0, r.stderr
    rec = qemu_run.starts()[0]
    assert_base_not_writable(rec, qemu_run.rootfs)


def disks_by_bus(argv):
    """{drive id: the -device that carries it}, from a recorded argv."""
    out = {}
    for i, a in enumerate(argv[:-1]):
        if a == "-device":
            o = qemu_opts(argv[i + 1])
            if "drive" in o:
                out[o["drive"]] = next(iter(o))
    return out


@pytest.mark.parametrize("arch,payload_bus", [("x86_64", "virtio-blk-pci"), ("s390", "scsi-hd")])
def test_root_is_the_only_vd_disk_where_the_arch_says_so(qemu_run, arch, payload_bus):
    # s390's virtio-ccw brings disks online in no fixed order: the payload disk goes on
    # virtio-scsi there, so root=/dev/vda can only be the root disk. x86_64 is the control:
    # its payload disk is the second virtio-blk disk (vdb), and the check tells them apart.
    qemu_run.arch = arch
    r = qemu_run.run("--exec", "true")
    assert r.returncode == 0, r.stderr
    disks = disks_by_bus(qemu_run.starts()[0]["argv"])
    assert disks["payload"] == payload_bus, disks
    assert disks["root"].startswith("virtio-blk-"), disks
    vd_disks = [d for d, bus in disks.items() if bus.startswith("virtio-blk-")]
    assert (vd_disks == ["root"]) == (arch == "s390"), disks


@pytest.mark.parametrize("arch,smp", [("x86_64", "2"), ("mips64el", "1")])
def test_vcpus_are_the_arch_data_files(qemu_run, arch, smp):
    # Malta starts every vCPU at the kernel's entry: mips64el's data file asks for one
    qemu_run.arch = arch
    r = qemu_run.run("--exec", "true")
    assert r.returncode == 0, r.stderr
    argv = qemu_run.starts()[0]["argv"]
    assert argv[argv.index("-smp") + 1] == smp, argv


def test_interactive_console_has_no_monitor_and_no_writable_base(qemu_run):
    # Interactive mode needs a terminal on stdin: give it a pty.
    master, slave = pty.openpty()
    qemu_run.env["FAKE_QEMU_INSPECT"] = "1"
    try:
        r = qemu_run.run(mode="exit", stdin=slave, timeout=20)
    finally:
        os.close(slave)
        os.close(master)
    assert r.returncode == 0, r.stderr
    starts = qemu_run.starts()
    assert len(starts) == 1
    argv = starts[0]["argv"]
    joined = " ".join(argv)
    # Ctrl-A s on a muxed stdio commits the session into the image, Ctrl-A c opens the
    # monitor (whose commit does the same): no mux, no monitor.
    assert "mon:" not in joined, argv
    assert "mux=on" not in joined, argv
    for i, a in enumerate(argv[:-1]):
        if a == "-monitor":
            assert argv[i + 1] == "none", argv
        if a == "-chardev" and argv[i + 1].startswith("stdio"):
            assert "mux=off" in argv[i + 1], argv
    assert "-monitor" in argv, "the monitor must be switched off explicitly"
    assert_base_not_writable(starts[0], qemu_run.rootfs)


def test_base_image_unchanged_after_a_run(qemu_run):
    before = qemu_run.rootfs.read_bytes()
    qemu_run.run("--exec", "true")
    assert qemu_run.rootfs.read_bytes() == before


# --- finding 2: --arch is a plain name of configs/arch ---------------------------------
@pytest.mark.parametrize("name", ["../../x", "../arch/x86_64", "x86_64/../x86_64", "X86_64",
                                  "x86-64", "", "x86_64\nevil", "/etc/passwd"])
def test_arch_must_be_a_plain_known_name(qemu_run, tmp_path, name):
    r = subprocess.run([QEMU_RUN, "--arch", name, "--kernel", str(qemu_run.kernel),
                        "--rootfs", str(qemu_run.rootfs), "--exec", "true"],
                       env=qemu_run.env, capture_output=True, text=True, timeout=10)
    one_line_error(r)
    assert qemu_run.starts() == []


def evil_conf(tmp_path):
    """A .conf outside configs/arch that leaves a mark when sourced, and the --arch value
    that reaches it from configs/arch."""
    marker = tmp_path / "sourced"
    conf = tmp_path / "evil.conf"
    conf.write_text(f"touch {marker}\nQEMU=true\n")
    rel = os.path.relpath(str(tmp_path / "evil"), os.path.join(ROOT, "configs", "arch"))
    return rel, marker


def test_arch_path_is_not_sourced_by_qemu_run(qemu_run, tmp_path):
    rel, marker = evil_conf(tmp_path)
    r = subprocess.run([QEMU_RUN, "--arch", rel, "--kernel", str(qemu_run.kernel),
                        "--rootfs", str(qemu_run.rootfs), "--exec", "true"],
                       env=qemu_run.env, capture_output=True, text=True, timeout=10)
    one_line_error(r, "arch")
    assert not marker.exists(), "qemu-run.sh sourced a file outside configs/arch"


@pytest.mark.parametrize("func", ["check_arch", "load_arch"])
def test_arch_path_is_not_sourced_by_lib(tmp_path, func):
    rel, marker = evil_conf(tmp_path)
    r = subprocess.run(["bash", "-c", f'set -eu; . "$1/scripts/lib.sh"; {func} "$2"; echo reached',
                        "lib-test", ROOT, rel], capture_output=True, text=True, timeout=10)
    assert r.returncode != 0 and "reached" not in r.stdout
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "arch" in r.stderr
    assert not marker.exists(), f"{func} sourced a file outside configs/arch"


def test_lib_accepts_a_real_arch():
    r = subprocess.run(["bash", "-c", 'set -eu; . "$1/scripts/lib.sh"; load_arch x86_64; echo "$QEMU"',
                        "lib-test", ROOT], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0 and r.stdout.strip() == "qemu-system-x86_64", r.stderr


def test_unknown_arch_message_kept(qemu_run):
    # tests/suite.sh t_harness_bad_input greps this message.
    r = subprocess.run([QEMU_RUN, "--arch", "vax", "--kernel", "x", "--rootfs", "y", "--exec", "true"],
                       env=qemu_run.env, capture_output=True, text=True, timeout=10)
    one_line_error(r, "unknown arch 'vax'")


# --- finding 3: killing qemu-run.sh ends the guest ---------------------------------------
@pytest.mark.parametrize("sig,mode", [(signal.SIGTERM, "sleep"), (signal.SIGINT, "sleep"),
                                      (signal.SIGHUP, "sleep"), (signal.SIGTERM, "ignore-term")])
def test_signal_ends_the_guest_and_cleans_up(qemu_run, sig, mode):
    p = qemu_run.start("--exec", "true", "--timeout", "600", mode=mode)
    try:
        qpid = qemu_run.qemu_pid()
        rec = qemu_run.starts()[0]
        work = None
        for spec in drive_specs(rec["argv"]):
            if "id=payload" in spec:
                work = os.path.dirname(spec.split("file=", 1)[1].split(",", 1)[0])
        assert work and os.path.isdir(work)
        time.sleep(0.3)
        p.send_signal(sig)
        p.wait(timeout=10)
        assert gone_within(qpid, 5), f"qemu (pid {qpid}) still running after {sig.name} to qemu-run.sh"
        assert not os.path.exists(work), f"work folder {work} left behind"
    finally:
        if p.poll() is None:
            p.kill()
        if qemu_run.pidfile.exists():
            try:
                os.kill(int(qemu_run.pidfile.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_guest_that_reported_is_stopped_without_waiting_for_its_shutdown(qemu_run):
    # The status line is in and the port stays quiet: the run ends with the payload's
    # status, the guest stopped, long before the timeout.
    start = time.time()
    r = qemu_run.run("--exec", "true", "--timeout", "60", mode="result-sleep", exit_status=7, timeout=30)
    assert r.returncode == 7, r.stderr
    assert r.stdout == "payload output\n"
    assert gone_within(qemu_run.qemu_pid(), 5)
    assert time.time() - start < 15
    # Control: a guest that never reports runs until the timeout.
    r = qemu_run.run("--exec", "true", "--timeout", "2", mode="sleep", timeout=30)
    assert r.returncode == 124, r.stderr


def test_a_status_like_line_inside_the_output_does_not_end_the_run(qemu_run):
    # A line of the payload's output that reads like the status, the rest of the output
    # after it: the run waits for the port to stay quiet, and the last line is the status.
    qemu_run.env.update(FAKE_QEMU_RESULTS="a\nHARNESS-EXIT 0\n", FAKE_QEMU_RESULTS_LATER="b\nHARNESS-EXIT 3\n")
    r = qemu_run.run("--exec", "true", "--timeout", "60", mode="result-sleep", timeout=30)
    assert r.returncode == 3, r.stderr
    assert r.stdout == "a\nHARNESS-EXIT 0\nb\n"
    # A status line not ended yet is no status: the run goes on to the timeout.
    qemu_run.env.update(FAKE_QEMU_RESULTS="a\nHARNESS-EXIT 0", FAKE_QEMU_RESULTS_LATER="")
    r = qemu_run.run("--exec", "true", "--timeout", "3", mode="result-sleep", timeout=30)
    assert r.returncode == 124, r.stderr


def test_timeout_kills_a_guest_that_ignores_term(qemu_run):
    start = time.time()
    # (3 s: on a loaded machine the fake has taken more than a second to start and ignore TERM)
    r = qemu_run.run("--exec", "true", "--timeout", "3", mode="ignore-term", timeout=20)
    assert r.returncode == 124, r.stderr
    assert gone_within(qemu_run.qemu_pid(), 5)
    assert time.time() - start < 15


def test_boot_timeout_ends_a_boot_that_never_reaches_the_payload(qemu_run):
    start = time.time()
    r = qemu_run.run("--exec", "true", "--boot-timeout", "1", "--timeout", "60", mode="sleep", timeout=30)
    assert r.returncode == 124, r.stderr
    assert "did not reach the payload within 1s" in r.stderr
    assert time.time() - start < 15


def test_boot_timeout_stops_counting_once_the_payload_starts(qemu_run):
    # Negative control: the console shows systemd starting the payload's service, so only
    # the whole run's --timeout ends it.
    start = time.time()
    # (whole seconds: a 1-second bound can end before the fake has written its line)
    r = qemu_run.run("--exec", "true", "--boot-timeout", "3", "--timeout", "5", mode="booted-sleep", timeout=30)
    assert r.returncode == 124, r.stderr
    assert "still running after 5s" in r.stderr
    assert time.time() - start >= 4.5


def test_a_console_flood_does_not_keep_the_timeout_from_firing(qemu_run):
    # the watch reads a bounded number of lines a look, then checks the clock
    r = qemu_run.run("--exec", "true", "--timeout", "1", mode="flood", timeout=20)
    assert r.returncode == 124 and "still running after 1s" in r.stderr, r.stderr


def test_a_freeze_is_seen_in_a_line_the_console_got_in_two_parts(qemu_run):
    # systemd's line reaches the log in two writes, the first read before the second lands:
    # the freeze is seen, then FREEZE_QUIET seconds of silence end the guest.
    qemu_run.env.update(FREEZE_QUIET="1", FAKE_QEMU_CONSOLE="[    5.1] systemd[1]: Freezing exec",
                        FAKE_QEMU_CONSOLE_LATER="ution.\n")
    r = qemu_run.run("--exec", "true", "--timeout", "20", mode="sleep", timeout=30)
    assert r.returncode == 123 and "systemd froze the boot" in r.stderr, r.stderr
    assert "Freezing execution." in r.stderr
    # Control: the first part alone is no freeze; the guest runs until the timeout.
    del qemu_run.env["FAKE_QEMU_CONSOLE_LATER"]
    r = qemu_run.run("--exec", "true", "--timeout", "2", mode="sleep", timeout=30)
    assert r.returncode == 124 and "froze" not in r.stderr, r.stderr


def test_a_freeze_is_seen_at_the_end_of_a_line_longer_than_the_watch_keeps(qemu_run):
    # The watch keeps the last 4 KiB of a line not ended yet: systemd's line, split in two
    # writes after 100 KB without a newline, is still seen whole.
    qemu_run.env.update(FREEZE_QUIET="1", FAKE_QEMU_CONSOLE="x" * 100000 + " systemd[1]: Freezing exec",
                        FAKE_QEMU_CONSOLE_LATER="ution.\n")
    r = qemu_run.run("--exec", "true", "--timeout", "20", mode="sleep", timeout=30)
    assert r.returncode == 123 and "systemd froze the boot" in r.stderr, r.stderr[-300:]


@pytest.mark.parametrize("bad", ["0", "-1", "soon", "99999999"])
def test_bad_boot_timeout_refused(qemu_run, bad):
    one_line_error(qemu_run.run("--exec", "true", "--boot-timeout", bad), "--boot-timeout")
    assert qemu_run.starts() == []


# --- finding 4: late failures become early one-line refusals -----------------------------
@pytest.mark.parametrize("opt", ["--log", "--out"])
def test_output_path_in_a_missing_folder(qemu_run, tmp_path, opt):
    r = qemu_run.run("--exec", "true", opt, str(tmp_path / "no" / "such" / "file"))
    one_line_error(r, opt)
    assert qemu_run.starts() == [], "qemu started before the bad path was noticed"


@pytest.mark.parametrize("opt", ["--log", "--out"])
def test_output_path_that_is_a_folder(qemu_run, tmp_path, opt):
    r = qemu_run.run("--exec", "true", opt, str(tmp_path))
    one_line_error(r, opt)
    assert qemu_run.starts() == []


@pytest.mark.parametrize("opt", ["--log", "--out"])
def test_output_path_must_not_be_an_input(qemu_run, opt):
    before = qemu_run.rootfs.read_bytes()
    r = qemu_run.run("--exec", "true", opt, str(qemu_run.rootfs))
    one_line_error(r, opt)
    assert qemu_run.rootfs.read_bytes() == before
    assert qemu_run.starts() == []


@pytest.mark.parametrize("value", ["0", "00", "-5", "99999999999999999999", "86401", "1e3",
                                   "", " 5", "5 ", "0x10"])
def test_bad_timeout(qemu_run, value):
    r = qemu_run.run("--exec", "true", "--timeout", value)
    one_line_error(r, "--timeout")
    assert qemu_run.starts() == []


@pytest.mark.parametrize("value", ["1", "300", "86400", "010"])
def test_good_timeout(qemu_run, value):
    r = qemu_run.run("--exec", "true", "--timeout", value)
    if value == "1" and r.returncode == 124:
        # a loaded machine can take a second to start and run the stand-in guest: the
        # timer still shows the value was taken, as one second
        assert "guest still running after 1s" in r.stderr, r.stderr
        return
    assert r.returncode == 0, r.stderr
    assert qemu_run.starts(), r.stderr


def test_bad_freeze_quiet(qemu_run):
    qemu_run.env["FREEZE_QUIET"] = "soon"
    r = qemu_run.run("--exec", "true")
    one_line_error(r, "FREEZE_QUIET")


@pytest.mark.parametrize("name", ["run", "selinux-mode"])
def test_files_must_not_replace_the_payload(qemu_run, tmp_path, name):
    d = tmp_path / "files"
    d.mkdir()
    (d / name).write_text("#!/bin/sh\necho forged\n")
    r = qemu_run.run("--exec", "true", "--selinux-mode", "permissive", "--files", str(d))
    one_line_error(r, name)
    assert qemu_run.starts() == []


def test_files_larger_than_64m_fit_the_payload_disk(qemu_run, tmp_path):
    d = tmp_path / "files"
    d.mkdir()
    with open(d / "big", "wb") as f:
        f.write(os.urandom(70 << 20))
    (d / "small").write_text("x\n")
    qemu_run.env["FAKE_QEMU_INSPECT"] = "1"
    r = qemu_run.run("--exec", "true", "--files", str(d), timeout=60)
    assert r.returncode == 0, r.stderr
    rec = qemu_run.starts()[0]
    assert "/big/" in rec["payload_ls"] and "/small/" in rec["payload_ls"], rec["payload_ls"]


def test_files_beyond_the_limit_refused_before_mkfs(qemu_run, tmp_path):
    d = tmp_path / "files"
    d.mkdir()
    with open(d / "huge", "wb") as f:
        f.truncate(5 << 30)  # sparse: costs nothing here, but it would be copied in full
    start = time.time()
    r = qemu_run.run("--exec", "true", "--files", str(d))
    one_line_error(r, "--files")
    assert qemu_run.starts() == []
    assert time.time() - start < 10


@pytest.mark.parametrize("args,want", [
    (["--selinux-mode", "off"], "--selinux-mode"),
    (["--accel", "hvf"], "--accel"),
    (["--exec", "true", "--script", "/nonexistent"], "exclude"),
    (["--bogus", "1"], "unknown option"),
    (["--exec"], "needs a value"),
])
def test_other_bad_arguments_one_line(qemu_run, args, want):
    r = qemu_run.run(*args)
    one_line_error(r, want)
    assert qemu_run.starts() == []


def test_comma_in_paths_does_not_inject_options(qemu_run, tmp_path):
    # qemu splits option values on commas: a path with one must reach it escaped (",,").
    d = tmp_path / "a,format=qcow2"
    d.mkdir()
    qemu_run.env["TMPDIR"] = str(d)
    r = qemu_run.run("--exec", "true", "--log", str(d / "console,x.log"))
    assert r.returncode == 0, r.stderr
    argv = qemu_run.starts()[0]["argv"]
    specs = drive_specs(argv) + [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-chardev"]
    for spec in specs:
        o = qemu_opts(spec)
        for key in ("file", "path"):
            if o.get(key):
                assert str(d) in o[key], f"{spec}: {key} cut at a comma"


# --- finding 1, second half: rootfs/build.sh trusts a cached image only if unchanged -----
FAKE_DEBOOTSTRAP = r'''#!/bin/sh
# debootstrap --variant=minbase --arch=A --include=P SUITE DIR [MIRROR]: a tiny tree
for a; do case "$a" in --*) ;; *) [ -n "$suite" ] && { dir=$a; break; }; suite=$a ;; esac; done
mkdir -p "$dir/etc/systemd/system" "$dir/usr/local/sbin" "$dir/var/cache/apt/archives" \
	"$dir/var/lib/apt/lists" "$dir/etc/selinux"
echo 'root:*:19000:0:99999:7:::' >"$dir/etc/shadow"
echo SELINUX=permissive >"$dir/etc/selinux/config"
echo run >>"$FAKE_DEBOOTSTRAP_COUNT"
'''

FAKE_GUEST_SH = r'''#!/bin/sh
# guest.sh ARCH: a folder with a stand-in for the admin tool
d=$BUILD/guest/$1
mkdir -p "$d"
printf '#!/bin/sh\necho tool\n' >"$d/selinux-migrate-check"
echo "$d"
'''


class RootfsBuild:
    """rootfs/build.sh in a copy of the tree: debootstrap and guest.sh are stand-ins, the
    image is 64 MiB instead of 2 GiB (the only change to the copy), the cache is private."""

    def __init__(self, tmp):
        import shutil
        self.root = tmp / "tree"
        for d in ("rootfs", "configs/arch", "harness"):
            shutil.copytree(os.path.join(ROOT, d), self.root / d)
        (self.root / "scripts").mkdir()
        shutil.copy(os.path.join(ROOT, "scripts", "lib.sh"), self.root / "scripts" / "lib.sh")
        guest = self.root / "scripts" / "guest.sh"
        guest.write_text(FAKE_GUEST_SH)
        guest.chmod(0o755)
        build = self.root / "rootfs" / "build.sh"
        text = build.read_text()
        assert text.count('\nSIZE=2G\n') == 1, "build.sh's image size line changed: update this test"
        build.write_text(text.replace('\nSIZE=2G\n', '\nSIZE=64M\n'))
        bindir = tmp / "fakebin"
        bindir.mkdir()
        fake = bindir / "debootstrap"
        fake.write_text(FAKE_DEBOOTSTRAP)
        fake.chmod(0o755)
        self.count = tmp / "debootstrap-runs"
        self.cache = tmp / "cache" / "selinux-backport" / "rootfs"
        self.env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}",
                        XDG_CACHE_HOME=str(tmp / "cache"), BUILD=str(tmp / "build"),
                        MIRROR="http://deb.invalid/debian", FAKE_DEBOOTSTRAP_COUNT=str(self.count))

    def run(self):
        return subprocess.run([str(self.root / "rootfs" / "build.sh"), "x86_64"], env=self.env,
                              capture_output=True, text=True, timeout=60)

    def runs(self):
        return len(self.count.read_text().split()) if self.count.exists() else 0


def flip_byte(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0xFF]))


def test_build_records_and_checks_the_image_sha256(tmp_path):
    b = RootfsBuild(tmp_path)
    r = b.run()
    assert r.returncode == 0, r.stderr
    tools = r.stdout.strip().splitlines()[-1]
    base = tools.split("-tools-")[0] + ".ext4"
    assert os.path.exists(base) and os.path.exists(tools)
    assert b.runs() == 1
    # A cache hit: same image, no new debootstrap.
    r = b.run()
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == tools
    assert b.runs() == 1

    # The image qemu boots changed since it was built (a commit into it, a stray write):
    # refused with one line naming it, and left as it is for whoever looks.
    flip_byte(tools, 1024 + 56)  # in the ext4 superblock
    r = b.run()
    assert r.returncode != 0, "a changed cached image was trusted"
    assert len(r.stderr.strip().splitlines()) - sum(
        1 for line in r.stderr.splitlines() if line.startswith("[build.sh]")) == 1, r.stderr
    assert tools in r.stderr and "sha256" in r.stderr
    flip_byte(tools, 1024 + 56)
    r = b.run()
    assert r.returncode == 0, r.stderr

    # The base image changed: checked before a tool layer is made from it.
    os.remove(tools)
    flip_byte(base, 1024 + 56)
    r = b.run()
    assert r.returncode != 0, "a tool layer was made from a changed base image"
    assert base in r.stderr and "sha256" in r.stderr
    assert not os.path.exists(tools)
    assert b.runs() == 1


def test_build_refuses_a_second_stage_it_cannot_take(tmp_path):
    # STAGE2 takes guest only, and only for an arch with no qemu-user: anything else is one
    # line naming it, before debootstrap runs (or a cached image is used).
    b = RootfsBuild(tmp_path)
    for arch, value, why in (("x86_64", "host", "STAGE2 is host: the only value it takes is guest"),
                             ("x86_64", "guest\nx", "STAGE2 is $'guest\\nx': the only value"),
                             ("arm64", "guest", "STAGE2=guest: arm64's second stage runs under qemu-user")):
        r = subprocess.run([str(b.root / "rootfs" / "build.sh"), arch], env=dict(b.env, STAGE2=value),
                           capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and len(r.stderr.splitlines()) == 1 and why in r.stderr, (value, r.stderr)
    assert b.runs() == 0
