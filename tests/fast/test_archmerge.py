"""make arch-check as fleet jobs, without a build: scripts/arch-check.sh's rows file and the
merge of several runs' rows (harness/archmerge.py).

The reference is the script itself: its tsv_line(), row(), report() and rows_tsv() are cut
out of scripts/arch-check.sh and run in bash on given rows, which gives the table one run
prints and the rows file it writes, byte for byte.

(a) the captured-style fleet (tests/fast/data/arch-check/fleet: a job per arch and the
    defconfig job, rows as a whole make arch-check gave them): its rows files are what the
    script writes, its merge is fleet-table.txt, and fleet-table.txt is what one run over
    every arch prints;
(b) failures and the run's settings (a FAILED and a NEW WARN arch, a defconfig with runtime
    disable on, --tree 6.1, --no-image, HARNESS_ARCH_DIR, fields with a tab, a newline, a
    backslash and bytes that are not UTF-8): the merge prints what one run prints, rerun
    lines included, and exits 1;
(c) refusals, one line and exit 2, nothing written: a job's folder missing or without rows,
    malformed rows files, an arch or the defconfig rows in two jobs, jobs of different trees,
    arch folders or image settings.

The fleet's files, after a deliberate change of the script's format:
    python3 tests/fast/test_archmerge.py
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from harness import archmerge  # noqa: E402
from harness import arch as harness_arch  # noqa: E402
from cellfiles import call_main  # noqa: E402

SCRIPT = os.path.join(ROOT, "scripts", "arch-check.sh")
DATA = os.path.join(ROOT, "tests", "fast", "data", "arch-check")
FLEET = os.path.join(DATA, "fleet")
GOLDEN = os.path.join(DATA, "fleet-table.txt")
ENC = {"encoding": "utf-8", "errors": "surrogateescape"}
LOG = "build/src/linux-6.1-patched/build-archcheck-{}/check.log"
ALPHA_ERR = ("arch/alpha/include/asm/pgtable.h:322:9: error: too few arguments to function "
             "\u2018page_table_check_pte_clear\u2019".encode()[:100].decode(**ENC))  # first_error cuts at 100 bytes


def built(arch, image, seconds, note, result="ok", counted="-"):
    return ("arch", counted, arch, "gcc 12.2.0", f"security/ bpf {image}", result, f"{seconds}s", note)


# The rows of a whole make arch-check (the times of docs/measurements.md's runs): one job per
# arch, each job's seconds a little more than its row's; then the defconfig job.
NO_WARN = "no warnings, baseline not built"
ARCH_ROWS = {
    "alpha": (built("alpha", "", 48, f"unpatched 6.1 fails the same way: {ALPHA_ERR} (log: {LOG.format('alpha')})",
                    "BASE BROKEN", "broken"), 49),
    "arc": (built("arc", "", 64, NO_WARN), 65),
    "arm": (built("arm", "zImage", 1112, ""), 1113),
    "arm64": (built("arm64", "Image", 566, NO_WARN), 567),
    "i386": (built("i386", "bzImage", 51, "also merged: # CONFIG_WERROR is not set"), 52),
    "loongarch": (("arch", "-", "loongarch", "-", "-", "not built", "-",
                   "Debian bookworm has no gcc-loongarch64-linux-gnu"), 1),
    "m68k": (built("m68k", "", 57, NO_WARN), 58),
    "mips": (built("mips", "", 92, NO_WARN), 93),
    "parisc": (built("parisc", "", 71, NO_WARN), 72),
    "powerpc": (built("powerpc", "", 88, NO_WARN), 89),
    "riscv64": (built("riscv64", "Image", 38, NO_WARN), 39),
    "s390": (built("s390", "", 83, NO_WARN), 84),
    "sh": (built("sh", "", 45, NO_WARN), 46),
    "sparc": (built("sparc", "", 31, NO_WARN), 32),
    "um": (built("um", "linux", 363, "not on this arch: SECURITY_LANDLOCK BPF_LSM "), 364),
    "x86_64": (built("x86_64", "bzImage", 505, NO_WARN), 506),
}
DEFCONFIGS = (("x86", "x86_64_defconfig", 25), ("x86", "i386_defconfig", 25), ("s390", "defconfig", 22),
              ("s390", "debug_defconfig", 22), ("mips", "bigsur_defconfig", 23),
              ("mips", "loongson2k_defconfig", 23), ("mips", "loongson3_defconfig", 26),
              ("loongarch", "loongson3_defconfig", 23), ("powerpc", "ppc6xx_defconfig", 23))
DEFCONFIG_SECONDS = 116


def defconfig_row(k, c, seconds, result="ok", tree="6.1-patched"):
    note = "runtime disable off" if result == "ok" else f"linux-{tree} builds runtime disable from it"
    return ("defconfig", "-" if result == "ok" else "failed", k, "-", f"{c} savedefconfig", result, f"{seconds}s", note)


class Job:
    """One arch-check.sh run: its settings and rows."""

    def __init__(self, name, rows, seconds, tree="6.1-patched", images="yes", arch_dir="", asked=()):
        self.name, self.rows, self.seconds = name, list(rows), seconds
        self.tree, self.images, self.arch_dir = tree, images, arch_dir
        self.builds = "no" if name == "defconfigs" else "yes"
        self.defconfigs = "yes" if name == "defconfigs" else "no"
        self.asked = list(asked)  # the --defconfig names the job was given


def fleet_jobs(**settings):
    jobs = [Job(a, [row], s, **settings) for a, (row, s) in ARCH_ROWS.items()]
    tree = settings.get("tree", "6.1-patched")
    return jobs + [Job("defconfigs", [defconfig_row(k, c, s, tree=tree) for k, c, s in DEFCONFIGS],
                       DEFCONFIG_SECONDS, **settings)]


# --- the script's own functions ----------------------------------------------------------------

def script_functions():
    with open(SCRIPT) as f:
        text = f.read()
    out = []
    for name in ("tsv_line", "row", "report", "rows_tsv"):
        m = re.search(rf"^{name}\(\) {{\n.*?^}}\n", text, re.M | re.S)
        assert m, f"scripts/arch-check.sh has no {name}() any more: this test must follow it"
        out.append(m.group(0))
    return "".join(out)


def q(text):
    return shlex.quote(str(text))


def run_script(rows, tree, images, builds, defconfigs, arch_dir, seconds, rows_file, asked=()):
    """What scripts/arch-check.sh prints for these rows (its stdout, bytes) and writes to
    rows_file: its own functions, with the settings and counters its main part sets (asked:
    its --defconfig names)."""
    lines = ["set -euo pipefail", "info() { :; }", script_functions(),
             "rows=() tsv=() fails=0 broken=0 failed_arches='' failed_defconfigs='' total=$SECONDS",
             f"tree={q(tree)} images={q(images)} builds={q(builds)} check_defconfigs={q(defconfigs)}",
             f"only_defconfigs=({' '.join(q(d) for d in asked)})",
             f"elapsed={seconds}",
             f"export HARNESS_ARCH_DIR={q(arch_dir)}" if arch_dir else "unset HARNESS_ARCH_DIR"]
    lines += ["row " + " ".join(q(f) for f in r) for r in rows]
    lines.append(f"report; rows_tsv >{q(rows_file)}")
    p = subprocess.run(["bash"], input="\n".join(lines).encode(**ENC), capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode(**ENC)
    return p.stdout


def write_job(job, dest):
    """The job's folder as its CI job leaves it: rows.tsv, written by the script's functions."""
    folder = os.path.join(dest, f"arch-check-{job.name}")
    os.makedirs(folder)
    run_script(job.rows, job.tree, job.images, job.builds, job.defconfigs, job.arch_dir, job.seconds,
               os.path.join(folder, "rows.tsv"), job.asked)
    return folder


def one_run(jobs, tmp):
    """What one run over all the jobs' rows prints: arch rows in `harness.arch names` order
    (the order the fleet generator gives the jobs), then the defconfig rows; its time the
    sum of the jobs' (harness/archmerge.py's rule)."""
    j = jobs[0]
    rows = [r for job in jobs for r in job.rows if r[0] == "arch"] + \
        [r for job in jobs for r in job.rows if r[0] == "defconfig"]
    return run_script(rows, j.tree, j.images, "yes", "yes", j.arch_dir, sum(x.seconds for x in jobs),
                      os.path.join(tmp, "one-run-rows.tsv"), [d for x in jobs for d in x.asked])


def merge(*args):
    """python3 -m harness.archmerge in this process: (exit status, stdout, stderr)."""
    return call_main(archmerge.main, *args)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


# --- (a) the fleet -----------------------------------------------------------------------------

def fleet_folders():
    return [os.path.join(FLEET, f"arch-check-{a}") for a in [*ARCH_ROWS, "defconfigs"]]


def test_the_fleet_rows_are_what_the_script_writes(tmp_path):
    for job, folder in zip(fleet_jobs(), fleet_folders()):
        mine = write_job(job, tmp_path)
        assert read_bytes(os.path.join(folder, "rows.tsv")) == read_bytes(os.path.join(mine, "rows.tsv")), folder


def test_the_golden_table_is_what_one_run_prints(tmp_path):
    assert one_run(fleet_jobs(), tmp_path) == read_bytes(GOLDEN)


@pytest.mark.parametrize("order", ["pipeline", "reversed"])
def test_the_merged_fleet_is_the_golden_table(tmp_path, order):
    folders = fleet_folders()
    if order == "reversed":
        folders.reverse()
    rc, out, err = merge(*folders, "-o", tmp_path / "table")
    assert rc == 0 and err == "", err
    assert read_bytes(tmp_path / "table" / "table.txt") == read_bytes(GOLDEN)
    assert out.splitlines()[-1] == str(tmp_path / "table")
    assert out.encode(**ENC) == read_bytes(GOLDEN) + f"{tmp_path / 'table'}\n".encode()


def test_the_fleet_follows_the_arch_model():
    """The fleet's arches are arches of configs/arch, listed in names order (the order the
    generator gives the jobs and one run prints them)."""
    names = harness_arch.names()
    assert set(ARCH_ROWS) <= set(names)
    assert [a for a in names if a in ARCH_ROWS] == list(ARCH_ROWS)


# --- (b) failures and settings ------------------------------------------------------------------

def failing(jobs):
    """riscv64 FAILED, sparc NEW WARN, one defconfig with runtime disable on."""
    by = {j.name: j for j in jobs}
    by["riscv64"].rows = [built("riscv64", "Image", 40, f"security/selinux/hooks.c:7201:2: error: injected "
                                f"(log: {LOG.format('riscv64')})", "FAILED", "failed")]
    by["sparc"].rows = [built("sparc", "", 33, "2 warnings not in the unpatched build: build/src/linux-6.1-patched/"
                              "build-archcheck-sparc/new-warnings; ", "NEW WARN", "failed")]
    tree = jobs[0].tree
    by["defconfigs"].rows[3] = defconfig_row("s390", "debug_defconfig", 22, "RUNTIME DISABLE ON", tree)
    return jobs


def odd_fields(jobs):
    """Notes as a compiler may leave them: a tab, a newline, a backslash, broken UTF-8."""
    by = {j.name: j for j in jobs}
    bad = b"arch/arc/kernel/setup.c:1:1: error: \xe2\x80 cut\tin two \\n".decode(**ENC)
    by["arc"].rows = [built("arc", "", 64, f"{bad}\nsecond line (log: {LOG.format('arc')})", "FAILED", "failed")]
    by["m68k"].rows = [("arch", "-", "m68k", "gcc 12.2.0 \u00e9", "security/ bpf ", "ok", "57s", "caf\u00e9")]
    return jobs


def asked(jobs, names=("x86:x86_64_defconfig", "s390:debug_defconfig", "powerpc:ppc6xx_defconfig")):
    """The defconfig job given --defconfig for three of the nine, one of them failed."""
    rows = {f"{k}:{c}": defconfig_row(k, c, s) for k, c, s in DEFCONFIGS}
    rows["s390:debug_defconfig"] = defconfig_row("s390", "debug_defconfig", 22, "RUNTIME DISABLE ON")
    jobs[-1] = Job("defconfigs", [rows[n] for n in names], 40, asked=names)
    return jobs


CASES = {
    "failures": lambda: failing(fleet_jobs()),
    "tree-6.1": lambda: failing(fleet_jobs(tree="6.1")),
    "tree-6.1-all-defconfigs-on": lambda: [
        *fleet_jobs(tree="6.1")[:-1],
        Job("defconfigs", [defconfig_row(k, c, s, "RUNTIME DISABLE ON", "6.1") for k, c, s in DEFCONFIGS],
            DEFCONFIG_SECONDS, tree="6.1")],
    "no-image": lambda: failing(fleet_jobs(images="no")),
    "arch-dir": lambda: failing(fleet_jobs(arch_dir="/tmp/fault arches")),
    "odd-fields": lambda: odd_fields(fleet_jobs()),
    "defconfigs-only": lambda: fleet_jobs()[-1:],
    "defconfigs-asked": lambda: asked(fleet_jobs()),
    "defconfigs-asked-only": lambda: asked(fleet_jobs())[-1:],
    "builds-only-with-failure": lambda: failing(fleet_jobs())[:-1],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_merge_prints_what_one_run_prints(tmp_path, case):
    jobs = CASES[case]()
    folders = [write_job(j, tmp_path / "jobs") for j in jobs]
    rc, out, err = merge(*folders, "-o", tmp_path / "table")
    want = one_run(jobs, tmp_path)
    assert read_bytes(tmp_path / "table" / "table.txt") == want
    fails = sum(r[1] == "failed" for j in jobs for r in j.rows)
    assert rc == (1 if fails else 0), err
    assert want.decode(**ENC).splitlines()[-1].startswith(f"{fails} failed")
    names = [d for j in jobs for d in j.asked]
    assert (f"only the defconfigs asked for: {' '.join(names)}" in want.decode(**ENC).splitlines()) == bool(names)


def test_a_failure_is_exit_1_and_its_rerun_line(tmp_path):
    folders = [write_job(j, tmp_path / "jobs") for j in failing(fleet_jobs())]
    rc, out, _ = merge(*folders, "-o", tmp_path / "table")
    assert rc == 1
    lines = out.splitlines()
    assert lines[-4:] == ["rerun the failed builds: scripts/arch-check.sh --no-defconfigs riscv64 sparc",
                          "rerun the failed defconfigs: scripts/arch-check.sh --defconfigs-only"
                          " --defconfig s390:debug_defconfig",
                          "3 failed, 1 broken before the series (not counted), 3346s",
                          str(tmp_path / "table")]


def test_arches_unknown_to_the_arch_folder_keep_their_order(tmp_path):
    """Fault arches of a test whose folder is gone: after the known ones, as given."""
    jobs = [Job(a, [built(a, "", 5, "x", "FAILED", "failed")], 6, arch_dir=str(tmp_path / "gone"))
            for a in ("fault_patched", "noselinux", "fault_both")]
    folders = [write_job(j, tmp_path / "jobs") for j in jobs]
    rc, out, _ = merge(*folders, "-o", tmp_path / "table")
    assert rc == 1
    assert [line.split()[0] for line in out.splitlines()[1:4]] == ["fault_patched", "noselinux", "fault_both"]
    assert f"HARNESS_ARCH_DIR={tmp_path / 'gone'} scripts/arch-check.sh --no-defconfigs " \
        "fault_patched noselinux fault_both" in out


def test_the_command(tmp_path):
    """As the table job runs it: a process of its own, exit status, the path last."""
    p = subprocess.run([sys.executable, "-m", "harness.archmerge", *fleet_folders(), "-o", str(tmp_path / "t")],
                       cwd=ROOT, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout == read_bytes(GOLDEN) + f"{tmp_path / 't'}\n".encode()


# --- (c) refusals -------------------------------------------------------------------------------

def refused(rc, out, err, tmp_path, words):
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("archmerge: error: ") and words in err, err
    assert out == "" and not (tmp_path / "table").exists()


@pytest.fixture
def fleet(tmp_path):
    return [str(shutil.copytree(f, tmp_path / "jobs" / os.path.basename(f))) for f in fleet_folders()]


def test_a_job_that_left_no_rows_is_named(fleet, tmp_path):
    """The generated table job lists every job's folder: one that its job never wrote."""
    shutil.rmtree(fleet[10])
    refused(*merge(*fleet, "-o", tmp_path / "table"), tmp_path, f"{fleet[10]}: no such folder")
    os.makedirs(fleet[10])
    refused(*merge(*fleet, "-o", tmp_path / "table"), tmp_path, f"{fleet[10]}/rows.tsv: no such file")


