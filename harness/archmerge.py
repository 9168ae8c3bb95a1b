"""One arch-check table from several scripts/arch-check.sh runs: the fleet's job per arch and
its defconfig job, merged into the table one run over the same arches prints.

    python3 -m harness.archmerge DIR... -o OUT

Each DIR holds the rows.tsv of one run (scripts/arch-check.sh --rows DIR/rows.tsv; a run
without --rows writes results/arch-check/rows.tsv).
OUT/table.txt gets the header, the rows (arches in the order of `python3 -m harness.arch
names`, then the defconfig rows in the order the script checks them), the rerun lines and
the summary, byte for byte as one run prints them; the summary's time is the sum of the
runs'. The table is printed too, and OUT as the last line. Exit 1 if a row failed (as the
script), else 0.

Refused with one line and exit 2, before anything is written: a DIR that is missing or has no
rows.tsv (its job stopped before its table), a rows file that is not the script's, an arch or
a defconfig in two runs, defconfig rows from two runs, defconfig rows that are not the ones
their run line names, runs of different trees, of different arch folders (HARNESS_ARCH_DIR),
or with and without the full images.
"""
import os
import re
import sys

from harness import atomic
from harness import arch as harness_arch
from harness.cli import ArgParser, made

ROWS = "rows.tsv"
TABLE = "table.txt"
TREES = ("6.1-patched", "6.1")
# printf '%-10s %-11s %-34s %-11s %5s  %s' of scripts/arch-check.sh's row() and report().
WIDTHS = (10, 11, 34, 11)
TIME_WIDTH = 5
NAME_RE = re.compile(r"[a-z0-9_]+")
DEFCONFIG_BUILT_RE = re.compile(r"[a-z0-9_]+ savedefconfig")
# The run line's DEFCONFIGS: yes (the nine), no, or the --defconfig names joined by commas.
DEFCONFIG_LIST_RE = re.compile(r"[a-z0-9]+:[a-z0-9_]+(,[a-z0-9]+:[a-z0-9_]+)*")
ESCAPES = {"\\": "\\", "t": "\t", "n": "\n"}
# The bytes of a note as the script wrote them, a compiler's broken UTF-8 included (first_error
# cuts its line at 100 bytes, which can split a character).
ENCODING = {"encoding": "utf-8", "errors": "surrogateescape"}


class RowsError(Exception):
    pass


class Row:
    def __init__(self, kind, counted, fields, where):
        self.kind, self.counted, self.fields, self.where = kind, counted, fields, where

    @property
    def arch(self):
        return self.fields[0]


class Run:
    """One rows file: the run's settings (run line) and its rows in the order it printed them."""

    def __init__(self, folder, settings, rows):
        self.folder = folder
        self.tree, self.images, self.builds, self.defconfigs, self.arch_dir, seconds = settings
        self.seconds = int(seconds)
        self.rows = rows

    @property
    def asked(self):
        """The --defconfig names the run was given, or [] (all nine, or none)."""
        return [] if self.defconfigs in ("yes", "no") else self.defconfigs.split(",")


def unescape(field, where):
    """scripts/arch-check.sh's tsv_line backwards: \\\\, \\t and \\n; any other backslash is
    not the script's."""
    def one(m):
        if m.group(1) not in ESCAPES:
            raise RowsError(f"{where}: a backslash that is not \\\\, \\t or \\n")
        return ESCAPES[m.group(1)]
    return re.sub(r"\\(.?)", one, field, flags=re.S)


def fields_of(line, n, where):
    parts = line.split("\t")
    if len(parts) != n:
        raise RowsError(f"{where}: {len(parts)} fields, not {n} (a rows file of scripts/arch-check.sh?)")
    return [unescape(p, where) for p in parts]


def check_settings(s, where):
    tree, images, builds, defconfigs, _, seconds = s
    if tree not in TREES:
        raise RowsError(f"{where}: unknown tree {tree!r} ({' or '.join(TREES)})")
    for what, v in (("images", images), ("builds", builds)):
        if v not in ("yes", "no"):
            raise RowsError(f"{where}: {what} is {v!r}, not yes or no")
    if defconfigs not in ("yes", "no") and not DEFCONFIG_LIST_RE.fullmatch(defconfigs):
        raise RowsError(f"{where}: defconfigs is {defconfigs!r}, not yes, no or KARCH:NAME,...")
    if not re.fullmatch(r"[0-9]{1,9}", seconds):
        raise RowsError(f"{where}: seconds {seconds!r} is not a whole number")


