"""Hold one kernel's cells of a run to another kernel's expected values: the negative control
of the expectations themselves. The legacy kernel (hook tables writable, runtime disable
working) held to 6.1-patched's values must fail them; if it passed, the checks could not
tell the two apart.

    python3 -m harness.hold RUN --kernel 6.1-legacy --as 6.1-patched [--matrix FILE]

Each cell of KERNEL in RUN is judged again from what it recorded (its outcome, its
observations, its probe's failures), as make matrix judges a cell of the kernel given by
--as: the outcome that kernel must reach and, when the payload ran, each value it must
show. A scenario the --as kernel does not run is left out (said on stderr). One line per
cell on stdout, "<cell>: N of M checks fail: name ...", then "hold: KERNEL held to AS's
expected values: F of C cells fail, N checks". Exit 0 (the numbers are the answer); bad
input (no such folder, an unknown kernel, no cell of KERNEL in it): one line, exit 2.
"""
import os
import sys

from harness import ROOT
from harness.cli import ArgParser
from harness import kcidb  # read_cells: a run folder's results
from harness import matrix  # judge: a cell's checks, as make matrix makes them
from harness import matrixspec


class HoldError(Exception):
    pass


def hold(run, kernel, as_kernel, matrix_path):
    """([(cell, failed check names, checks)], [cells left out])."""
    try:
        spec = matrixspec.load(matrix_path, ROOT)
    except matrixspec.MatrixError as e:
        raise HoldError(str(e))
    for k in (kernel, as_kernel):
        if k not in spec.kernels:
            raise HoldError(f"unknown kernel '{k}' (one of: {' '.join(spec.kernels)})")
    if not os.path.isdir(run):
        raise HoldError(f"{run}: no such folder")
    try:
        cells = kcidb.read_cells(run, kcidb.read_junit(run))
    except kcidb.ExportError as e:
        raise HoldError(str(e))
    held, left = [], []
    for name, res in cells.items():
        if res.get("kernel") != kernel:
            continue
        sname = res["scenario"]
        if sname not in spec.scenarios:
            raise HoldError(f"{name}: scenario '{sname}' is not in {matrix_path}")
        if not spec.runs(as_kernel, sname):
            left.append(name)
            continue
        broken = [c["got"] for c in res["checks"] if c["name"] == "probe"]
        checks = matrix.judge(spec.scenarios[sname], as_kernel, res["arch"], res["outcome"],
                              res.get("observed", {}), broken)
        held.append((name, [c["name"] for c in checks if not c["pass"]], len(checks)))
    if not held and not left:
        raise HoldError(f"{run}: no cell of kernel '{kernel}'")
    return held, left


def main(argv=None):
    ap = ArgParser("hold", prog="python3 -m harness.hold", description=__doc__.splitlines()[0])
    ap.add_argument("run", metavar="RUN", help="a run folder")
    ap.add_argument("--kernel", required=True, help="the kernel whose cells are judged again")
    ap.add_argument("--as", dest="as_kernel", required=True, help="the kernel whose expected values they are held to")
    ap.add_argument("--matrix", default=os.path.join(ROOT, "matrix.yaml"), help="the matrix the values are read from")
    args = ap.parse_args(argv)
    try:
        held, left = hold(args.run, args.kernel, args.as_kernel, args.matrix)
    except HoldError as e:
        print(f"hold: error: {e}", file=sys.stderr)
        return 2
    for name in left:
        print(f"hold: {name}: left out, {args.as_kernel} does not run its scenario", file=sys.stderr)
    for name, failed, n in held:
        print(f"{name}: {len(failed)} of {n} checks fail" + (": " + " ".join(failed) if failed else ""))
    print(f"hold: {args.kernel} held to {args.as_kernel}'s expected values: "
          f"{sum(1 for _, f, _ in held if f)} of {len(held)} cells fail, {sum(len(f) for _, f, _ in held)} checks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
