"""The KCIDB export (harness/kcidb.py) of a run made from real captured results (verify4:
five x86_64 cells of cfg-disabled, tests/fast/data/kcidb-verify4): it validates against the
kept schema with Debian's python3-jsonschema, and the validation can fail; lab trouble is
ERROR or MISS, never FAIL; the patchset hash is the schema's, computed here by the shell
command the schema gives; bad input is one line, exit 2 and no kcidb.json."""
import contextlib
import copy
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import jsonschema
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from harness import kcidb  # noqa: E402
from cellfiles import edit_result  # noqa: E402

DATA = os.path.join(ROOT, "tests", "fast", "data")
PATCHED = "x86_64.6.1-patched.cfg-disabled"
CELLS = 5
CHECKS_PER_CELL = 24  # cfg-disabled: the outcome and 23 observations
AGREE = 2


@pytest.fixture
def run(tmp_path):
    """A copy of the captured run, free to change."""
    return shutil.copytree(os.path.join(DATA, "kcidb-verify4"), tmp_path / "verify4")


def cli(*args):
    """The command as a user runs it."""
    return subprocess.run([sys.executable, "-m", "harness.kcidb", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def export(rundir, *args):
    """The same command in this process (a third of a second less per export)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = kcidb.main([str(rundir), *args])
        except SystemExit as e:  # argparse's refusal
            rc = e.code
    return subprocess.CompletedProcess(args, rc, out.getvalue(), err.getvalue())


def exported(rundir, *args):
    p = export(rundir, *args)
    assert p.returncode == 0, p.stderr
    with open(p.stdout.splitlines()[-1]) as f:
        return json.load(f)


def edit_cell(rundir, cell, change):
    edit_result(os.path.join(rundir, cell), change)


def cell_tests_in(doc, cell):
    return [t for t in doc["tests"] if t["id"].split("/")[1] == cell]


def schema():
    with open(kcidb.SCHEMA) as f:
        return json.load(f)


def strict_validator():
    """Upstream's way: the draft 7 validator with its format checker (uri and date-time
    included even where Debian lacks their modules)."""
    return jsonschema.Draft7Validator(schema(), format_checker=kcidb.format_checker())


# --- (a) the export validates ------------------------------------------------------------------

def test_export_validates_against_the_kept_schema(run):
    p = cli(run)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == os.path.join(str(run), "kcidb.json")
    with open(run / "kcidb.json") as f:
        doc = json.load(f)
    jsonschema.Draft7Validator.check_schema(schema())
    strict_validator().validate(doc)
    assert kcidb.problems(doc) == []
    assert doc["version"] == {"major": 5, "minor": 3}
    assert (len(doc["checkouts"]), len(doc["builds"]), len(doc["tests"])) == (3, 5, CELLS * CHECKS_PER_CELL + AGREE)
    assert {t["status"] for t in doc["tests"]} == {"PASS"}
    assert "3 checkouts, 5 builds, 122 tests (122 PASS)" in p.stderr


def test_objects_link_up(run):
    doc = exported(run)
    checkouts = {c["id"] for c in doc["checkouts"]}
    builds = {b["id"]: b for b in doc["builds"]}
    assert all(b["checkout_id"] in checkouts for b in builds.values())
    assert all(t["build_id"] in builds for t in doc["tests"])
    assert len({t["id"] for t in doc["tests"]}) == len(doc["tests"])
    patched = next(b for b in builds.values() if b["misc"]["kernels"] == ["6.1-patched"])
    assert (patched["architecture"], patched["config_name"], patched["status"], patched["duration"]) == \
        ("x86_64", "selinux", "PASS", 11)  # build.log: "x86_64 6.1-patched selinux: built in 11s"
    assert patched["checkout_id"].endswith("/checkout/6.1-patched")
    one = next(t for t in doc["tests"] if t["id"].endswith(PATCHED + "/write.one"))
    assert (one["path"], one["build_id"], one["misc"]["got"]) == \
        ("selinux.cfg-disabled.write.one", patched["id"], "EINVAL")
    assert one["environment"]["misc"] == {"arch": "x86_64", "kernel": "6.1-patched"}
    agree = [t for t in doc["tests"] if ".agree." in t["path"]]
    assert sorted(t["path"] for t in agree) == \
        ["selinux.cfg-disabled.agree.6_1-stock", "selinux.cfg-disabled.agree.6_12"]
    # On the build held to the reference; the reference's build named beside it.
    stock = next(t for t in agree if t["path"].endswith("6_1-stock"))
    assert stock["build_id"] == patched["id"] and stock["misc"]["reference_build_id"].endswith("/x86_64/6.1/selinux")


def test_times_parse_and_urls_name_no_host(run):
    started = 1764957974.25
    edit_cell(run, PATCHED, lambda r: r.update(start=started))
    doc = exported(run)
    text = json.dumps(doc)
    for t in re.findall(r'"(?:start_time)": "([^"]+)"', text):
        assert kcidb._is_date_time(t), t
    assert next(c for c in doc["checkouts"] if c["id"].endswith("6.1-patched"))["start_time"] == \
        "2025-12-05T18:06:14.250+00:00"
    urls = re.findall(r'"(?:url|log_url|config_url)": "([^"]+)"', text)
    assert urls and all(u.startswith("file:") and not re.match(r"file://[^/]", u) for u in urls)


# --- (b) the validation can fail, and lab trouble is not a kernel failure -------------------------

def _set(path, value):
    def change(doc):
        *head, last = path
        target = doc
        for k in head:
            target = target[k]
        if value is KeyError:
            del target[last]
        else:
            target[last] = value
    return change


@pytest.mark.parametrize("change", [
    _set(("tests", 0, "status"), "BROKEN"),
    _set(("tests", 0, "status"), "pass"),
    _set(("tests", 0, "id"), KeyError),
    _set(("tests", 0, "build_id"), KeyError),
    _set(("builds", 0, "checkout_id"), KeyError),
    _set(("checkouts", 0, "id"), "no-origin-prefix"),
    _set(("tests", 0, "origin"), "Selinux-RO"),
    _set(("tests", 0, "path"), "selinux..write"),
    _set(("tests", 0, "log_excerpt"), "x" * (kcidb.EXCERPT_MAX + 1)),
    _set(("checkouts", 1, "patchset_hash"), "0" * 63),
    _set(("builds", 0, "status"), None),
    _set(("version", "major"), 4),
    _set(("tests", 0, "log_url"), "results/verify4/console.log"),
    _set(("tests", 0, "start_time"), "yesterday"),
], ids=["status-word", "status-case", "test-id", "build-id", "checkout-id", "id-prefix", "origin",
        "path", "excerpt-length", "patchset-hash", "null", "major", "uri", "date-time"])
def test_a_broken_document_fails_validation(run, change):
    doc = exported(run)
    doc["tests"][0]["start_time"] = "2026-12-05T18:06:14.000+00:00"  # so there is one to break
    strict_validator().validate(doc)
    bad = copy.deepcopy(doc)
    change(bad)
    assert kcidb.problems(bad)
    with pytest.raises(jsonschema.ValidationError):
        strict_validator().validate(bad)


def timed_out(res):
    # As matrix.py writes a boot that ran out of time: the outcome check alone.
    res.update(outcome="timeout", observed={}, harness="qemu-run.sh: timeout after 300s",
               checks=[{"name": "outcome", "expected": "ok", "got": "timeout", "pass": False}])


def test_an_unexpected_timeout_is_error_not_fail(run):
    edit_cell(run, PATCHED, timed_out)
    doc = exported(run)
    strict_validator().validate(doc)
    [t] = cell_tests_in(doc, PATCHED)
    assert (t["path"], t["status"]) == ("selinux.cfg-disabled.outcome", "ERROR")
    with open(run / PATCHED / "console.log") as f:
        last = f.read().splitlines()[-1]
    assert t["log_excerpt"].endswith(last) and len(t["log_excerpt"]) <= kcidb.EXCERPT_MAX
    assert t["misc"]["harness"].startswith("qemu-run.sh: timeout")
    # The agree check against stock compared a boot that never ended: no verdict either.
    stock = next(x for x in doc["tests"] if x["path"].endswith("agree.6_1-stock"))
    assert stock["status"] == "ERROR"
    assert "FAIL" not in {x["status"] for x in doc["tests"]}


@pytest.mark.parametrize("expected,got,status", [
    ("ok", "timeout", "ERROR"), ("ok", "no-result", "ERROR"), ("freeze", "timeout", "ERROR"),
    ("ok", "harness-error", "MISS"), ("ok", "build-error", "MISS"),
    ("ok", "freeze", "FAIL"), ("freeze", "ok", "FAIL"), ("ok", "kernel-problem", "FAIL"), ("ok", "exit-1", "FAIL"),
    ("freeze", "freeze", "PASS"), ("ok", "ok", "PASS"),
])
def test_outcome_status(expected, got, status):
    check = {"name": "outcome", "expected": expected, "got": got, "pass": expected == got}
    assert kcidb.outcome_status(check) == status


def test_an_expected_freeze_stays_a_verdict(run):
    cell = run / "x86_64.6.12.enforcing-disabled"
    cell.mkdir()
    shutil.copy(os.path.join(DATA, "kcidb-freeze-result.json"), cell / "result.json")
    [t] = cell_tests_in(exported(run), cell.name)
    assert (t["status"], t["duration"], t["build_id"].endswith("/x86_64/6.12/selinux")) == ("PASS", 20.9, True)
    assert "Freezing execution" in t["misc"]["harness"]


def test_excerpt_is_bounded_and_clean(run):
    # A console of long lines with NULs and carriage returns, as a wedged guest leaves it.
    (run / PATCHED / "console.log").write_bytes(b"".join(b"line %d \0 " % i + b"x" * 900 + b"\r\n" for i in range(200)))
    edit_cell(run, PATCHED, timed_out)
    doc = exported(run)
    [t] = cell_tests_in(doc, PATCHED)
    ex = t["log_excerpt"]
    assert 0 < len(ex) <= kcidb.EXCERPT_MAX and "\0" not in ex and "\r" not in ex
    assert ex.startswith("line ") and ex.endswith("x" * 900)  # whole lines, the last one last
    strict_validator().validate(doc)


def test_an_export_that_breaks_the_schema_is_not_written(run, monkeypatch):
    monkeypatch.setattr(kcidb, "node", lambda name: name + "..")  # paths the schema refuses
    p = export(run)
    assert p.returncode == 1 and p.stdout == "" and len(p.stderr.splitlines()) == 1
    assert "breaks harness/schema/kcidb-v5.3.json" in p.stderr and "/path" in p.stderr
    assert [n for n in os.listdir(run) if "kcidb" in n] == []


def test_wrong_values_fail_and_unobserved_ones_are_errors(run):
    def change(res):
        for c in res["checks"]:
            if c["name"] == "write.one":
                c.update(got="count", **{"pass": False})
            if c["name"] == "write.zero":
                c.update(got="missing", **{"pass": False})
        res["checks"] += [{"name": "probe", "expected": "ok", "got": f"not ok {i} hooks", "pass": False}
                          for i in (1, 2)]
    edit_cell(run, PATCHED, change)
    doc = exported(run)
    by = {t["id"].rsplit("/", 1)[1]: t for t in cell_tests_in(doc, PATCHED)}
    assert by["write.one"]["status"] == "FAIL"
    assert by["write.one"]["comment"] == "write.one: expected 'EINVAL', got 'count'"
    assert by["write.one"]["log_excerpt"]
    assert by["write.zero"]["status"] == "ERROR"
    assert (by["probe"]["status"], by["probe~2"]["status"]) == ("ERROR", "ERROR")


def test_a_cell_without_result_json_is_missed(run):
    # matrix.py writes no result.json for a cell whose build failed; junit.xml has its outcome.
    (run / "x86_64.6.1-stock.permissive").mkdir()
    junit = ET.parse(run / "junit.xml")
    ts = ET.SubElement(junit.getroot(), "testsuite", name="x86_64.6.1-stock.permissive")
    tc = ET.SubElement(ts, "testcase", name="outcome")
    ET.SubElement(tc, "failure", message="expected 'ok', got 'build-error'")
    junit.write(run / "junit.xml")
    (run / "x86_64.6.12.permissive").mkdir()  # and one the run never finished
    doc = exported(run)
    [built] = cell_tests_in(doc, "x86_64.6.1-stock.permissive")
    [unfinished] = cell_tests_in(doc, "x86_64.6.12.permissive")
    assert (built["status"], built["misc"]["got"]) == ("MISS", "build-error")
    assert (unfinished["status"], unfinished["misc"]["got"]) == ("ERROR", "no-result")


def test_run_json_gives_builds_and_agree_checks(run):
    out = os.path.join(ROOT, "build", "kernel", "6.1-patched-x86_64-selinux")
    builds = [{"tree": "6.1-patched", "config": "selinux", "arch": "x86_64", "status": "ok", "start": 1764957974.0,
               "seconds": 612.5, "compiler": "x86_64-linux-gnu-gcc-12 (Debian 12.2.0-14) 12.2.0",
               "image": os.path.join(out, "arch/x86/boot/bzImage"), "config_file": os.path.join(out, ".config")},
              {"tree": "6.12", "config": "selinux", "arch": "x86_64", "status": "fail", "start": 1764958000.0,
               "seconds": 3.0, "compiler": None, "image": None, "config_file": None}]
    agree = [{"name": "6.1-patched == 6.1-stock on x86_64 cfg-disabled", "pass": False,
              "diff": ["write.one: 'EINVAL' != 'count'"], "compared": 25}]
    with open(run / "run.json", "w") as f:
        json.dump({"set": "default", "started": 1764957970.0, "seconds": 900.0, "agree": agree,
                   "builds": builds, "jobs": []}, f)
    doc = exported(run)
    strict_validator().validate(doc)
    b = {x["misc"]["kernels"][0]: x for x in doc["builds"]}
    p = b["6.1-patched"]
    assert (p["compiler"], p["duration"], p["start_time"]) == \
        (builds[0]["compiler"], 612.5, "2025-12-05T18:06:14.000+00:00")
    assert p["config_url"] == "file:build/kernel/6.1-patched-x86_64-selinux/.config"
    assert p["output_files"] == [{"name": "bzImage",
                                  "url": "file:build/kernel/6.1-patched-x86_64-selinux/arch/x86/boot/bzImage"}]
    assert b["6.12"]["status"] == "FAIL" and "compiler" not in b["6.12"]
    [a] = [t for t in doc["tests"] if ".agree." in t["path"]]
    assert (a["status"], a["log_excerpt"], a["misc"]["compared"]) == ("FAIL", "write.one: 'EINVAL' != 'count'", 25)


# --- (c) the patchset hash --------------------------------------------------------------------------

def test_patchset_hash_is_the_schemas(run):
    doc = exported(run)
    c = {x["misc"]["matrix_tree"]: x for x in doc["checkouts"]}
    series = os.path.join(ROOT, "patches", "6.1")
    # The schema's own recipe, over the mails in series order rather than glob order.
    want = subprocess.run("sha256sum $(grep -v '^#' series) | cut -c-64 | sha256sum | cut -c-64", shell=True,
                          cwd=series, capture_output=True, text=True, check=True).stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{64}", want)
    assert c["6.1-patched"]["patchset_hash"] == want
    with open(os.path.join(series, "series")) as f:
        names = [n.strip() for n in f if n.strip() and not n.startswith("#")]
    assert [x["name"] for x in c["6.1-patched"]["patchset_files"]] == names
    assert c["6.1-patched"]["patchset_files"][0]["url"] == "file:patches/6.1/" + names[0]
    assert c["6.1"]["patchset_hash"] == c["6.12"]["patchset_hash"] == ""
    assert all("git_commit_hash" not in x and "git_repository_url" not in x for x in c.values())


def test_patchset_hash_depends_on_order(tmp_path):
    a, b = tmp_path / "a.patch", tmp_path / "b.patch"
    a.write_text("one\n")
    b.write_text("two\n")
    inner = "".join(hashlib.sha256(p.read_bytes()).hexdigest() + "\n" for p in (a, b))
    assert kcidb.patchset_hash([a, b]) == hashlib.sha256(inner.encode()).hexdigest()
    assert kcidb.patchset_hash([a, b]) != kcidb.patchset_hash([b, a])


# --- (d) bad input ----------------------------------------------------------------------------------

def _write(cell, text):
    def make(run):
        with open(run / cell / "result.json", "w") as f:
            f.write(text)
    return make


def _edit(change):
    return lambda run: edit_cell(run, PATCHED, change)


def _nothing(run):
    for d in run.iterdir():
        if d.is_dir():
            shutil.rmtree(d)


def _rename_kernel(run):
    new = run / "x86_64.6.1-nosuch.cfg-disabled"
    (run / PATCHED).rename(new)
    with open(new / "result.json") as f:
        res = json.load(f)
    res["kernel"] = "6.1-nosuch"
    with open(new / "result.json", "w") as f:
        json.dump(res, f)


BAD = {
    "not JSON": (_write(PATCHED, '{"kernel": '), r"result.json: not valid JSON"),
    "a list": (_write(PATCHED, "[]"), r"result.json: not a JSON object"),
    "no checks": (_edit(lambda r: r.pop("checks")), r"'checks' missing"),
    "pass as a word": (_edit(lambda r: r["checks"][0].update(**{"pass": "yes"})), r"check 1 is not"),
    "other folder": (_edit(lambda r: r.update(scenario="permissive")), r"do not match the folder"),
    "unknown kernel": (_rename_kernel, r"kernel '6.1-nosuch' is not in"),
    "seconds as text": (_edit(lambda r: r.update(seconds="40")), r"'seconds' is not a number"),
    "bad run.json": (lambda run: (run / "run.json").write_text('{"builds": 3}'), r"run.json: 'builds' is not"),
    "bad agree": (lambda run: (run / "run.json").write_text('{"agree": [{"name": "x", "pass": true}]}'),
                  r"agree check 'x': not 'A == B on ARCH SCENARIO'"),
    "bad junit.xml": (lambda run: (run / "junit.xml").write_text("<testsuites>"), r"junit.xml: not valid XML"),
    "no cells": (_nothing, r"not a results folder"),
}


def assert_refused(p, rundir, pattern):
    assert p.returncode == 2, p.stderr
    assert p.stdout == ""
    assert len(p.stderr.splitlines()) == 1 and "Traceback" not in p.stderr, p.stderr
    assert re.match(r"kcidb: error: ", p.stderr) and re.search(pattern, p.stderr), p.stderr
    if os.path.isdir(rundir):
        assert [n for n in os.listdir(rundir) if "kcidb" in n] == []


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_one_line_and_leaves_nothing(run, case):
    make, pattern = BAD[case]
    make(run)
    assert_refused(export(run), run, pattern)


@pytest.mark.parametrize("args,pattern", [
    (["/nonexistent/run"], r"/nonexistent/run: no such folder"),
    ([os.path.join(ROOT, "README.md")], r"README.md: not a folder"),
    ([os.path.join(ROOT, "configs")], r"not a results folder"),
    (["RUN", "--origin", "Bad-Origin"], r"--origin: 'Bad-Origin' is not an origin"),
    (["RUN", "--matrix", "/nonexistent/matrix.yaml"], r"cannot read /nonexistent/matrix.yaml"),
    (["RUN", "-o", "/nonexistent/dir/kcidb.json"], r"cannot write in /nonexistent/dir"),
])
def test_bad_arguments_are_one_line(run, args, pattern):
    assert_refused(cli(*[run if a == "RUN" else a for a in args]), run, pattern)


def test_output_elsewhere_and_origin(run, tmp_path):
    out = tmp_path / "sub.json"
    p = export(run, "--origin", "my_lab", "-o", str(out))
    assert p.returncode == 0 and p.stdout.splitlines()[-1] == str(out)
    doc = json.loads(out.read_text())
    assert {x["origin"] for k in ("checkouts", "builds", "tests") for x in doc[k]} == {"my_lab"}
    assert all(x["id"].startswith("my_lab:verify4/") for x in doc["tests"])
    assert not (run / "kcidb.json").exists() and [n for n in os.listdir(tmp_path) if n.startswith(".kcidb")] == []


def test_kept_schema_is_the_one_its_readme_names():
    with open(os.path.join(ROOT, "harness", "schema", "README.md")) as f:
        readme = f.read()
    with open(kcidb.SCHEMA, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    assert digest in readme and "kcidb_io/schema/v05_03.py" in readme
    assert re.search(r"`[0-9a-f]{40}`", readme)
    assert kcidb.schema_version() == {"major": 5, "minor": 3}


GOLDEN = os.path.join(DATA, "kcidb-verify4.golden.json")


def normalised(doc, rundir):
    """The document with the run folder's place (a temporary folder) as RUN."""
    return json.loads(json.dumps(doc, sort_keys=True).replace(str(rundir), "RUN"))


def test_golden_export_of_a_captured_run(run):
    # The whole export of five captured real cells, object for object, against the file kept
    # beside them: a change in what KCIDB receives shows up here, and is read, not missed.
    # (To renew it after a deliberate change: write normalised(...) to the golden file and
    # review the diff.)
    with open(GOLDEN) as f:
        want = json.load(f)
    assert normalised(exported(run), run) == want


def test_golden_comparison_can_fail(run):
    # negative control: one observation changed in one cell changes the document
    edit_cell(run, "x86_64.6.1-stock.cfg-disabled",
                lambda r: r["checks"][1].update(got="something else", **{"pass": False}))
    with open(GOLDEN) as f:
        want = json.load(f)
    assert normalised(exported(run), run) != want