def check_row(kind, counted, fields, settings, where):
    allowed = ("failed", "broken", "-") if kind == "arch" else ("failed", "-")
    if counted not in allowed:
        raise RowsError(f"{where}: counted is {counted!r}, not {', '.join(allowed[:-1])} or {allowed[-1]}")
    if not NAME_RE.fullmatch(fields[0]):
        raise RowsError(f"{where}: arch {fields[0]!r} is not a plain name")
    # The run line says what the run did: rows of a part it skipped are not its.
    if settings[2 if kind == "arch" else 3] == "no":
        raise RowsError(f"{where}: a {kind} row in a run that did not check them")
    # The rerun line names a failed defconfig from its "built" field, as the script does.
    if kind == "defconfig" and not DEFCONFIG_BUILT_RE.fullmatch(fields[2]):
        raise RowsError(f"{where}: a defconfig row's built field {fields[2]!r} is not '<defconfig> savedefconfig'")


def read_run(folder):
    """The Run of folder/rows.tsv, or RowsError naming the file and line."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise RowsError(f"{folder}: not a folder")
    if not os.path.isdir(folder):
        raise RowsError(f"{folder}: no such folder (its job left no rows: did it stop before its table?)")
    path = os.path.join(folder, ROWS)
    if not os.path.isfile(path):
        raise RowsError(f"{path}: no such file (its job stopped before its table?)")
    with open(path, newline="", **ENCODING) as f:
        text = f.read()
    # Written whole by the script, so a last line without its newline is not the script's.
    if not text.endswith("\n"):
        raise RowsError(f"{path}: does not end with a newline (cut short?)")
    settings, rows = None, []
    for n, line in enumerate(text[:-1].split("\n"), 1):
        where = f"{path}:{n}"
        if line.startswith("#"):
            continue
        kind = line.split("\t", 1)[0]
        if settings is None:
            if kind != "run":
                raise RowsError(f"{where}: expected the run line (run TREE IMAGES BUILDS DEFCONFIGS "
                                "HARNESS_ARCH_DIR SECONDS) first")
            settings = fields_of(line, 7, where)[1:]
            check_settings(settings, where)
        elif kind in ("arch", "defconfig"):
            f = fields_of(line, 8, where)
            check_row(kind, f[1], f[2:], settings, where)
            rows.append(Row(kind, f[1], f[2:], where))
        else:
            raise RowsError(f"{where}: a line that is not a row (arch or defconfig)")
    if settings is None or not rows:
        raise RowsError(f"{path}: {'no run line' if settings is None else 'no rows'}")
    run = Run(folder, settings, rows)
    # A run given --defconfig checked those, in that order: rows that differ are not its.
    got = [f"{r.arch}:{r.fields[2].split()[0]}" for r in rows if r.kind == "defconfig"]
    if run.asked and got != run.asked:
        raise RowsError(f"{path}: the defconfig rows ({' '.join(got) or 'none'}) are not the ones "
                        f"its run line names ({' '.join(run.asked)})")
    return run


def same(runs, value, label):
    """All runs agree on value(run), or RowsError naming each value and the first run with it."""
    first = {}
    for r in runs:
        first.setdefault(value(r), r.folder)
    if len(first) > 1:
        raise RowsError(f"the runs have different {label}: "
                        + ", ".join(f"{v or '(none)'} in {folder}" for v, folder in first.items()))


def combine(runs):
    """The rows of the table one run would print: every arch row in names order, then the
    defconfig rows of the one run that checked them; refuses what one run cannot have made."""
    same(runs, lambda r: r.tree, "trees")
    same(runs, lambda r: r.arch_dir, "arch folders (HARNESS_ARCH_DIR)")
    # --no-image changes only what a build run built and its rerun line.
    same([r for r in runs if r.builds == "yes"], lambda r: r.images,
         "image settings (with and without --no-image)")
    checked = [r for r in runs if r.defconfigs != "no"]
    if len(checked) > 1:
        raise RowsError(f"the defconfig rows are in both {checked[0].folder} and {checked[1].folder}")
    seen = {}
    for r in runs:
        for row in r.rows:
            key = (row.kind, row.arch) if row.kind == "arch" else (row.kind, row.arch, row.fields[2])
            if key in seen:
                raise RowsError(f"{' '.join(key[1:])} is in both {seen[key].where} and {row.where}")
            seen[key] = row
    arches = [row for r in runs for row in r.rows if row.kind == "arch"]
    order = arch_order(runs[0].arch_dir)
    arches.sort(key=lambda row: order.get(row.arch, len(order)))  # stable: unknown ones as given
    return arches + [row for r in checked for row in r.rows if row.kind == "defconfig"]


def arch_order(arch_dir):
    """{arch: position} of `python3 -m harness.arch names` with the runs' HARNESS_ARCH_DIR
    (the default folder if they had none); empty if that folder is gone (a test's)."""
    saved = os.environ.get("HARNESS_ARCH_DIR")
    try:
        if arch_dir:
            os.environ["HARNESS_ARCH_DIR"] = arch_dir
        else:
            os.environ.pop("HARNESS_ARCH_DIR", None)
        return {name: i for i, name in enumerate(harness_arch.names())}
    except OSError:
        return {}
    finally:
        if saved is None:
            os.environ.pop("HARNESS_ARCH_DIR", None)
        else:
            os.environ["HARNESS_ARCH_DIR"] = saved


def pad(text, width, right=False):
    """printf's %-Ns / %Ns in bash: the width counts bytes, not characters."""
    fill = " " * max(0, width - len(text.encode(**ENCODING)))
    return fill + text if right else text + fill


def table_line(fields):
    a, c, b, res, t, note = fields
    return " ".join(pad(x, w) for x, w in zip((a, c, b, res), WIDTHS)) + f" {pad(t, TIME_WIDTH, True)}  {note}"


def table(runs, rows):
    """report() of scripts/arch-check.sh over the combined rows."""
    first = runs[0]
    lines = [table_line(("arch", "compiler", "built", "result", "time", "note"))]
    lines += [table_line(r.fields) for r in rows]
    failed_arches = [r.arch for r in rows if r.kind == "arch" and r.counted == "failed"]
    failed_defconfigs = [f"{r.arch}:{r.fields[2].split()[0]}" for r in rows
                         if r.kind == "defconfig" and r.counted == "failed"]
    cmd = "scripts/arch-check.sh"
    if first.arch_dir:
        cmd = f"HARNESS_ARCH_DIR={first.arch_dir} {cmd}"
    tree = "" if first.tree == "6.1-patched" else f" --tree {first.tree}"
    if failed_arches:
        images = next(r.images for r in runs if r.builds == "yes")
        no_image = "" if images == "yes" else " --no-image"
        lines.append(f"rerun the failed builds: {cmd}{tree}{no_image} --no-defconfigs"
                     + "".join(f" {a}" for a in failed_arches))
    if failed_defconfigs:
        lines.append(f"rerun the failed defconfigs: {cmd} --defconfigs-only{tree}"
                     + "".join(f" --defconfig {d}" for d in failed_defconfigs))
    asked = [d for r in runs for d in r.asked]
    if asked:
        lines.append(f"only the defconfigs asked for: {' '.join(asked)}")
    fails = sum(r.counted == "failed" for r in rows)
    broken = sum(r.counted == "broken" for r in rows)
    summary = f"{fails} failed" + (f", {broken} broken before the series (not counted)" if broken else "")
    # The sum of the runs' times, not the longest: the jobs run side by side, but one run
    # does the same work one arch after another, and the sum is what its summary would say
    # (the fleet's own wall time is the CI engine's to show).
    lines.append(f"{summary}, {sum(r.seconds for r in runs)}s")
    return "\n".join(lines) + "\n", fails


def show(text):
    """The table on stdout as its bytes (a note may hold bytes that are not UTF-8)."""
    out = getattr(sys.stdout, "buffer", None)
    if out is None:
        sys.stdout.write(text)
        return
    sys.stdout.flush()
    out.write(text.encode(**ENCODING))
    out.flush()


def main(argv=None):
    ap = ArgParser("archmerge", prog="python3 -m harness.archmerge", description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", metavar="DIR", help=f"a folder holding one run's {ROWS}")
    ap.add_argument("-o", dest="out", required=True, metavar="OUT", help=f"where {TABLE} goes (a folder)")
    args = ap.parse_args(argv)

    def make():
        runs = [read_run(os.path.normpath(d)) for d in args.dirs]
        rows = combine(runs)
        text, fails = table(runs, rows)
        if os.path.exists(args.out) and not os.path.isdir(args.out):
            raise RowsError(f"-o {args.out}: exists and is not a folder")
        os.makedirs(args.out, exist_ok=True)
        atomic.write_text(os.path.join(args.out, TABLE), text, errors="surrogateescape")
        show(text)
        return args.out, 1 if fails else 0
    return made("archmerge", make, RowsError)

if __name__ == "__main__":
    sys.exit(main())
