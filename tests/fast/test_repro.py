"""The stand-alone reproducer (harness/repro.py) and qemu-run.sh's --argv-out, with the
stand-in qemu of fakeqemu.py: no kernel, no boot. A reproducer runs the argv qemu-run.sh
ran (its temporary paths apart), refuses inputs that drifted and names them, and bad input
to the generator leaves no script."""
import json
import os
import pty
import shlex
import shutil
import signal
import subprocess

import pytest

from fakeqemu import ROOT, QemuRun, gone_within, one_line_error, qemu_opts

APPEND = "selinux=0 odd,value 'quoted'"


def flip_byte(path, offset=0):
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def work_dir(argv):
    """The temporary folder of a boot: the folder of its root disk."""
    for i, a in enumerate(argv[:-1]):
        if a == "-drive" and qemu_opts(argv[i + 1]).get("id") == "root":
            return os.path.dirname(qemu_opts(argv[i + 1])["file"])
    raise AssertionError(f"no root disk in {argv}")


def normalized(argv):
    """ARGV with qemu's name, the temp folder and the console log put in words."""
    work = work_dir(argv)
    out = [os.path.basename(argv[0])] + [a.replace(work, "WORK") for a in argv[1:]]
    i = out.index("-serial")
    out[i + 1] = "file:LOG"
    return out


class Cell:
    """A matrix cell made with qemu-run.sh and the fake qemu: a payload, a --files folder,
    a .config, the argv file; and its stand-alone reproducer."""

    def __init__(self, qr, tmp):
        self.qr, self.tmp = qr, tmp
        self.dir = tmp / "x86_64.6.1-test.cfg-disabled"
        self.dir.mkdir()
        self.files = tmp / "guest"
        (self.files / "sub").mkdir(parents=True)
        (self.files / "selinux-probe").write_bytes(b"\x7fELF fake probe\n")
        (self.files / "selinux-probe").chmod(0o755)
        (self.files / "sub" / "data").write_text("some data\n")
        self.payload = self.dir / "payload.sh"
        self.payload.write_text("#!/bin/sh\nexec /harness/selinux-probe state:boot\n")
        self.config = tmp / "dot.config"
        self.config.write_text("CONFIG_SECURITY_SELINUX=y\n# CONFIG_X is not set\n")
        self.argv = self.dir / "qemu-argv.json"
        self.script = self.dir / "repro-standalone.sh"

    def boot(self, *extra, exit_status=3):
        return self.qr.run("--script", str(self.payload), "--files", str(self.files),
                           "--selinux-mode", "disabled", "--append", APPEND,
                           "--log", str(self.dir / "console.log"), "--out", str(self.dir / "probe.ktap"),
                           "--argv-out", str(self.argv), *extra, exit_status=exit_status)

    def generate(self, *extra, celldir=None):
        cmd = ["/usr/bin/python3", "-m", "harness.repro", str(celldir or self.dir),
               "--kernel", str(self.qr.kernel), "--rootfs", str(self.qr.rootfs), "--files", str(self.files),
               "--argv", str(self.argv), "--config", str(self.config), "--selinux-mode", "disabled", *extra]
        env = dict(self.qr.env, PYTHONPATH=ROOT)
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)

    def standalone(self):
        """The script, generated and copied away from the repository and the cell."""
        r = self.generate()
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == str(self.script)
        away = self.tmp / "elsewhere"
        away.mkdir(exist_ok=True)
        return shutil.copy(self.script, away / "repro-standalone.sh")

    def repro(self, script, *args, mode="result", exit_status=3, timeout=30, **env):
        env = dict(self.qr.env, FAKE_QEMU_MODE=mode, FAKE_QEMU_EXIT=str(exit_status), **env)
        env.pop("PYTHONPATH", None)
        cmd = [str(script), *args] if args else [str(script), str(self.qr.kernel), str(self.qr.rootfs)]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                              cwd=os.path.dirname(script))


@pytest.fixture(scope="module")
def booted(tmp_path_factory):
    """One boot per module (qemu-run.sh is most of a test's time): the cell, and a copy of
    the folder the boot left, taken before any test touched it."""
    root = tmp_path_factory.mktemp("cell")
    c = Cell(QemuRun(root), root)
    # the boot's record says what the payload disk held and the overlay's backing
    # (test_standalone_runs_the_argv_qemu_run_ran compares a reproducer's with it)
    c.qr.env["FAKE_QEMU_INSPECT"] = "1"
    r = c.boot()
    del c.qr.env["FAKE_QEMU_INSPECT"]
    assert r.returncode == 3, r.stderr
    snapshot = tmp_path_factory.mktemp("snapshot") / "cell"
    shutil.copytree(root, snapshot, symlinks=True)
    return c, snapshot