def edit_rows(folder, change):
    path = os.path.join(folder, "rows.tsv")
    with open(path, newline="", **ENC) as f:
        text = f.read()
    with open(path, "w", newline="", **ENC) as f:
        f.write(change(text))


def replace_line(n, new):
    """Line n (1-based, comments counted) of a rows file replaced."""
    def change(text):
        lines = text.split("\n")
        lines[n - 1] = new
        return "\n".join(lines)
    return change


RUN = "run\t6.1-patched\tyes\tyes\tno\t\t39"
ROW = "arch\t-\triscv64\tgcc 12.2.0\tsecurity/ bpf Image\tok\t38s\tno warnings"


@pytest.mark.parametrize("change, words", [
    (lambda t: t[:-1], "does not end with a newline"),
    (lambda t: t.replace("\tok\t", "\tok\textra\t"), ":5: 9 fields, not 8"),
    (lambda t: t.replace("\t39\n", "\n"), ":4: 6 fields, not 7"),
    (lambda t: t.replace("no warnings", "no \\q warnings"), ":5: a backslash that is not"),
    (lambda t: t.replace("no warnings", "no warnings\\"), ":5: a backslash that is not"),
    (replace_line(4, ROW), ":4: expected the run line"),
    (replace_line(5, ""), ":5: a line that is not a row"),
    (replace_line(5, "# only comments"), "no rows"),
    (replace_line(4, RUN.replace("6.1-patched", "6.2")), "unknown tree '6.2'"),
    (replace_line(4, RUN.replace("\tyes\tyes", "\tmaybe\tyes")), "images is 'maybe'"),
    (replace_line(4, RUN.replace("39", "3.5")), "seconds '3.5' is not a whole number"),
    (replace_line(5, ROW.replace("\t-\t", "\tlost\t", 1)), "counted is 'lost', not failed, broken or -"),
    (replace_line(5, ROW.replace("riscv64", "../x")), "arch '../x' is not a plain name"),
    (replace_line(5, ROW.replace("arch", "defconfig", 1)), "a defconfig row in a run that did not check them"),
    (replace_line(4, RUN.replace("\tno\t", "\tx86 x86_64_defconfig\t")), "defconfigs is 'x86 x86_64_defconfig', not"),
    (lambda t: "", "does not end with a newline"),
    (lambda t: "\n", ":1: expected the run line"),
], ids=["cut-short", "extra-field", "run-short", "unknown-escape", "trailing-backslash", "row-first",
        "blank-line", "no-rows", "tree", "images", "seconds", "counted", "arch-name", "defconfig-in-build-job",
        "defconfigs-field",
        "empty", "blank"])
