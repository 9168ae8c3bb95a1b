"""The comparison of two run folders (harness/compare.py), the check that make ci-local's
merged folder holds what make matrix found, on captured real cells
(tests/fast/data/pipeline/run: 20 cells of the set test, see its README):

- a copy of the run compares equal to it, also when everything a second run changes anyway
  (times, paths, harness messages, the run's own files) differs; a merge of the run's
  shards compares equal to the run;
- negative controls, each reported by one line naming the cell, exit 1: a changed
  observation, a changed verdict, a changed expected value, a missing cell, an extra cell;
- a slice compares only its cells, and each must be in both;
- bad input (no folder, a folder without cells, an unknown slice): one line, exit 2.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from harness import compare  # noqa: E402
from harness import merge  # noqa: E402
from harness import pipeline  # noqa: E402
from cellfiles import call_main, edit_result  # noqa: E402

DATA = os.path.join(ROOT, "tests", "fast", "data", "pipeline")
MATRIX = os.path.join(DATA, "matrix.yaml")
CELL = "x86_64.6.1-patched.cfg-disabled"
ARM64 = ("arm64.6.1-patched.cfg-disabled", "arm64.6.1-patched.enforcing-disabled")


def main(module, *args):
    return call_main(module.main, *args)


def edit(run, cell, change):
    edit_result(os.path.join(run, cell), change)


@pytest.fixture
def runs(tmp_path):
    """Two copies of the captured run: A and B."""
    return [shutil.copytree(os.path.join(DATA, "run"), tmp_path / x) for x in ("a", "b")]


def totals(run):
    """(observations, checks) of every cell of a run."""
    obs = checks = 0
    for cell in os.listdir(run):
        with open(os.path.join(run, cell, "result.json")) as f:
            r = json.load(f)
        obs, checks = obs + len(r.get("observed", {})), checks + len(r["checks"])
    return obs, checks


def differs(rc, out, err, lines):
    assert rc == 1, err
    assert out.splitlines() == lines
    assert err.startswith(f"compare: {len(lines)} differences")


def test_a_copy_compares_equal(runs):
    a, b = runs
    rc, out, err = main(compare, a, b)
    obs, checks = totals(a)
    assert rc == 0, out + err
    assert out == f"compare: 20 cells, {obs} observations and {checks} checks the same in {a} and {b}\n"


def test_what_differs_between_any_two_runs_is_not_compared(runs):
    """Times, paths and messages: a second run of the same cells on another machine."""
    a, b = runs
    for cell in os.listdir(b):
        def rerun(r):
            r.update(seconds=r.get("seconds", 0) + 99.5, start=1.0, boot_start=2.0, boot_seconds=3.0,
                     timeouts={"boot": 1, "total": 2}, harness=f"qemu-run.sh: log: /elsewhere/{cell}/console.log")
        edit(b, cell, rerun)
        with open(os.path.join(b, cell, "console.log"), "w") as f:
            f.write("another console\n")
    for f, text in (("run.json", '{"set": "test", "started": 5, "seconds": 7, "builds": [], "agree": []}'),
                    ("summary.txt", "another run\n"), ("build.log", "== /elsewhere\n")):
        with open(os.path.join(b, f), "w") as out:
            out.write(text)
    rc, out, err = main(compare, a, b)
    assert rc == 0, out + err


def test_a_merge_of_the_runs_shards_compares_equal(runs, tmp_path):
    """The comparison make ci-local's check makes, in small: shards merged against one run."""
    a, _ = runs
    cells = sorted(os.listdir(a))
    triples = [(c.split(".", 1)[1].rsplit(".", 1)[0], c.split(".", 1)[0], c.rsplit(".", 1)[1]) for c in cells]
    shards = []
    for i in (1, 2):
        d = tmp_path / f"shard-{i}"
        for k, arch, s in pipeline.shard(triples, i, 2):
            shutil.copytree(os.path.join(a, f"{arch}.{k}.{s}"), d / f"{arch}.{k}.{s}")
        shards.append(d)
    rc, out, err = main(merge, *shards, "-o", tmp_path / "merged", "--matrix", MATRIX)
    assert rc == 0, err
    rc, out, err = main(compare, tmp_path / "merged", a)
    assert rc == 0 and out.startswith("compare: 20 cells,"), out + err


def test_a_changed_observation_is_reported(runs):
    a, b = runs
    edit(b, CELL, lambda r: r["observed"].update({"mounted.lsm": "capability"}))
    differs(*main(compare, a, b), [f"{CELL}: observed mounted.lsm: A 'capability,selinux', B 'capability'"])