@pytest.fixture
def cell(booted):
    """The booted cell, its folder put back as the boot left it (same paths, same bytes,
    same modes): a test may flip, delete or rewrite any of it."""
    c, snapshot = booted
    shutil.rmtree(c.tmp)
    shutil.copytree(snapshot, c.tmp, symlinks=True)
    return c


# --- qemu-run.sh --argv-out ------------------------------------------------------------
def test_argv_out_is_what_qemu_got(cell):
    got = cell.qr.starts()[0]["argv"]
    wrote = json.loads(cell.argv.read_text())
    assert wrote[0] == "qemu-system-x86_64" and os.path.basename(got[0]) == wrote[0]
    assert wrote[1:] == got[1:]


def test_argv_out_in_an_interactive_session(qemu_run, tmp_path):
    out = tmp_path / "argv.json"
    master, slave = pty.openpty()
    try:
        r = qemu_run.run("--argv-out", str(out), mode="exit", stdin=slave)
    finally:
        os.close(slave)
        os.close(master)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())[1:] == qemu_run.starts()[0]["argv"][1:]


@pytest.mark.parametrize("where", ["missing-folder", "folder", "kernel", "log"])
def test_bad_argv_out_is_refused(qemu_run, tmp_path, where):
    target = {"missing-folder": tmp_path / "no" / "argv.json", "folder": tmp_path,
              "kernel": qemu_run.kernel, "log": tmp_path / "console.log"}[where]
    kernel_before = qemu_run.kernel.read_bytes()
    r = qemu_run.run("--exec", "true", "--log", str(tmp_path / "console.log"), "--argv-out", str(target))
    one_line_error(r, "--argv-out")
    assert qemu_run.starts() == []
    assert qemu_run.kernel.read_bytes() == kernel_before


# --- the stand-alone script --------------------------------------------------------------
def test_standalone_runs_the_argv_qemu_run_ran(cell):
    script = cell.standalone()
    r = cell.repro(script, exit_status=5, FAKE_QEMU_INSPECT="1")
    assert r.returncode == 5, r.stderr
    assert r.stdout == "payload output\nHARNESS-EXIT 5\n"
    run, again = cell.qr.starts()
    assert normalized(again["argv"]) == normalized(run["argv"])
    # the same payload disk, and an overlay on the same image
    assert again["payload_ls"] == run["payload_ls"] and again["payload_size"] == run["payload_size"]
    assert list(again["backing"].values()) == [os.path.realpath(cell.qr.rootfs)]
    assert not os.path.exists(work_dir(again["argv"])), "the temp folder was left behind"


def test_standalone_prints_cmdline_config_and_command(cell):
    script = cell.standalone()
    r = cell.repro(script, "--cmdline")
    assert r.returncode == 0 and r.stdout.endswith(f" {APPEND}\n"), r
    assert r.stdout.startswith("console=ttyS0 ")
    r = cell.repro(script, "--config")
    assert r.returncode == 0 and r.stdout == cell.config.read_text()
    r = cell.repro(script, "--show")
    assert r.returncode == 0, r.stderr
    shown = shlex.split(r.stdout)
    want = [a.replace(str(cell.qr.kernel), "KERNEL_IMAGE") for a in normalized(cell.qr.starts()[0]["argv"])]
    assert [a.replace("file:WORK/console.log", "file:LOG") for a in shown] == want


def test_standalone_is_shellcheck_clean(cell):
    if not shutil.which("shellcheck"):
        pytest.skip("no shellcheck (make test installs it)")
    script = cell.standalone()
    r = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout


def test_another_qemu_version_is_a_warning(cell):
    script = cell.standalone()
    r = cell.repro(script, FAKE_QEMU_VERSION="QEMU emulator version 9.9.9")
    assert r.returncode == 3, r.stderr
    assert "warning: qemu-system-x86_64 here is 'QEMU emulator version 9.9.9'" in r.stderr


def test_log_option_keeps_the_console(cell, tmp_path):
    script = cell.standalone()
    log = tmp_path / "kept.log"
    r = cell.repro(script, "--log", str(log), str(cell.qr.kernel), str(cell.qr.rootfs))
    assert r.returncode == 3, r.stderr
    assert log.exists()
    assert cell.qr.starts()[1]["argv"][-1] == f"file:{log}"


