"""The arch model (harness/arch.py): every data file loads, an arch that boots has its lean
config fragment, names are plain names only, and the shell form round-trips through bash."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from harness import arch  # noqa: E402


def test_every_arch_loads():
    names = arch.names()
    assert "x86_64" in names and "arm64" in names and "riscv64" in names
    for n in names:
        a = arch.load(n)
        assert a.karch and a.defconfig and a.deb_arch


def test_booted_arches_have_their_facts_and_fragment():
    boot = arch.names(boot=True)
    assert {"x86_64", "arm64"} <= set(boot)
    for n in boot:
        a = arch.load(n)
        assert a.kimage and a.boot.qemu and a.boot.console and a.boot.virtio in arch.VIRTIO
        assert os.path.isfile(os.path.join(ROOT, "configs", "arch", n + ".config")), n


@pytest.mark.parametrize("bad", ["../../x", "x86_64/../arm64", "", "X86", "x86_64.yaml", "a b"])
def test_names_are_plain(bad):
    with pytest.raises(arch.ArchError):
        arch.load(bad)


def test_unknown_arch_names_the_choices():
    with pytest.raises(arch.ArchError, match=r"unknown arch 'sparc9' \(one of: .*x86_64"):
        arch.load("sparc9")


def test_missing_key_is_named(tmp_path, monkeypatch):
    (tmp_path / "broken.yaml").write_text("deb_arch: amd64\nbuild: {karch: x86}\n")
    monkeypatch.setenv("HARNESS_ARCH_DIR", str(tmp_path))
    with pytest.raises(arch.ArchError, match=r"broken.yaml: missing check"):
        arch.load("broken")


def test_shell_form_round_trips_through_bash():
    out = subprocess.run(["bash", "-c", 'eval "$(/usr/bin/python3 -m harness.arch shell arm64)"; '
                          'printf "%s|%s|%s" "$QEMU_CPU" "$KIMAGE" "$CROSS_COMPILE"'],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out == "max,pauth-impdef=on|arch/arm64/boot/Image|aarch64-linux-gnu-"


def test_shell_form_refuses_bad_name_with_one_line():
    p = subprocess.run([sys.executable, "-m", "harness.arch", "shell", "../x"], cwd=ROOT,
                       capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1


def test_qemu_run_refuses_an_arch_without_boot_facts():
    p = subprocess.run([os.path.join(ROOT, "qemu-run.sh"), "--arch", "riscv64", "--kernel", "x",
                        "--rootfs", "y", "--exec", "true"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 125
    assert p.stderr.splitlines() == [
        "qemu-run.sh: error: arch 'riscv64' has no boot facts in configs/arch/riscv64.yaml "
        "(it is built by make arch-check only)"]


@pytest.mark.parametrize("timeouts,want", [
    ("", r"missing boot.timeouts.boot"),
    ("  timeouts: {boot: 0, payload: 60}\n", r"boot.timeouts.boot must be 1 to 43200"),
    ("  timeouts: {boot: 60, payload: soon}\n", r"boot.timeouts.payload must be a whole number"),
])
def test_boot_timeouts_are_required_and_bounded(tmp_path, monkeypatch, timeouts, want):
    # A booted arch says how long its boot and payload may take: the runner tells lab
    # trouble (a stage past its time) from a kernel's verdict by them.
    text = open(os.path.join(ROOT, "configs", "arch", "x86_64.yaml")).read()
    head, _, rest = text.partition("  timeouts:\n")
    rest = rest.split("\n", 2)[2]
    (tmp_path / "t.yaml").write_text(head + timeouts + rest)
    monkeypatch.setenv("HARNESS_ARCH_DIR", str(tmp_path))
    with pytest.raises(arch.ArchError, match=want):
        arch.load("t")


def test_boot_timeouts_reach_the_shell():
    a = arch.load("x86_64")
    assert f"BOOT_TIMEOUT={a.boot.boot_timeout}\n" in a.shell()
    assert f"PAYLOAD_TIMEOUT={a.boot.payload_timeout}\n" in a.shell()


@pytest.mark.parametrize("line,want", [
    ("", "PAYLOAD_DISK=blk\n"),
    ("  payload_disk: scsi\n", "PAYLOAD_DISK=scsi\n"),
    ("  payload_disk: nvme\n", "boot.payload_disk must be one of blk, scsi"),
])
def test_payload_disk_defaults_to_virtio_blk_and_is_checked(tmp_path, monkeypatch, line, want):
    shell_or_refusal(tmp_path, monkeypatch, line, want)


def shell_or_refusal(tmp_path, monkeypatch, line, want):
    """x86_64's data file with one boot line added: want is a line of its shell form
    (KEY=value) or the start of the refusal."""
    text = open(os.path.join(ROOT, "configs", "arch", "x86_64.yaml")).read()
    head, sep, rest = text.partition("  virtio: pci\n")
    assert sep, "x86_64.yaml no longer has 'virtio: pci' where this test adds a line"
    (tmp_path / "t.yaml").write_text(head + sep + line + rest)
    monkeypatch.setenv("HARNESS_ARCH_DIR", str(tmp_path))
    if re.match(r"^[A-Z_]+=", want):
        assert want in arch.load("t").shell()
    else:
        with pytest.raises(arch.ArchError, match=want):
            arch.load("t")


@pytest.mark.parametrize("line,want", [
    ("", "QEMU_SMP=2\n"),
    ("  smp: 1\n", "QEMU_SMP=1\n"),
    ("  smp: 0\n", "boot.smp must be 1 or 2"),
    ("  smp: 3\n", "boot.smp must be 1 or 2"),
    ("  smp: true\n", "boot.smp must be a whole number"),
    ("  smp: two\n", "boot.smp must be a whole number"),
])
def test_smp_defaults_to_two_and_is_checked(tmp_path, monkeypatch, line, want):
    # the vCPUs qemu-run.sh gives the guest; Malta (mips64el) boots the kernel on each
    shell_or_refusal(tmp_path, monkeypatch, line, want)


def test_a_data_file_rewritten_is_read_again(tmp_path, monkeypatch):
    # arch.load keeps what it parsed of a file for the process; a file that changed is
    # parsed again, even at the same size (the read before is the control: the other value)
    with open(os.path.join(ROOT, "configs", "arch", "x86_64.yaml")) as f:
        text = f.read()
    monkeypatch.setenv("HARNESS_ARCH_DIR", str(tmp_path))
    for smp in (2, 1):
        (tmp_path / "t.yaml").write_text(text.replace("  virtio: pci\n", f"  virtio: pci\n  smp: {smp}\n"))
        assert arch.load("t").boot.smp == smp


def test_a_tab_as_spacing_is_refused(tmp_path, monkeypatch):
    # libyaml would take it as spacing, the pure-Python parser refuses it: a file with a
    # tab is left to the latter
    with open(os.path.join(ROOT, "configs", "arch", "x86_64.yaml")) as f:
        text = f.read()
    monkeypatch.setenv("HARNESS_ARCH_DIR", str(tmp_path))
    (tmp_path / "t.yaml").write_text(text.replace("  virtio: pci\n", "  virtio: pci\t\n"))
    with pytest.raises(arch.ArchError, match="t.yaml: not valid YAML"):
        arch.load("t")


def test_every_data_file_reads_as_the_python_reader_reads_it():
    # the data files are read with libyaml where harness/yamlread.py allows; SafeLoader, the
    # pure-Python reader, is the reference
    import yaml
    from harness import yamlread
    fast = yamlread.twin(yaml.SafeLoader)
    assert fast is not None, "python3-yaml without libyaml: the fast reader is not used"
    for name in arch.names():
        with open(os.path.join(ROOT, "configs", "arch", name + ".yaml"), encoding="utf-8") as f:
            text = f.read()
        assert yamlread.load(text, yaml.SafeLoader, fast) == yaml.safe_load(text), name
    # an alias (libyaml gives the anchored node itself) reads the same, through SafeLoader;
    # the control: a changed text is seen
    text = "a: &x {b: [1, 2]}\nc: *x\n"
    assert yamlread.load(text, yaml.SafeLoader, fast) == {"a": {"b": [1, 2]}, "c": {"b": [1, 2]}}
    assert yamlread.load(text.replace("2]", "3]"), yaml.SafeLoader, fast) != yaml.safe_load(text)
