"""Merge the results folders of a sharded matrix run into one run folder.

    python3 -m harness.merge DIR... -o OUT [--matrix FILE] [--set NAME [--only F]]

Each DIR is a results folder a shard wrote (results/shard-I/: a folder per cell with its
result.json). The cells are copied into OUT and the run's files are written as make matrix
writes them for the same cells on one machine: summary.txt, results.ktap, junit.xml and the
agree checks (harness/matrix.py's own functions, so a pair of kernels booted in different
shards is compared like any other), run.json (the shards' builds and jobs), then kcidb.json
and index.html. Cells are listed in matrix.yaml's order, whatever shard they came from.

Refused, with one line and exit 2 before anything is written: a cell in two folders, a cell
that matrix.yaml does not have or whose expected values are not matrix.yaml's (made from
another matrix), shards of different sets, and with --set a cell outside the set. With
--set, a cell of the set that no shard reported (its job died) is written as lab trouble
(no-result), as is a cell folder left without result.json. Exit 1 if any check is not as
expected, like make matrix; the last line printed is OUT.
"""
import copy
import os
import shutil
import sys
import time

from harness import ROOT, atomic
from harness.cli import ArgParser
from harness import kcidb  # check_result: a result.json's shape; the patchset hash
from harness import matrix
from harness import matrixspec