@pytest.mark.parametrize("line,status", [
    ("Kernel panic - not syncing: Attempted to kill init!\n", 126),
    ("WARNING: CPU: 1 PID: 1 at security/selinux/hooks.c:7000 selinux_init+0x1/0x2\n", 126),
    # negative control: a user-space line that only mentions a panic is the payload's business
    ("systemd[1]: no kernel panic here\n", 3),
])
def test_a_kernel_problem_is_judged_as_qemu_run_judges_it(cell, line, status):
    # the script takes qemu-run.sh's own pattern, so both give the same verdict on a console
    # (without a console line qemu-run.sh gives the payload's 3: the booted fixture's boot)
    script = cell.standalone()
    r = cell.repro(script, FAKE_QEMU_CONSOLE=line)
    assert r.returncode == status, r.stderr
    env_run = subprocess.run(cell.qr.args("--exec", "true"), env=dict(cell.qr.env, FAKE_QEMU_CONSOLE=line,
                             FAKE_QEMU_EXIT="3"), capture_output=True, text=True, timeout=30)
    assert env_run.returncode == status, env_run.stderr


def test_timeout_kills_the_guest(cell):
    r = cell.generate("--timeout", "1")
    assert r.returncode == 0, r.stderr
    r = cell.repro(cell.script, mode="sleep")
    assert r.returncode == 124, r.stderr
    assert "timeout" in r.stderr
    assert gone_within(cell.qr.qemu_pid(), 5)


def test_signal_ends_the_guest_and_cleans_up(cell):
    script = cell.standalone()
    os.unlink(cell.qr.pidfile)
    env = dict(cell.qr.env, FAKE_QEMU_MODE="sleep")
    p = subprocess.Popen([str(script), str(cell.qr.kernel), str(cell.qr.rootfs)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        qpid = cell.qr.qemu_pid()
        work = work_dir(cell.qr.starts()[1]["argv"])
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=15)
        assert gone_within(qpid, 5), "qemu still runs after TERM to the reproducer"
        assert not os.path.exists(work), f"{work} left behind"
    finally:
        if p.poll() is None:
            p.kill()


# --- drift ---------------------------------------------------------------------------------
@pytest.mark.parametrize("what", ["kernel image", "guest image"])
def test_a_drifted_image_is_named_and_not_booted(cell, what):
    script = cell.standalone()
    path = cell.qr.kernel if what == "kernel image" else cell.qr.rootfs
    flip_byte(path, 500 if what == "guest image" else 0)
    r = cell.repro(script)
    assert r.returncode == 1, r.stderr
    assert f"repro: the {what} drifted: sha256 " in r.stderr
    other = "guest image" if what == "kernel image" else "kernel image"
    assert f"the {other} drifted" not in r.stderr
    assert len(cell.qr.starts()) == 1, "qemu started on a drifted input"
    r = cell.repro(script, "--ignore-drift", str(cell.qr.kernel), str(cell.qr.rootfs))
    assert r.returncode == 3 and "booting anyway" in r.stderr, r.stderr


def test_a_payload_file_that_drifted_is_named(cell):
    script = cell.standalone()
    text = script.read_text()
    probe_line = next(line for line in text.splitlines() if line.endswith("  ./selinux-probe"))
    script.write_text(text.replace(probe_line, "0" * 64 + "  ./selinux-probe"))
    r = cell.repro(script)
    assert r.returncode == 1, r.stderr
    assert "the payload file selinux-probe drifted" in r.stderr
    assert len(cell.qr.starts()) == 1


# --- bad input to the generator ---------------------------------------------------------------
def test_missing_celldir_is_refused(cell, tmp_path):
    r = cell.generate(celldir=tmp_path / "nope")
    one_line_error(r, "no such folder", status=2)
    assert not (tmp_path / "nope").exists()


@pytest.mark.parametrize("argv", ["not json", "[1, 2]", '{"a": 1}', "interactive", "missing"])
def test_bad_argv_is_refused_whole(cell, argv):
    if argv == "interactive":
        # no payload disk, no results port: what qemu-run.sh runs without a payload
        args = json.loads(cell.argv.read_text())
        cut = next(i for i, a in enumerate(args) if "id=payload" in a) - 1
        argv = json.dumps(args[:cut] + ["-chardev", "stdio,id=console", "-serial", "chardev:console"])
    if argv == "missing":
        cell.argv.unlink()
    else:
        cell.argv.write_text(argv)
    cell.script.write_text("old\n")
    before = sorted(os.listdir(cell.dir))
    r = cell.generate()
    one_line_error(r, "repro: error:", status=2)
    assert cell.script.read_text() == "old\n"
    assert sorted(os.listdir(cell.dir)) == before, "a temp file was left behind"


def test_argv_of_another_kernel_is_refused(cell, tmp_path):
    other = tmp_path / "other-bzImage"
    other.write_bytes(b"another kernel\n")
    args = json.loads(cell.argv.read_text())
    args[args.index("-kernel") + 1] = str(other)
    cell.argv.write_text(json.dumps(args))
    r = cell.generate()
    one_line_error(r, "not --kernel", status=2)
    assert not cell.script.exists()
