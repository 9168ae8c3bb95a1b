"""Lab trouble is not a kernel failure: a cell whose boot ran out of time or ended without
a result is booted once more, and if the trouble persists it is reported as lab trouble
(JUnit error, KTAP note, summary section), apart from the kernel's verdicts. And a run is
compared with a baseline run: new failures, fixed cells, cells still failing. Driven with
the fake qemu through the real qemu-run.sh; no kernel, no boot."""
import argparse
import json
import os
import sys

from fakeqemu import ROOT

sys.path.insert(0, ROOT)
from harness import matrix  # noqa: E402
from harness import matrixspec  # noqa: E402

CELL = ("6.1-stock", "x86_64", "selinux0")


class FakePrep:
    """Built inputs without a build: the fake qemu's kernel and image, an empty files dir."""

    def __init__(self, q):
        self.q = q

    def kernel(self, arch, tree, config):
        # laid out as build/kernel/<name>/ is: the image under KIMAGE, .config at the top
        top = self.q.tmp / "kernel"
        image = top / "arch" / "x86" / "boot" / "bzImage"
        if not image.exists():
            image.parent.mkdir(parents=True)
            image.write_bytes(self.q.kernel.read_bytes())
            (top / ".config").write_text("CONFIG_SECURITY_SELINUX=y\n")
        return str(image)

    def rootfs(self, arch):
        return str(self.q.rootfs)

    def probe(self, arch):
        d = self.q.tmp / "files"
        d.mkdir(exist_ok=True)
        return str(d)

    def accel(self, arch, image, rootfs, accel="auto"):
        return "tcg"


def run(q, monkeypatch, mode, retries, exit_status=0):
    for k, v in q.env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("FAKE_QEMU_MODE", mode)
    monkeypatch.setenv("FAKE_QEMU_EXIT", str(exit_status))
    spec = matrixspec.load(os.path.join(ROOT, "matrix.yaml"), ROOT)
    rundir = q.tmp / "run"
    rundir.mkdir(exist_ok=True)
    args = argparse.Namespace(timeout=30, retries=retries)
    return matrix.run_cell(CELL, spec, FakePrep(q), str(rundir), args), rundir


def test_no_result_is_retried_then_lab_trouble(qemu_run, monkeypatch):
    # The fake qemu ends at once without a result: qemu-run.sh says 127, twice.
    res, rundir = run(qemu_run, monkeypatch, "exit", retries=1)
    assert len(qemu_run.starts()) == 2
    assert res["outcome"] == "no-result" and res["lab"] is True
    assert res["first_try"]["outcome"] == "no-result"
    outcome = res["checks"][0]
    assert outcome["name"] == "outcome" and not outcome["pass"] and outcome["lab"]
    # written like every cell, and read back the same
    saved = json.loads((rundir / "x86_64.6.1-stock.selinux0" / "result.json").read_text())
    assert saved["lab"] is True


def test_without_retries_one_boot(qemu_run, monkeypatch):
    res, _ = run(qemu_run, monkeypatch, "exit", retries=0)
    assert len(qemu_run.starts()) == 1 and res["lab"] is True and "first_try" not in res


def test_a_result_is_the_kernels_verdict_not_lab_trouble(qemu_run, monkeypatch):
    # Negative control: the payload ran (its output has none of the observations the
    # scenario expects): one boot, the cell fails on the kernel's side, not the lab's.
    res, rundir = run(qemu_run, monkeypatch, "result", retries=1)
    assert len(qemu_run.starts()) == 1
    assert res["outcome"] == "ok" and "lab" not in res
    assert any(not c["pass"] and c["got"] == "missing" for c in res["checks"])
    # a failing cell gets its stand-alone reproducer, made from this boot's argv
    script = rundir / "x86_64.6.1-stock.selinux0" / "repro-standalone.sh"
    assert res["repro"] == "repro-standalone.sh" and script.exists()
    assert str(qemu_run.kernel) not in script.read_text()