def test_an_observation_only_one_run_made_is_reported(runs):
    a, b = runs
    edit(b, CELL, lambda r: r["observed"].pop("write.big"))
    differs(*main(compare, a, b), [f"{CELL}: observed write.big: A 'EINVAL', B (none)"])


def test_a_changed_verdict_is_reported(runs):
    a, b = runs

    def fail(r):
        next(c for c in r["checks"] if c["name"] == "write.one")["pass"] = False
    edit(b, CELL, fail)
    differs(*main(compare, a, b), [f"{CELL}: check write.one: verdict A pass, B fail"])


def test_a_changed_expected_value_is_reported(runs):
    a, b = runs

    def expect(r):
        next(c for c in r["checks"] if c["name"] == "write.one")["expected"] = "count"
    edit(b, CELL, expect)
    differs(*main(compare, a, b), [f"{CELL}: check write.one: expected A 'EINVAL', B 'count'"])


def test_a_changed_outcome_is_reported(runs):
    """Lab trouble in one run: the outcome, the observations it did not make, its verdict."""
    a, b = runs
    cell = "x86_64.6.12.enforcing-disabled"  # a freeze: no observation in either run

    def timeout(r):
        r.update(outcome="timeout", lab=True)
        r["checks"] = [{"name": "outcome", "expected": "freeze", "got": "timeout", "pass": False, "lab": True}]
    edit(b, cell, timeout)
    differs(*main(compare, a, b), [f"{cell}: outcome: A 'freeze', B 'timeout'",
                                   f"{cell}: check outcome: got A 'freeze', B 'timeout'",
                                   f"{cell}: check outcome: verdict A pass, B lab trouble"])


def test_a_missing_cell_is_reported(runs):
    a, b = runs
    shutil.rmtree(os.path.join(b, CELL))
    differs(*main(compare, a, b), [f"{CELL}: only in A"])


def test_an_extra_cell_is_reported(runs):
    a, b = runs
    extra = "x86_64.6.1-patched.permissive"
    shutil.copytree(os.path.join(b, CELL), os.path.join(b, extra))
    edit(b, extra, lambda r: r.update(scenario="permissive"))
    differs(*main(compare, a, b), [f"{extra}: only in B"])


def test_a_slice_compares_its_cells_only(runs):
    """make test's run holds every arch; make ci-local's, one: the slice is what they share."""
    a, b = runs
    for cell in ARM64:
        shutil.rmtree(os.path.join(a, cell))
    rc, out, err = main(compare, a, b, "--set", "test", "--only", "arch=x86_64", "--matrix", MATRIX)
    assert rc == 0 and out.startswith("compare: 18 cells,"), out + err
    # Without the slice, the arm64 cells are B's alone.
    differs(*main(compare, a, b), [f"{c}: only in B" for c in ARM64])
    # A cell of the slice missing from one run is a difference.
    shutil.rmtree(os.path.join(a, CELL))
    differs(*main(compare, a, b, "--set", "test", "--only", "arch=x86_64", "--matrix", MATRIX),
            [f"{CELL}: only in B"])


@pytest.mark.parametrize("args, words", [
    (["{tmp}/nothere", "{a}"], "nothere: no such folder"),
    (["{tmp}/empty", "{a}"], "empty: not a results folder"),
    (["{a}", "{b}", "--set", "test", "--only", "arch=vax", "--matrix", MATRIX], "unknown arch 'vax'"),
    (["{a}", "{b}", "--set", "nosuchset", "--matrix", MATRIX], "unknown set 'nosuchset'"),
    (["{a}", "{b}", "--only", "arch=x86_64"], "--only needs --set"),
])
def test_bad_input_is_one_line(runs, tmp_path, args, words):
    a, b = runs
    (tmp_path / "empty").mkdir()
    args = [x.format(tmp=tmp_path, a=a, b=b) for x in args]
    p = subprocess.run([sys.executable, "-m", "harness.compare", *args], cwd=ROOT, capture_output=True, text=True,
                       timeout=60, env=dict(os.environ, PYTHONPATH=ROOT))
    assert p.returncode == 2, p.stderr
    assert p.stdout == "" and len(p.stderr.splitlines()) == 1, p.stderr
    assert p.stderr.startswith("compare: error: ") and words in p.stderr, p.stderr


def test_a_broken_result_is_bad_input(runs):
    a, b = runs
    with open(os.path.join(b, CELL, "result.json"), "w") as f:
        f.write("{")
    rc, out, err = main(compare, a, b)
    assert rc == 2 and out == "" and "not valid JSON" in err and len(err.splitlines()) == 1, err
