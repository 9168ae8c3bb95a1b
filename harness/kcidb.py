"""A matrix run as a KCIDB document (the KernelCI / CKI / LKFT result schema, v5.3).

    python3 -m harness.kcidb RUNDIR [--origin NAME] [--matrix FILE] [-o FILE]

writes RUNDIR/kcidb.json (or FILE) and prints its path as the last line. The document holds:

- a checkout per source tree the run built: Debian's linux-source-6.1 as shipped, the same
  with patches/6.1/series on top (patchset_files, patchset_hash), linux-source-6.12. KCIDB
  ties a build to one checkout, and the stock and patched trees are different source code,
  so each tree is a checkout of its own, the unpatched ones with an empty patchset_hash.
  None has a git repository or commit: the trees are Debian's tarballs (misc.source says so);
- a build per tree, config and arch (one per kernel of matrix.yaml and arch);
- a test per check of each cell (the boot's outcome and each observation), on the cell's
  build, with the path selinux.<scenario>.<observation>, and one per agree check, on the
  build of the pair's first kernel (the one held to the reference; the reference build's
  id is in misc.reference_build_id), with the path selinux.<scenario>.agree.<reference>.

What the kernel did is PASS or FAIL. Lab trouble is not a verdict on the kernel: an
unexpected timeout or a boot without a result is ERROR (the test started and did not
end), a harness error or a failed build is MISS (the test never ran); an observation the
probe could not make ("missing", or a failed probe step) is ERROR. An agree check that
involves a cell with lab trouble is ERROR too.

Input: the cells' result.json files, and when present run.json (builds with compiler,
duration and start, and the agree checks); without it the agree checks come from
junit.xml and the builds' durations from build.log. File URLs are file:<path> relative
to the repository for files inside it, file://<absolute path> otherwise. Bad input: one
line on stderr and exit 2; the document is checked against harness/schema/ before it is
written (exit 1 if not valid), and written through a temporary file, so a failed export
leaves no kcidb.json behind.
"""
import argparse
import datetime
import hashlib
import json
import os
import re
import sys
import urllib.parse
import xml.etree.ElementTree as ET

from harness import LAB_OUTCOMES, ROOT, atomic
from harness.cli import ArgParser

try:
    import jsonschema
except ImportError:  # a python3 that is not Debian's (a pyenv shim first on PATH)
    sys.path.append("/usr/lib/python3/dist-packages")
    import jsonschema

SCHEMA = os.path.join(ROOT, "harness", "schema", "kcidb-v5.3.json")
ORIGIN = "selinux_ro_hooks"
ORIGIN_RE = re.compile(r"^[a-z0-9_]+$")  # the schema's pattern for origin
SERIES = os.path.join(ROOT, "patches", "6.1")
EXCERPT_MAX = 16384  # the schema's maxLength of log_excerpt
TAIL_LINES = 60  # of console.log in a failure's excerpt: the end of the boot, readable

# The source of each tree of matrix.yaml: the Debian package whose tarball it unpacks,
# and whether patches/6.1/series goes on top (scripts/source.sh, scripts/patch.sh).
TREES = {"6.1": ("linux-source-6.1", False),
         "6.1-patched": ("linux-source-6.1", True),
         "6.12": ("linux-source-6.12", False)}

# Lab trouble in KCIDB's words: a boot that started and did not end is ERROR, one that never
# started (the harness, a build) MISS.
LAB_TROUBLE = {o: "MISS" if o in ("harness-error", "build-error") else "ERROR" for o in LAB_OUTCOMES}


class ExportError(Exception):
    def __str__(self):
        # One line, whatever a file name or a parser's message in it holds.
        return " ".join(str(self.args[0]).split()) if self.args else ""


def load_spec(path):
    """matrix.yaml through the project's one reader (the only import of matrixspec here)."""
    from harness import matrixspec
    try:
        return matrixspec.load(path, ROOT)
    except matrixspec.MatrixError as e:
        raise ExportError(e)


# --- small helpers -------------------------------------------------------------------------

def file_url(path):
    """The same URL on every clone for a file in the repository; an absolute one outside."""
    path = os.path.abspath(path)
    rel = os.path.relpath(path, ROOT)
    if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
        return "file:" + urllib.parse.quote(rel)
    return "file://" + urllib.parse.quote(path)