def test_a_malformed_rows_file_is_refused(fleet, tmp_path, change, words):
    riscv = fleet[10]
    assert riscv.endswith("arch-check-riscv64")
    edit_rows(riscv, change)
    refused(*merge(*fleet, "-o", tmp_path / "table"), tmp_path, words)


def test_an_arch_in_two_jobs_is_refused(fleet, tmp_path):
    refused(*merge(*fleet, fleet[10], "-o", tmp_path / "table"), tmp_path, "riscv64 is in both ")
    # within one run too (arch-check.sh riscv64 riscv64)
    edit_rows(fleet[10], lambda t: t + t.split("\n")[-2] + "\n")
    refused(*merge(*fleet, "-o", tmp_path / "table"), tmp_path, "riscv64 is in both ")


def test_defconfig_rows_of_two_jobs_are_refused(fleet, tmp_path):
    other = shutil.copytree(fleet[-1], tmp_path / "jobs" / "again")
    refused(*merge(*fleet, other, "-o", tmp_path / "table"), tmp_path, "the defconfig rows are in both ")


@pytest.mark.parametrize("field, value, words", [
    (1, "6.1", "different trees"),
    (5, "/tmp/faults", "different arch folders (HARNESS_ARCH_DIR)"),
    (2, "no", "different image settings"),
])
def test_jobs_of_different_runs_are_refused(fleet, tmp_path, field, value, words):
    def change(text):
        lines = text.split("\n")
        run = lines[3].split("\t")
        run[field] = value
        lines[3] = "\t".join(run)
        return "\n".join(lines)
    edit_rows(fleet[10], change)
    refused(*merge(*fleet, "-o", tmp_path / "table"), tmp_path, words)