def cell(kernel, outcome="ok", passed=True, lab=False):
    r = {"kernel": kernel, "arch": "x86_64", "scenario": "selinux0", "outcome": outcome,
         "checks": [{"name": "outcome", "expected": "ok", "got": outcome, "pass": passed}]}
    if lab:
        r["lab"] = True
    return r


def test_reports_keep_lab_trouble_apart(tmp_path):
    results = [cell("6.1-stock", "no-result", False, lab=True), cell("6.1-legacy", "ok", False)]
    results[0]["checks"][0]["lab"] = True
    matrix.write_reports(str(tmp_path), results, [])
    junit = (tmp_path / "junit.xml").read_text()
    assert junit.count("<error ") == 1 and junit.count("<failure ") == 1
    ktap = (tmp_path / "results.ktap").read_text()
    assert "not ok 1 x86_64.6.1-stock.selinux0 # lab trouble: no-result" in ktap
    assert "not ok 2 x86_64.6.1-legacy.selinux0\n" in ktap
    summary = (tmp_path / "summary.txt").read_text()
    assert "== lab trouble" in summary and "x86_64 6.1-stock selinux0: no-result" in summary


def write_run(d, results, set_name="test", started=1.0):
    d.mkdir()
    for r in results:
        c = d / f"{r['arch']}.{r['kernel']}.{r['scenario']}"
        c.mkdir()
        (c / "result.json").write_text(json.dumps(r))
    (d / "run.json").write_text(json.dumps({"set": set_name, "started": started}))


def test_baseline_compare(tmp_path):
    base = tmp_path / "before"
    write_run(base, [cell("6.1-stock"), cell("6.1-legacy", passed=False), cell("6.12", passed=False),
                     cell("6.1-patched")])
    now = [cell("6.1-stock", passed=False), cell("6.1-legacy", passed=False), cell("6.12"),
           cell("6.1-patched", "timeout", False, lab=True), cell("6.1-patched-accept")]
    ch = matrix.compare_with(str(base), now)
    assert ch["new failures"] == ["x86_64 6.1-stock selinux0"]
    assert ch["still failing"] == ["x86_64 6.1-legacy selinux0"]
    assert ch["fixed"] == ["x86_64 6.12 selinux0"]
    assert ch["lab trouble now"] == ["x86_64 6.1-patched selinux0"]
    assert ch["not in the baseline"] == ["x86_64 6.1-patched-accept selinux0"]