class MergeError(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def all_cells(spec):
    """Every cell of the matrix in the order matrixspec's cells() lists a set's: cells() over
    one filter that every cell matches, on a copy so the spec's own sets stay as read."""
    whole = copy.copy(spec)
    whole.sets = {"all": [{}]}
    return whole.cells("all", "")


def expectations(spec, kname, arch, sname):
    """{check name: expected value} that matrix.py's run_cell gives this cell: the outcome
    and, when the boot reached ok, every observation the scenario expects of this kernel."""
    scen = spec.scenarios[sname]
    want = {"outcome": matrixspec.expected(scen.get("outcome", "ok"), kname, arch)}
    for key, value in scen.get("expect", {}).items():
        value = matrixspec.expected(value, kname, arch)
        if value is not None:
            want[key] = value
    return want


def foreign_check(spec, r):
    """Why a result was not made from this matrix (None if it was): a check it lacks or
    does not expect, or an expected value that differs."""
    want = expectations(spec, r["kernel"], r["arch"], r["scenario"])
    names = set()
    for c in r["checks"]:
        if c["name"] == "probe":  # a failed probe step: not an expectation
            continue
        names.add(c["name"])
        if c["name"] not in want:
            return f"it checks {c['name']}, which matrix.yaml does not expect"
        if c["expected"] != want[c["name"]]:
            return f"it expects {c['name']}={c['expected']!r}, matrix.yaml {want[c['name']]!r}"
    lacking = [k for k in want if k not in names]
    # A boot that did not reach ok ran no probe: only its outcome is checked.
    if r["outcome"] == "ok" and lacking:
        return f"it has no check of {lacking[0]}, which matrix.yaml expects"
    return None


def no_result(spec, cell, why):
    """A cell that left no result: lab trouble (nothing says what the kernel did)."""
    kname, arch, sname = cell
    want = expectations(spec, kname, arch, sname)["outcome"]
    return {"kernel": kname, "arch": arch, "scenario": sname, "outcome": "no-result", "lab": True,
            "error": why, "observed": {},
            "checks": [{"name": "outcome", "expected": want, "got": "no-result", "pass": False, "lab": True}]}


def read_shard(d, spec, known, absent):
    """{cell: (folder, result)} of one shard folder; refuses what is not this matrix's. known:
    {folder name: cell} of the matrix; absent: gets a line per cell left without a result."""
    if not os.path.isdir(d):
        raise MergeError(f"{d}: {'not a folder' if os.path.exists(d) else 'no such folder'}")
    out = {}
    for name in sorted(os.listdir(d)):
        path = os.path.join(d, name)
        if not os.path.isdir(path) or name.count(".") < 2:
            continue
        cell = known.get(name)
        if cell is None:
            raise MergeError(f"{path}: not a cell of {spec.path} (made from another matrix?)")
        rfile = os.path.join(path, "result.json")
        if not os.path.exists(rfile):
            # The shard's job stopped while the cell was booting.
            why = f"{path} has no result.json: its job stopped before the cell ended"
            out[cell] = (path, no_result(spec, cell, why))
            absent.append(f"{name}: {why}")
            continue
        try:
            r = kcidb.check_result(kcidb.read_json(rfile, rfile), rfile, name)
        except kcidb.ExportError as e:
            raise MergeError(str(e))
        why = foreign_check(spec, r)
        if why:
            raise MergeError(f"{rfile}: made from another matrix: {why}")
        out[cell] = (path, r)
    if not out:
        raise MergeError(f"{d}: not a results folder (no <arch>.<kernel>.<scenario>/ in it)")
    return out


def read_run(d):
    """A shard's run.json, or None (a run made before matrix.py wrote one)."""
    try:
        return kcidb.read_run_json(d)
    except kcidb.ExportError as e:
        raise MergeError(str(e))


def run_set(runs, wanted):
    """The set the shards ran: their run.json's, all the same, and --set's if given."""
    sets = {r.get("set") for r in runs.values() if r is not None and r.get("set") is not None}
    if len(sets) > 1:
        raise MergeError("the shards ran different sets: " + ", ".join(
            f"{d}: {r.get('set')}" for d, r in runs.items() if r is not None))
    if wanted and sets and sets != {wanted}:
        raise MergeError(f"the shards ran set {sets.pop()}, not --set {wanted}")
    return wanted or (sets.pop() if sets else None)


def gather(dirs, spec, set_name, only, absent):
    """[(cell, folder or None, result)] in matrix.yaml's order, from every shard; with
    set_name, refuses cells outside the set and adds the missing ones as lab trouble (a line
    each in absent)."""
    order = all_cells(spec)
    known = {f"{a}.{k}.{s}": (k, a, s) for k, a, s in order}
    found = {}
    for d in dirs:
        for cell, (path, r) in read_shard(d, spec, known, absent).items():
            if cell in found:
                raise MergeError(f"cell {'.'.join((cell[1], cell[0], cell[2]))} is in both "
                                 f"{os.path.dirname(found[cell][0])} and {d}")
            found[cell] = (path, r)
    if set_name:
        try:
            selected = spec.cells(set_name, only)
        except matrixspec.MatrixError as e:
            raise MergeError(str(e))
        outside = [c for c in found if c not in selected]
        if outside:
            raise MergeError(f"{found[outside[0]][0]}: not in set {set_name}"
                             + (f" with ONLY={only}" if only else ""))
        for k, a, s in selected:
            if (k, a, s) not in found:
                found[(k, a, s)] = (None, no_result(spec, (k, a, s), "no shard reported this cell"))
                absent.append(f"{a}.{k}.{s}: no shard reported this cell")
    return [(c, *found[c]) for c in order if c in found]


def check_out(out, dirs):
    """OUT is new (or an empty folder), and not one of the shards."""
    real = os.path.realpath(out)
    for d in dirs:
        if real == os.path.realpath(d) or real.startswith(os.path.realpath(d) + os.sep):
            raise MergeError(f"-o {out}: inside the shard folder {d}")
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise MergeError(f"-o {out}: exists and is not an empty folder")


def place_cells(out, cells):
    """Each cell's folder copied into OUT; a cell no shard reported gets a folder holding
    its result.json, so OUT reads like a run folder."""
    for (k, a, s), path, r in cells:
        dest = os.path.join(out, f"{a}.{k}.{s}")
        if path is not None:
            shutil.copytree(path, dest, symlinks=True)
        if path is None or not os.path.exists(os.path.join(dest, "result.json")):
            os.makedirs(dest, exist_ok=True)
            matrix.write_result(dest, r)


def merge_build_logs(out, dirs):
    """build.log: each shard's, under a line naming it (KCIDB reads the source versions)."""
    with open(os.path.join(out, "build.log"), "w") as f:
        for d in dirs:
            try:
                with open(os.path.join(d, "build.log"), errors="replace") as src:
                    text = src.read()
            except OSError:
                continue
            f.write(f"== {d}\n{text}")


def run_json(out, set_name, runs, cells, diffs, only=""):
    """run.json as matrix.write_run_json writes it, from the shards': the first shard's start,
    the span to the last shard's end, each kernel build once, every shard's jobs (a build step
    named by its shard: each shard builds its own guest image and probe). A shard without
    run.json gives its boots from its cells' times."""
    results = [r for _, _, r in cells]
    started, ended, builds, jobs = [], [], {}, []
    for d, run in runs.items():
        shard_name = os.path.basename(d)
        if run is None:
            jobs += boot_jobs([r for _, path, r in cells if path and os.path.dirname(path) == d])
            continue
        if "started" in run:
            started.append(run["started"])
            ended.append(run["started"] + run.get("seconds", 0))
        for b in run.get("builds", []):
            builds.setdefault((b.get("arch"), b.get("tree"), b.get("config")), b)
        jobs += [j if j.get("kind") == "boot" else dict(j, name=f"{shard_name}: {j['name']}")
                 for j in run.get("jobs", [])]
    starts = [r[k] for r in results for k in ("start", "boot_start") if k in r]
    first = min(started or starts or [time.time()])
    last = max(ended or [r.get("start", first) + r.get("seconds", 0) for r in results] or [first])
    doc = {"set": set_name, "only": only, "shard": None,
           "started": round(first, 3), "seconds": round(last - first, 1),
           "patchset_hash": kcidb.patchset_hash(kcidb.series_files()),
           "baseline": None, "agree": diffs, "builds": list(builds.values()),
           "jobs": sorted(jobs, key=lambda j: j["start"]),
           "shards": [os.path.basename(d) for d in runs]}
    atomic.write_json(os.path.join(out, "run.json"), doc)


def boot_jobs(results):
    """The boot jobs matrix.write_run_json derives from cells' times."""
    return [{"name": f"{r['arch']} {r['kernel']} {r['scenario']}", "kind": "boot",
             "start": r["boot_start"], "seconds": r["boot_seconds"],
             "status": "ok" if all(c["pass"] for c in r["checks"]) else "unexpected"}
            for r in results if "boot_start" in r and "boot_seconds" in r]


def main(argv=None):
    ap = ArgParser("merge", prog="python3 -m harness.merge", description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", metavar="DIR", help="a shard's results folder")
    ap.add_argument("-o", dest="out", required=True, metavar="OUT", help="the merged run folder (new or empty)")
    ap.add_argument("--matrix", default=os.path.join(ROOT, "matrix.yaml"), help="the matrix file the shards ran")
    ap.add_argument("--set", default=None, help="the set the shards split: its cells must all be there")
    ap.add_argument("--only", default="", help="the slice of the set (key=value,...), as the shards had it")
    args = ap.parse_args(argv)
    if args.only and not args.set:
        ap.error("--only needs --set")
    started = time.time()
    try:
        spec = matrixspec.load(args.matrix, ROOT)
        # One spelling per folder: a cell's folder's parent is its shard.
        dirs = [os.path.normpath(d) for d in args.dirs]
        runs = {d: read_run(d) for d in dirs}
        set_name = run_set(runs, args.set)
        absent = []
        cells = gather(dirs, spec, args.set, args.only, absent)
        check_out(args.out, dirs)
    except (matrixspec.MatrixError, MergeError) as e:
        print(f"merge: error: {e}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    place_cells(args.out, cells)
    results = [r for _, _, r in cells]
    diffs = matrix.differential(results, spec)
    matrix.write_reports(args.out, results, diffs, None)
    merge_build_logs(args.out, dirs)
    run_json(args.out, set_name, runs, cells, diffs, args.only)
    exported = matrix.export_results(args.out, args.matrix)
    nbad = sum(not c["pass"] for r in results for c in r["checks"]) + sum(not d["pass"] for d in diffs)
    for line in absent:
        log(f"merge: lab trouble: {line}")
    log(f"merge: {len(results)} cells from {len(dirs)} shards in {time.time() - started:.1f}s; "
        f"{sum(d['pass'] for d in diffs)}/{len(diffs)} agree checks the same; {nbad} checks not as expected"
        f"; summary: {os.path.join(args.out, 'summary.txt')}")
    print(args.out)
    return 1 if nbad or not exported else 0


if __name__ == "__main__":
    sys.exit(main())