def test_bad_arguments(fleet, tmp_path):
    (tmp_path / "table").write_text("a file\n")
    rc, out, err = merge(*fleet, "-o", tmp_path / "table")
    assert rc == 2 and "exists and is not a folder" in err and len(err.splitlines()) == 1
    rc, out, err = merge("-o", tmp_path / "elsewhere")
    assert rc == 2 and err.startswith("archmerge: error: ") and len(err.splitlines()) == 1


# --- the data files ----------------------------------------------------------------------------

def write_fleet():
    """tests/fast/data/arch-check: the fleet's job folders and fleet-table.txt, from the rows
    above through the script's own functions."""
    shutil.rmtree(FLEET, ignore_errors=True)
    os.makedirs(FLEET)
    jobs = fleet_jobs()
    for job in jobs:
        write_job(job, FLEET)
    with open(GOLDEN, "wb") as f:
        f.write(one_run(jobs, FLEET))
    os.remove(os.path.join(FLEET, "one-run-rows.tsv"))


if __name__ == "__main__":
    write_fleet()


@pytest.mark.parametrize("args, words", [
    (["--table"], "--table needs a file name"),
    (["--rows", ""], "--rows needs a file name"),
    (["--bogus"], "unknown option '--bogus' (--no-image, --defconfigs-only, --no-defconfigs, "
                  "--defconfig KARCH:NAME, --tree NAME, --rows FILE, --table FILE, --fresh)"),
    (["--defconfig"], "--defconfig needs KARCH:NAME (x86:i386_defconfig)"),
    (["--defconfigs-only", "--defconfig", "x86:nope_defconfig"],
     "unknown defconfig x86:nope_defconfig (one of: x86:x86_64_defconfig x86:i386_defconfig"),
    (["--defconfigs-only", "--defconfig", "x86:x86_64_defconfig x86:i386_defconfig"],
     "unknown defconfig x86:x86_64_defconfig\\ x86:i386_defconfig (one of:"),
    (["--defconfigs-only", "--defconfig", "x86:i386_defconfig", "--defconfig", "x86:i386_defconfig"],
     "--defconfig x86:i386_defconfig given twice"),
    (["--no-defconfigs", "--defconfig", "x86:i386_defconfig"], "--defconfig and --no-defconfigs leave nothing to do"),
])
def test_the_scripts_bad_options_are_one_line(args, words):
    r = subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and words in r.stderr, r.stderr