def test_default_baseline_is_the_last_run_of_the_same_set(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    write_run(results / "old", [cell("6.1-stock")], started=1.0)
    write_run(results / "newer", [cell("6.1-stock")], started=2.0)
    write_run(results / "other-set", [cell("6.1-stock")], set_name="default", started=3.0)
    (results / "now").mkdir()
    args = argparse.Namespace(baseline=None, results=str(results), set="test")
    assert matrix.find_baseline(args, str(results / "now")) == str(results / "newer")
    args.baseline = "none"
    assert matrix.find_baseline(args, str(results / "now")) is None


def test_kvm_only_where_a_boot_proves_it(qemu_run, monkeypatch, tmp_path):
    # auto: no device, TCG without trying; a usable device and a boot that ends, KVM; a
    # device whose 10-second boot does not end well, TCG. Said once per arch.
    for k, v in qemu_run.env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("HARNESS_KVM_DEVICE", str(tmp_path / "no-kvm"))
    prep = matrix.Prep(str(tmp_path / "build.log"))
    assert prep.accel("x86_64", str(qemu_run.kernel), str(qemu_run.rootfs)) == "tcg"
    assert qemu_run.starts() == []
    if os.uname().machine != "x86_64":
        return
    dev = tmp_path / "kvm"
    dev.write_text("")
    monkeypatch.setenv("HARNESS_KVM_DEVICE", str(dev))
    monkeypatch.setenv("FAKE_QEMU_MODE", "result")
    prep = matrix.Prep(str(tmp_path / "build.log"))
    assert prep.accel("x86_64", str(qemu_run.kernel), str(qemu_run.rootfs)) == "kvm"
    assert "-accel" in qemu_run.starts()[-1]["argv"] and "kvm" in qemu_run.starts()[-1]["argv"]
    assert prep.accel("x86_64", str(qemu_run.kernel), str(qemu_run.rootfs)) == "kvm"
    assert len(qemu_run.starts()) == 1
    assert prep.accel("arm64", str(qemu_run.kernel), str(qemu_run.rootfs)) == "tcg"
    monkeypatch.setenv("FAKE_QEMU_MODE", "exit")
    prep = matrix.Prep(str(tmp_path / "build.log"))
    assert prep.accel("x86_64", str(qemu_run.kernel), str(qemu_run.rootfs)) == "tcg"


PROGRESS = ("from harness import matrix\n"
            "matrix.Progress.update('cell 1 booting'); matrix.Progress.update('cell 2 booting')\n"
            "matrix.log('cell 2 UNEXPECTED')\n")


def test_progress_is_one_updating_line_on_a_terminal():
    import pty
    import subprocess
    master, slave = pty.openpty()
    p = subprocess.run(["/usr/bin/python3", "-c", PROGRESS], cwd=ROOT, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=slave, env=dict(os.environ, PYTHONPATH=ROOT))
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert p.returncode == 0
    text = out.decode()
    # both updates on the same line (carriage return, erase), the unexpected one on a line of its own
    assert "\r\x1b[Kcell 1 booting\r\x1b[Kcell 2 booting\r\x1b[Kcell 2 UNEXPECTED" in text
    assert "cell 1 booting\r\n" not in text


def test_progress_is_plain_lines_elsewhere():
    import subprocess
    p = subprocess.run(["/usr/bin/python3", "-c", PROGRESS], cwd=ROOT, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert p.stderr == "cell 1 booting\ncell 2 booting\ncell 2 UNEXPECTED\n"


def test_a_build_steps_progress_reaches_the_console_as_it_comes(tmp_path):
    # A cold build takes many minutes: its "[script] ..." lines are passed on while it
    # runs (the step waits until the first has been seen), every line goes to the run's
    # build log, and the step's result is its last line on stdout.
    flag = tmp_path / "seen"
    step = ("echo '[kernel.sh] arm 6.1 selinux: building' >&2; echo 'make: a line of its own' >&2; "
            f"for _ in $(seq 100); do [ -e '{flag}' ] && break; sleep 0.1; done; [ -e '{flag}' ] || exit 3; "
            "echo '[kernel.sh] arm 6.1 selinux: built in 9s' >&2; echo /not/this; echo /the/kernel")
    seen = []

    def progress(line):
        seen.append(line)
        flag.touch()
    prep = matrix.Prep(str(tmp_path / "build.log"), progress=progress)
    assert prep.get(("kernel", "arm", "6.1", "selinux"), ["bash", "-c", step]) == "/the/kernel"
    assert seen == ["[kernel.sh] arm 6.1 selinux: building", "[kernel.sh] arm 6.1 selinux: built in 9s"]
    assert (tmp_path / "build.log").read_text().splitlines() == [
        "[kernel.sh] arm 6.1 selinux: building", "make: a line of its own",
        "[kernel.sh] arm 6.1 selinux: built in 9s"]


def test_a_build_step_that_fails_or_prints_no_path_is_an_error(tmp_path):
    prep = matrix.Prep(str(tmp_path / "build.log"), progress=lambda line: None)
    fail = "echo '[kernel.sh] building' >&2; echo 'kernel.sh: error: no space left' >&2; exit 1"
    for key, step, why in ((("kernel", "a"), fail, "kernel.sh: error: no space left"),
                           (("rootfs", "a"), "echo '[build.sh] done' >&2", "printed no path")):
        try:
            prep.get(key, ["bash", "-c", step])
        except RuntimeError as e:
            assert why in str(e)
        else:
            raise AssertionError(f"{key}: no error")