def iso_time(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).isoformat(timespec="milliseconds")


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def node(name):
    """One node of a test path: the schema allows letters, digits, '_' and '-'."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name) or "_"


def excerpt(text):
    """The end of a text, within the schema's bound, starting at a line, without NULs."""
    text = text.replace("\0", "").replace("\r\n", "\n")
    text = "\n".join(text.splitlines()[-TAIL_LINES:])
    if len(text) > EXCERPT_MAX:
        text = text[-EXCERPT_MAX:].partition("\n")[2]
    return text


def console_tail(cdir):
    try:
        with open(os.path.join(cdir, "console.log"), errors="replace") as f:
            return excerpt(f.read())
    except OSError:
        return None


def present(d):
    """A record without its unknown fields: KCIDB has no nulls, only absent properties."""
    return {k: v for k, v in d.items() if v is not None and v != {}}


def patchset_hash(paths):
    """The schema's patchset hash: sha256 over each patch's sha256 in hex and a newline."""
    outer = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            outer.update(hashlib.sha256(f.read()).hexdigest().encode() + b"\n")
    return outer.hexdigest()


def series_files():
    """The mails of patches/6.1/series, in the order they are applied."""
    try:
        with open(os.path.join(SERIES, "series")) as f:
            names = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    except OSError as e:
        raise ExportError(f"patches/6.1/series: {e.strerror}")
    paths = [os.path.join(SERIES, n) for n in names]
    for p in paths:
        if not os.path.isfile(p):
            raise ExportError(f"patches/6.1/series names {os.path.basename(p)}, which is not in patches/6.1")
    return paths


# --- reading a run ---------------------------------------------------------------------------

