"""Compare two matrix run folders cell by cell: which cells there are, and each cell's outcome,
observations and checks (expected value, value got, verdict). Nothing else is compared: times,
paths, run names and the harness's messages differ between any two runs of the same cells.

    python3 -m harness.compare A B [--set NAME [--only F]] [--matrix FILE]

A and B are folders make matrix, a merge or make ci-local wrote (<arch>.<kernel>.<scenario>/
result.json each; a cell folder without one has the outcome junit.xml gives it, else
no-result, as KCIDB reads it). With --set, only the cells of that set (and --only's slice) are compared,
and each must be in both folders; cells outside it are left out of both. Without, every cell
of either folder is compared.

One line per difference on stdout ("<cell>: ..."), exit 1 if there is any; else one line
saying how many cells, observations and checks were the same, exit 0. Bad input (a folder
that is not there or holds no cell, an unknown set or slice, a result.json not as matrix.py
writes it): one line, exit 2.
"""
import os
import sys

from harness import ROOT
from harness.cli import ArgParser
from harness import kcidb  # read_cells: a run folder's results, as KCIDB and the report read them
from harness import matrixspec


class CompareError(Exception):
    pass


def read_run(folder):
    """{cell folder name: result} of a run folder."""
    if not os.path.isdir(folder):
        raise CompareError(f"{folder}: {'not a folder' if os.path.exists(folder) else 'no such folder'}")
    try:
        return kcidb.read_cells(folder, kcidb.read_junit(folder))
    except kcidb.ExportError as e:
        raise CompareError(str(e))


def slice_cells(matrix, set_name, only):
    """The folder names of the cells of a set's slice, in the matrix's order."""
    try:
        cells = matrixspec.load(matrix, ROOT).cells(set_name, only)
    except matrixspec.MatrixError as e:
        raise CompareError(str(e))
    if not cells:
        raise CompareError(f"no cell matches set '{set_name}' and ONLY='{only}'")
    return [f"{a}.{k}.{s}" for k, a, s in cells]


def verdict(check):
    return "pass" if check["pass"] else "lab trouble" if check.get("lab") else "fail"


def keyed_checks(result):
    """{(name, n): check}: a name that comes back (a failed probe step each time) keeps its
    occurrences apart."""
    seen, out = {}, {}
    for c in result["checks"]:
        n = seen[c["name"]] = seen.get(c["name"], 0) + 1
        out[(c["name"], n)] = c
    return out


def show(value):
    return "(none)" if value is None else repr(value)


def cell_differences(a, b):
    """The differences of one cell's two results, and how many observations and checks were
    compared: ([line], observations, checks)."""
    lines = []
    if a["outcome"] != b["outcome"]:
        lines.append(f"outcome: A {a['outcome']!r}, B {b['outcome']!r}")
    oa, ob = a.get("observed", {}), b.get("observed", {})
    keys = sorted(set(oa) | set(ob))
    for k in keys:
        if oa.get(k) != ob.get(k):
            lines.append(f"observed {k}: A {show(oa.get(k))}, B {show(ob.get(k))}")
    ca, cb = keyed_checks(a), keyed_checks(b)
    names = list(ca) + [k for k in cb if k not in ca]
    for key in names:
        x, y = ca.get(key), cb.get(key)
        label = key[0] + (f" (#{key[1]})" if key[1] > 1 else "")
        if x is None or y is None:
            lines.append(f"check {label}: only in {'B' if x is None else 'A'}")
            continue
        for field in ("expected", "got"):
            if x[field] != y[field]:
                lines.append(f"check {label}: {field} A {x[field]!r}, B {y[field]!r}")
        if verdict(x) != verdict(y):
            lines.append(f"check {label}: verdict A {verdict(x)}, B {verdict(y)}")
    return lines, len(keys), len(names)


def compare(a_dir, b_dir, only_cells=None):
    """([difference line], cells, observations, checks compared). only_cells: the folder
    names to compare (each must be in both), or None for every cell of either folder."""
    a, b = read_run(a_dir), read_run(b_dir)
    if only_cells is None:
        names = sorted(set(a) | set(b))
    else:
        names = only_cells
    lines, nobs, nchecks, ncells = [], 0, 0, 0
    for name in names:
        if name not in a or name not in b:
            lines.append(f"{name}: only in {'A' if name in a else 'B'}" if name in a or name in b
                         else f"{name}: in neither A nor B")
            continue
        diff, o, c = cell_differences(a[name], b[name])
        lines += [f"{name}: {d}" for d in diff]
        ncells, nobs, nchecks = ncells + 1, nobs + o, nchecks + c
    return lines, ncells, nobs, nchecks


def main(argv=None):
    ap = ArgParser("compare", prog="python3 -m harness.compare", description=__doc__.splitlines()[0])
    ap.add_argument("a", metavar="A", help="a run folder")
    ap.add_argument("b", metavar="B", help="another run folder")
    ap.add_argument("--set", default=None, help="compare only this set's cells (each must be in both)")
    ap.add_argument("--only", default="", help="with --set: its slice, key=value,... (as make matrix ONLY=)")
    ap.add_argument("--matrix", default=os.path.join(ROOT, "matrix.yaml"), help="the matrix the set is read from")
    args = ap.parse_args(argv)
    if args.only and not args.set:
        ap.error("--only needs --set")
    try:
        only_cells = slice_cells(args.matrix, args.set, args.only) if args.set else None
        lines, ncells, nobs, nchecks = compare(args.a, args.b, only_cells)
    except CompareError as e:
        print(f"compare: error: {e}", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    if lines:
        print(f"compare: {len(lines)} differences between A ({args.a}) and B ({args.b})", file=sys.stderr)
        return 1
    print(f"compare: {ncells} cells, {nobs} observations and {nchecks} checks the same in {args.a} and {args.b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
