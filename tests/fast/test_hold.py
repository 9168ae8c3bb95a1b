"""harness/hold.py, on the captured real cells of tests/fast/data/pipeline/run: a kernel's
cells held to another kernel's expected values.

- the legacy cells held to 6.1-patched's values fail, each naming what differs (the node's
  answers; the freeze where 6.1-patched boots on);
- the positive control: 6.1-patched's cells held to their own values all pass, and a
  probe failure a cell recorded still fails it;
- a scenario the other kernel does not run is left out, and said;
- bad input (an unknown kernel, no folder, no cell of the kernel): one line, exit 2.
"""
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from harness import hold  # noqa: E402
from cellfiles import call_main, edit_result  # noqa: E402

DATA = os.path.join(ROOT, "tests", "fast", "data", "pipeline")
RUN = os.path.join(DATA, "run")
MATRIX = os.path.join(DATA, "matrix.yaml")


def held(*args, run=RUN):
    return call_main(hold.main, run, "--matrix", MATRIX, *args)


def lines_of(out):
    return dict(line.split(": ", 1) for line in out.splitlines() if not line.startswith("hold: "))


def test_legacy_held_to_the_patched_values_fails_every_cell():
    rc, out, err = held("--kernel", "6.1-legacy", "--as", "6.1-patched")
    assert (rc, err) == (0, "")
    cells = lines_of(out)
    assert sorted(cells) == ["x86_64.6.1-legacy.cfg-disabled", "x86_64.6.1-legacy.enforcing-disabled"]
    node = cells["x86_64.6.1-legacy.cfg-disabled"]
    assert not node.startswith("0 of ") and " write.one " in f" {node} ", node
    # legacy froze: held to a kernel that boots on, its outcome is the one check
    assert cells["x86_64.6.1-legacy.enforcing-disabled"] == "1 of 1 checks fail: outcome"
    assert out.splitlines()[-1].startswith("hold: 6.1-legacy held to 6.1-patched's expected values: 2 of 2 cells fail, ")


def test_a_kernel_held_to_its_own_values_passes_and_a_probe_failure_still_counts(tmp_path):
    rc, out, err = held("--kernel", "6.1-patched", "--as", "6.1-patched")
    assert (rc, err) == (0, "")
    assert len(lines_of(out)) == 6 and all(v.startswith("0 of ") for v in lines_of(out).values()), out
    assert out.splitlines()[-1] == "hold: 6.1-patched held to 6.1-patched's expected values: 0 of 6 cells fail, 0 checks"
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    edit_result(run / "x86_64.6.1-patched.cfg-disabled",
                lambda r: r["checks"].append({"name": "probe", "expected": "ok", "got": "not ok 3 write", "pass": False}))
    rc, out, _ = held("--kernel", "6.1-patched", "--as", "6.1-patched", run=run)
    assert lines_of(out)["x86_64.6.1-patched.cfg-disabled"].endswith("checks fail: probe"), out


def test_a_scenario_the_other_kernel_does_not_run_is_left_out():
    rc, out, err = held("--kernel", "6.1-patched", "--as", "6.1-legacy")
    assert rc == 0
    assert err == "hold: x86_64.6.1-patched.enforcing-disabled-switch: left out, 6.1-legacy does not run its scenario\n"
    assert "x86_64.6.1-patched.enforcing-disabled-switch" not in lines_of(out)


def test_bad_input_is_one_line(tmp_path):
    empty = tmp_path / "run"
    shutil.copytree(os.path.join(RUN, "x86_64.6.1-stock.cfg-disabled"), empty / "x86_64.6.1-stock.cfg-disabled")
    for args, run, why in ((("--kernel", "6.1-nope", "--as", "6.1-patched"), RUN, "unknown kernel '6.1-nope'"),
                           (("--kernel", "6.1-legacy", "--as", "6.1-patched"), tmp_path / "none", "no such folder"),
                           (("--kernel", "6.1-legacy", "--as", "6.1-patched"), empty, "no cell of kernel '6.1-legacy'"),
                           (("--kernel", "6.1-legacy"), RUN, "the following arguments are required: --as")):
        rc, out, err = held(*args, run=run)
        assert (rc, out, len(err.splitlines())) == (2, "", 1) and why in err, (args, err)