def read_json(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise ExportError(f"{what}: {e.strerror}")
    except (ValueError, UnicodeDecodeError) as e:
        raise ExportError(f"{what}: not valid JSON ({e})")


def check_result(res, what, cell):
    """A result.json has the shape matrix.py writes, and belongs to the folder it is in."""
    if not isinstance(res, dict):
        raise ExportError(f"{what}: not a JSON object")
    for key in ("kernel", "arch", "scenario", "outcome"):
        if not isinstance(res.get(key), str) or not res[key]:
            raise ExportError(f"{what}: '{key}' missing or not a string")
    if f"{res['arch']}.{res['kernel']}.{res['scenario']}" != cell:
        raise ExportError(f"{what}: its kernel, arch and scenario do not match the folder {cell}")
    if not isinstance(res.get("checks"), list):
        raise ExportError(f"{what}: 'checks' missing or not a list")
    for i, c in enumerate(res["checks"], 1):
        if not (isinstance(c, dict) and isinstance(c.get("name"), str) and c["name"]
                and isinstance(c.get("expected"), str) and isinstance(c.get("got"), str)
                and isinstance(c.get("pass"), bool)):
            raise ExportError(f"{what}: check {i} is not {{name, expected, got, pass}}")
    for key in ("seconds", "start", "boot_start", "boot_seconds"):
        if key in res and not is_number(res[key]):
            raise ExportError(f"{what}: '{key}' is not a number")
    if not isinstance(res.get("observed", {}), dict) or not isinstance(res.get("harness", ""), str):
        raise ExportError(f"{what}: 'observed' or 'harness' has the wrong type")
    return res


def missing_result(cell, junit_outcome):
    """A cell folder without result.json: its build failed (matrix.py writes none then; the
    run's junit.xml has its outcome), or the run stopped before the cell ended."""
    arch, rest = cell.split(".", 1)
    kernel, scenario = rest.rsplit(".", 1)
    expected, got = junit_outcome or ("ok", "no-result")
    return {"kernel": kernel, "arch": arch, "scenario": scenario, "outcome": got,
            "checks": [{"name": "outcome", "expected": expected, "got": got, "pass": False}],
            "error": "the cell left no result.json"}


def read_cells(rundir, junit):
    """{cell folder name: result}, in folder order. A folder is a cell when its name is
    <arch>.<kernel>.<scenario>; a run with no result.json at all is not a results folder."""
    try:
        names = sorted(n for n in os.listdir(rundir)
                       if os.path.isdir(os.path.join(rundir, n)) and n.count(".") >= 2)
    except OSError as e:
        raise ExportError(f"{rundir}: {e.strerror}")
    found = [n for n in names if os.path.isfile(os.path.join(rundir, n, "result.json"))]
    if not found:
        raise ExportError(f"{rundir}: not a results folder (no <arch>.<kernel>.<scenario>/result.json in it)")
    outcomes = junit_outcomes(junit)
    cells = {}
    for n in names:
        path = os.path.join(rundir, n, "result.json")
        if n in found:
            cells[n] = check_result(read_json(path, path), path, n)
        else:
            cells[n] = missing_result(n, outcomes.get(n))
    return cells


def read_junit(rundir):
    path = os.path.join(rundir, "junit.xml")
    if not os.path.isfile(path):
        return None
    try:
        return ET.parse(path).getroot()
    except ET.ParseError as e:
        raise ExportError(f"{path}: not valid XML ({e})")


def junit_outcomes(junit):
    """{cell: (expected, got)} of the outcome checks that failed, as junit.xml words them."""
    out = {}
    for ts in junit.iter("testsuite") if junit is not None else ():
        for tc in ts.iter("testcase"):
            fail = tc.find("failure")
            m = re.fullmatch(r"expected '(.*)', got '(.*)'", fail.get("message", "")) if fail is not None else None
            if tc.get("name") == "outcome" and m:
                out[ts.get("name")] = m.groups()
    return out


def junit_agree(junit):
    """The agree checks as junit.xml's "differential" suite records them."""
    out = []
    for ts in junit.iter("testsuite") if junit is not None else ():
        if ts.get("name") != "differential":
            continue
        for tc in ts.iter("testcase"):
            fail = tc.find("failure")
            # The message joins the differences with "; ", which a value may hold too: kept whole.
            out.append({"name": tc.get("name", ""), "pass": fail is None,
                        "diff": [] if fail is None else [fail.get("message", "")]})
    return out


def read_run_json(rundir):
    """run.json, or None for a run made before matrix.py wrote it."""
    path = os.path.join(rundir, "run.json")
    if not os.path.exists(path):
        return None
    run = read_json(path, path)
    if not isinstance(run, dict):
        raise ExportError(f"{path}: not a JSON object")
    for key in ("builds", "agree"):
        if not (isinstance(run.get(key, []), list) and all(isinstance(x, dict) for x in run.get(key, []))):
            raise ExportError(f"{path}: '{key}' is not a list of objects")
    if "started" in run and not is_number(run["started"]):
        raise ExportError(f"{path}: 'started' is not a number")
    return run


def read_build_log(rundir):
    try:
        with open(os.path.join(rundir, "build.log"), errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def source_versions(build_log):
    """{package: version} of the source packages unpacked, as scripts/source.sh logs them."""
    return dict(re.findall(r"\[source\.sh\] linux-\S+: (?:up to date \(|unpacking )(linux-source-\S+) ([^\s)]+)",
                           build_log))


def logged_build(build_log, arch, tree, config):
    """(status, seconds, the line) of a kernel build, as scripts/kernel.sh logs it."""
    what = re.escape(f"{arch} {tree} {config}: ")
    m = re.search(rf"^\[kernel\.sh\] {what}built in (\d+)s$", build_log, re.M)
    if m:
        return "PASS", int(m.group(1)), None
    m = re.search(rf"^kernel\.sh: error: {what}(?:build failed after (\d+)s)?.*$", build_log, re.M)
    if m:
        return "FAIL", int(m.group(1)) if m.group(1) else None, m.group(0)
    return None, None, None


# --- the KCIDB objects -------------------------------------------------------------------------

class Export:
    def __init__(self, rundir, origin, spec):
        self.rundir = rundir
        self.origin = origin
        self.spec = spec
        self.prefix = f"{origin}:{os.path.basename(os.path.abspath(rundir))}"
        self.junit = read_junit(rundir)
        self.cells = read_cells(rundir, self.junit)
        self.run = read_run_json(rundir)
        self.build_log = read_build_log(rundir)
        for cell, r in self.cells.items():
            if r["kernel"] not in spec.kernels:
                raise ExportError(f"{cell}: kernel {r['kernel']!r} is not in {spec.path} "
                                  "(give the matrix file the run used with --matrix)")

    def kernel_key(self, kernel, arch):
        k = self.spec.kernels[kernel]
        return (k["tree"], k["config"], arch)

    def build_id(self, kernel, arch):
        tree, config, _ = self.kernel_key(kernel, arch)
        return f"{self.prefix}/build/{arch}/{tree}/{config}"

    def checkout_id(self, tree):
        return f"{self.prefix}/checkout/{tree}"

    def started(self):
        """The run's start: run.json's, else its first cell's, else unknown."""
        if self.run and "started" in self.run:
            return self.run["started"]
        starts = [r[k] for r in self.cells.values() for k in ("start", "boot_start") if k in r]
        return min(starts) if starts else None

    def document(self):
        builds = self.builds()
        return {"version": schema_version(),
                "checkouts": self.checkouts(builds),
                "builds": builds,
                "tests": [t for cell in self.cells for t in self.cell_tests(cell)] + self.agree_tests()}

    # checkouts
    def checkouts(self, builds):
        trees = sorted({b["misc"]["tree"] for b in builds})
        versions = source_versions(self.build_log)
        start = self.started()
        return [self.checkout(t, versions, start, builds) for t in trees]

    def checkout(self, tree, versions, start, builds):
        pkg, patched = TREES[tree]
        ver = versions.get(pkg)
        mine = [b.get("status") for b in builds if b["misc"]["tree"] == tree]
        c = {"id": self.checkout_id(tree), "origin": self.origin, "tree_name": pkg,
             # A build of the tree proves the source (and the series) went together.
             "valid": True if "PASS" in mine else None,
             "start_time": iso_time(start) if start is not None else None,
             "comment": f"Debian's {pkg} {ver or '(version not logged)'}"
                        + (" with patches/6.1/series on top" if patched else ", as packaged"),
             "misc": present({"source": f"the {pkg} tarball from Debian, not a git checkout: "
                                        "no repository URL or commit to give",
                              "source_version": ver, "matrix_tree": tree})}
        if patched:
            paths = series_files()
            c["patchset_files"] = [{"name": os.path.basename(p), "url": file_url(p)} for p in paths]
            c["patchset_hash"] = patchset_hash(paths)
            # The mails are read at export time; the run did not record which it applied.
            c["misc"]["patchset_read"] = "at export time, from the repository"
        else:
            c["patchset_hash"] = ""  # the schema's word for "no patches applied"
        return present(c)

    # builds
    def builds(self):
        kernels = {}
        for r in self.cells.values():
            kernels.setdefault(self.kernel_key(r["kernel"], r["arch"]), []).append(r["kernel"])
        return [self.build(key, sorted(set(names))) for key, names in kernels.items()]

    def recorded_build(self, tree, config, arch):
        for b in (self.run or {}).get("builds", []):
            if (b.get("tree"), b.get("config"), b.get("arch")) == (tree, config, arch):
                return b
        return None

    def build(self, key, kernels):
        tree, config, arch = key
        rec = self.recorded_build(tree, config, arch)
        log_status, log_seconds, log_line = logged_build(self.build_log, arch, tree, config)
        if rec:
            status = {"ok": "PASS", "fail": "FAIL"}.get(rec.get("status"))
            seconds, start = rec.get("seconds"), rec.get("start")
        else:
            # A cell that booted had its kernel; build.log tells the rest.
            booted = any(r["outcome"] != "build-error" and "error" not in r for r in self.cells.values()
                         if self.kernel_key(r["kernel"], r["arch"]) == key)
            status, seconds, start = log_status or ("PASS" if booted else None), log_seconds, None
        log = os.path.join(self.rundir, "build.log")
        b = {"id": self.build_id(kernels[0], arch), "checkout_id": self.checkout_id(tree),
             "origin": self.origin, "architecture": arch, "config_name": config,
             "command": f"scripts/kernel.sh {arch} {tree} {config}",
             "compiler": str_or_none(rec, "compiler"),
             "duration": seconds if is_number(seconds) else None,
             "start_time": iso_time(start) if is_number(start) else None,
             "status": status,
             "log_url": file_url(log) if os.path.isfile(log) else None,
             "log_excerpt": excerpt(log_line) if status == "FAIL" and log_line else None,
             "config_url": file_url(rec["config_file"]) if str_or_none(rec, "config_file") else None,
             "output_files": [{"name": os.path.basename(rec["image"]), "url": file_url(rec["image"])}]
                             if str_or_none(rec, "image") else None,
             "misc": {"tree": tree, "kernels": kernels}}
        return present(b)

    # tests
    def cell_tests(self, cell):
        r = self.cells[cell]
        cdir = os.path.join(self.rundir, cell)
        console = os.path.join(cdir, "console.log")
        tail = console_tail(cdir) or None
        start = r.get("boot_start", r.get("start"))
        common = {"build_id": self.build_id(r["kernel"], r["arch"]), "origin": self.origin,
                  "start_time": iso_time(start) if start is not None else None,
                  "log_url": file_url(console) if os.path.isfile(console) else None,
                  "environment": {"comment": "a QEMU guest booted by qemu-run.sh",
                                  "misc": {"arch": r["arch"], "kernel": r["kernel"]}}}
        tests, seen = [], {}
        for c in r["checks"]:
            n = seen[c["name"]] = seen.get(c["name"], 0) + 1
            is_outcome = c["name"] == "outcome"
            status = outcome_status(c) if is_outcome else check_status(c)
            t = {"id": f"{self.prefix}/{cell}/{c['name']}" + (f"~{n}" if n > 1 else ""),
                 "path": ".".join(["selinux", node(r["scenario"])] + [node(p) for p in c["name"].split(".")]),
                 "status": status, **common,
                 "comment": None if status == "PASS" else verdict_comment(c, status),
                 "log_excerpt": tail if status != "PASS" else None,
                 "misc": {"cell": cell, "expected": c["expected"], "got": c["got"]}}
            if is_outcome:
                t.update(boot_facts(r, cdir))
                t["misc"].update(present({"harness": r.get("harness") or None, "error": r.get("error")}))
            tests.append(present(t))
        return tests

    def agree_tests(self):
        records = self.run["agree"] if self.run and "agree" in self.run else junit_agree(self.junit)
        return [self.agree_test(a) for a in records]

    def agree_test(self, a):
        m = re.fullmatch(r"(\S+) == (\S+) on (\S+) (\S+)", str(a.get("name", "")))
        if not m or not isinstance(a.get("pass"), bool) or not isinstance(a.get("diff", []), list):
            raise ExportError(f"agree check {a.get('name')!r}: not 'A == B on ARCH SCENARIO' with a pass flag "
                              "and a list of differences")
        first, ref, arch, scenario = m.groups()
        cells = [self.cells.get(f"{arch}.{k}.{scenario}") for k in (first, ref)]
        if None in cells:
            raise ExportError(f"agree check {a['name']!r}: a cell it compares is not in the run")
        # Two boots that both failed to end "agree" on nothing: no verdict either way.
        status = "ERROR" if any(map(lab_trouble, cells)) else "PASS" if a["pass"] else "FAIL"
        diff = [str(d) for d in a.get("diff", [])]
        return present({
            "id": f"{self.prefix}/agree/{arch}.{first}.{scenario}/{ref}", "origin": self.origin,
            "build_id": self.build_id(first, arch),
            "path": f"selinux.{node(scenario)}.agree.{node(ref)}", "status": status,
            "comment": f"{a['name']}: every observation equal but the listed exceptions",
            "log_excerpt": excerpt("\n".join(diff)) if diff else None,
            "environment": {"misc": {"arch": arch, "kernel": first, "reference": ref}},
            "misc": present({"pair": a["name"], "reference_build_id": self.build_id(ref, arch),
                             "diff": diff or None, "compared": a.get("compared")})})


def boot_facts(r, cdir):
    """What belongs to the boot as a whole, on its outcome test: its duration and its files."""
    files = [n for n in ("probe.ktap", "result.json", "repro.sh") if os.path.isfile(os.path.join(cdir, n))]
    payload = os.path.join(cdir, "payload.sh")
    return {"duration": r.get("boot_seconds", r.get("seconds")),
            "output_files": [{"name": n, "url": file_url(os.path.join(cdir, n))} for n in files] or None,
            "input_files": [{"name": "payload.sh", "url": file_url(payload)}] if os.path.isfile(payload) else None}


def str_or_none(rec, key):
    v = (rec or {}).get(key)
    return v if isinstance(v, str) and v else None


def outcome_status(check):
    if check["pass"]:
        return "PASS"
    return LAB_TROUBLE.get(check["got"], "FAIL")


def lab_trouble(r):
    """The cell's boot ended in a way that says nothing about the kernel."""
    return any(c["name"] == "outcome" and outcome_status(c) != "FAIL" and not c["pass"] for c in r["checks"])


def check_status(check):
    if check["pass"]:
        return "PASS"
    # The probe could not observe (a failed step, a key it never reported): no verdict.
    if check["name"] == "probe" or check["got"] == "missing":
        return "ERROR"
    return "FAIL"


def verdict_comment(check, status):
    why = {"FAIL": "", "ERROR": " (the test did not complete: nothing is known about the kernel)",
           "MISS": " (the test did not run: nothing is known about the kernel)"}[status]
    return f"{check['name']}: expected {check['expected']!r}, got {check['got']!r}{why}"


# --- the schema ----------------------------------------------------------------------------------

def load_schema():
    try:
        with open(SCHEMA, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise ExportError(f"cannot read the schema {SCHEMA}: {e}")


def schema_version():
    """The version the kept schema accepts: its major const and its highest minor."""
    v = load_schema()["properties"]["version"]["properties"]
    return {"major": v["major"]["const"], "minor": v["minor"]["maximum"]}


def _is_uri(text):
    # RFC 3986's scheme, then no space or control character (python3-rfc3987 is absent).
    return bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s\x00-\x1f\x7f]*", text))


def _is_date_time(text):
    # RFC 3339: a full date and time with its offset (Debian has no rfc3339-validator).
    if not re.fullmatch(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)", text):
        return False
    try:
        datetime.datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def format_checker():
    """Draft 7's format checker, as upstream validates, with the formats it would skip here."""
    fc = jsonschema.FormatChecker(jsonschema.Draft7Validator.FORMAT_CHECKER.checkers)
    if "uri" not in fc.checkers:
        fc.checks("uri")(_is_uri)
    if "date-time" not in fc.checkers:
        fc.checks("date-time")(_is_date_time)
    return fc


def validator():
    return jsonschema.Draft7Validator(load_schema(), format_checker=format_checker())


def problems(doc):
    """Every way the document breaks the schema, one line each (none: it is valid)."""
    return [f"/{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}"
            for e in sorted(validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))]


# --- the command -----------------------------------------------------------------------------------

def write_atomic(path, doc):
    try:
        atomic.write_json(path, doc)
    except OSError as e:
        raise ExportError(f"cannot write in {os.path.dirname(os.path.abspath(path))}: {e.strerror}")


def origin_name(text):
    if not ORIGIN_RE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not an origin (lower-case letters, digits, '_')")
    return text


def main(argv=None):
    ap = ArgParser("kcidb", prog="python3 -m harness.kcidb", description=__doc__.splitlines()[0])
    ap.add_argument("rundir", metavar="RUNDIR", help="a results folder of make matrix")
    ap.add_argument("--origin", type=origin_name, default=ORIGIN, help=f"the CI system's name (default {ORIGIN})")
    ap.add_argument("--matrix", default=os.path.join(ROOT, "matrix.yaml"), help="the matrix file the run used")
    ap.add_argument("-o", dest="out", metavar="FILE", help="where to write (default RUNDIR/kcidb.json)")
    args = ap.parse_args(argv)
    out = args.out or os.path.join(args.rundir, "kcidb.json")
    try:
        if not os.path.isdir(args.rundir):
            what = "not a folder" if os.path.exists(args.rundir) else "no such folder"
            raise ExportError(f"{args.rundir}: {what}")
        doc = Export(args.rundir, args.origin, load_spec(args.matrix)).document()
        bad = problems(doc)
        if bad:
            print(f"kcidb: error: the export breaks {os.path.relpath(SCHEMA, ROOT)} "
                  f"({len(bad)} problems), first: {bad[0]}", file=sys.stderr)
            return 1
        write_atomic(out, doc)
    except ExportError as e:
        print(f"kcidb: error: {e}", file=sys.stderr)
        return 2
    counts = {}
    for t in doc["tests"]:
        counts[t["status"]] = counts.get(t["status"], 0) + 1
    print(f"kcidb: {len(doc['checkouts'])} checkouts, {len(doc['builds'])} builds, {len(doc['tests'])} tests ("
          + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + f"); valid KCIDB v{doc['version']['major']}."
          f"{doc['version']['minor']}", file=sys.stderr)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