@pytest.mark.parametrize("built", ["", "x86_64_defconfig", "../x savedefconfig", "a b savedefconfig"])
def test_a_defconfig_row_names_its_defconfig(fleet, tmp_path, built):
    """The rerun line is made of the row's defconfig name: a row that has none is refused."""
    defconfigs = fleet[-1]
    assert defconfigs.endswith("arch-check-defconfigs")
    edit_rows(defconfigs, lambda t: t.replace("\tx86_64_defconfig savedefconfig\t", f"\t{built}\t", 1))
    refused(*merge(*fleet, "-o", tmp_path / "table"), tmp_path, "a defconfig row's built field")


@pytest.mark.parametrize("run", [
    "x86:i386_defconfig,s390:debug_defconfig,powerpc:ppc6xx_defconfig",
    "x86:x86_64_defconfig,powerpc:ppc6xx_defconfig",
    "s390:debug_defconfig,x86:x86_64_defconfig,powerpc:ppc6xx_defconfig",
], ids=["other-name", "a-row-not-named", "other-order"])
def test_defconfig_rows_not_asked_for_are_refused(tmp_path, run):
    """A run given --defconfig checked those names, in that order, and no other."""
    jobs = asked(fleet_jobs())
    folders = [write_job(j, tmp_path / "jobs") for j in jobs]
    edit_rows(folders[-1], lambda t: t.replace(",".join(jobs[-1].asked), run, 1))
    refused(*merge(*folders, "-o", tmp_path / "table"), tmp_path, "are not the ones its run line names")
