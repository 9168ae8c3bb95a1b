"""The matrix as a CI pipeline: a deterministic split into shards, and the GitLab CI child
pipeline or GitHub Actions workflow that builds, boots and merges a set of matrix.yaml.

    python3 -m harness.pipeline gitlab --set NAME [--only F] [--shards N] [--matrix FILE] [-o FILE]
    python3 -m harness.pipeline github --set NAME [--only F] [--shards N] [--matrix FILE] [-o FILE]
    python3 -m harness.pipeline gitlab|github [--set NAME ...] --arch-check [--arches A,B]

writes the file (default build/ci/gitlab-pipeline.yml, build/ci/github-workflow.yml) and
prints its path as the last line. Bad input: one line, exit 2.

The pipeline: a job per kernel build (tree x config x arch) whose artifact is the build
folder cut to what a boot needs (boot image, vmlinux, .config); a job per guest image; a
boot job per shard, which needs exactly the builds its cells use and runs
`scripts/matrix.sh --shard I/N --prebuilt`; a merge job (python3 -m harness.merge) whose
junit.xml is the test report.

With --arch-check (alone or beside --set): make arch-check as jobs, one per arch
(scripts/arch-check.sh --no-defconfigs ARCH, full image included where the arch's data file
names one) and one for the defconfig rows (--defconfigs-only), each keeping its rows in its
own folder, results/arch-check-<job>/, and a table job that merges them (python3 -m
harness.archmerge) into results/arch-check/table.txt, the table one run would print.

The guest image is not an artifact: it is a 2 GiB sparse file (about 250 MB of data, and a
second layer as large), past GitLab's default artifact size limit of 100 MB, and an archive
loses the holes, so every boot job would write 2 GiB per layer; built, it costs a minute
(x86_64) to four (arm64), and nothing once the runner's cache has it. So the image job builds
it into the runner's cache (${XDG_CACHE_HOME:-~/.cache}/selinux-backport, where
rootfs/build.sh keeps it, checked by its sha256) and fails early if the recipe breaks; a boot
job's own rootfs/build.sh then finds it there, or builds it on a runner that lacks it.
"""
import argparse
import os
import re
import sys

import yaml

from harness import ROOT, atomic
from harness.cli import ArgParser
from harness import arch as harness_arch  # the boot image's path per arch
from harness import matrixspec

# GitLab refuses a job with more than 50 needs (its default limit): the merge job needs
# every shard, the arch-check table job every arch-check job.
MAX_NEEDS = 50
MAX_SHARDS = MAX_NEEDS
IMAGE = "debian:bookworm"  # the docker runner's image; a shell runner ignores it


def shard(cells, i, n):
    """The i-th (1-based) of n shards of cells, in the order cells has.

    The rule: sort the cells by (arch, kernel, scenario) name, plain string order, so neither
    the caller's order, dict order nor a hash seed enters; lay them end to end and cut them
    into n runs of consecutive cells, the first len(cells) % n runs one cell longer than the
    rest. Shards differ by at most one cell, every cell is in exactly one, and the cells of
    one kernel build (a kernel on an arch) sit together: the n - 1 cuts split at most n - 1
    builds, so the shards together fetch at most (builds + n - 1) kernels, and only the shard
    that holds the boundary between two arches needs two guest images. n = 1 gives the cells
    as they are."""
    if not 1 <= i <= n:
        raise ValueError(f"shard {i}/{n}: need 1 <= I <= N")
    ordered = sorted(cells, key=lambda c: (c[1], c[0], c[2]))
    size, longer = divmod(len(ordered), n)
    start = (i - 1) * size + min(i - 1, longer)
    mine = set(ordered[start:start + size + (1 if i <= longer else 0)])
    return [c for c in cells if c in mine]


class Plan:
    """What the pipeline runs for the selected cells: the kernel builds (arch, tree, config),
    the arches (one guest image each) and, per shard, the builds and arches its cells use."""

    def __init__(self, spec, cells, nshards, selection):
        self.selection = selection  # the matrix.sh/merge arguments naming the cells
        self.n = nshards
        self.builds = sorted({self.build_of(spec, c) for c in cells})
        self.arches = sorted({c[1] for c in cells})
        self.ncells = len(cells)
        self.shards = []
        for i in range(1, nshards + 1):
            mine = shard(cells, i, nshards)
            self.shards.append((i, sorted({self.build_of(spec, c) for c in mine}), sorted({c[1] for c in mine})))

    @staticmethod
    def build_of(spec, cell):
        k = spec.kernels[cell[0]]
        return (cell[1], k["tree"], k["config"])

    def describe(self):
        return (f"{self.ncells} cells in {self.n} shards (harness/pipeline.py's rule), "
                f"{len(self.builds)} kernel builds, {len(self.arches)} guest images")


def folder_name(arch, tree, config):
    """build/kernel/<name>: the name scripts/kernel.sh gives a build folder."""
    return f"{tree}-{arch}-{config}"


# The names that go into the jobs' shell lines unquoted are plain (letters, digits, '.', '_',
# '-'): matrix.schema.json's "name" for kernels, scenarios, configs and sets, the tree enum,
# harness/arch.py's arch names, and --only's values must be such names (matrixspec.cells).

def kernel_script(arch, tree, config, kimage, name):
    """Build one kernel and turn build/kernel/<name> into what boot jobs receive. kernel.sh
    leaves a link into the source tree there, which an artifact would carry as a dangling
    link: it becomes a folder holding the boot image (where --prebuilt looks), vmlinux and
    .config."""
    folder = f"build/kernel/{name}"
    return [f"scripts/kernel.sh {arch} {tree} {config}",
            f"src=$(readlink -f {folder})",
            f"rm {folder}",
            f'install -D -m 644 "$src/{kimage}" {folder}/{kimage}',
            f'cp "$src/vmlinux" "$src/.config" {folder}/']


def image_script(arch):
    return [f"rootfs/build.sh {arch}", f"scripts/guest.sh {arch}"]


def boot_script(plan, i):
    # --baseline none: a CI checkout has no earlier run to compare with, and a shard's
    # comparison would not be the set's.
    return [f"scripts/matrix.sh {plan.selection} --shard {i}/{plan.n} --run shard-{i} --prebuilt --baseline none"]


def merge_script(plan):
    # --set: a cell of the set that no shard reported (its job died) is lab trouble, not lost.
    return ["scripts/need.sh python3 python3-yaml python3-jsonschema",
            f"/usr/bin/python3 -m harness.merge results/shard-* -o results/merged {plan.selection}"]


def kimage(arch):
    return harness_arch.load(arch).kimage


# --- arch-check --------------------------------------------------------------------------------

ARCH_CHECK_TABLE = "results/arch-check"  # where a single run keeps its table.txt too


def arch_check_jobs(arches):
    """[(job, arch-check.sh's arguments)]: a job per arch, then the defconfig rows' job."""
    return [(a, f"--no-defconfigs {a}") for a in arches] + [("defconfigs", "--defconfigs-only")]


def arch_check_folder(job):
    # Its own folder per job: the table job receives all of them side by side.
    return f"results/arch-check-{job}"


def arch_check_script(job, args):
    return [f"scripts/arch-check.sh --rows {arch_check_folder(job)}/rows.tsv {args}"]


def arch_table_script(jobs):
    # Every folder by name: a job that left no rows is refused by name, not silently left out.
    folders = " ".join(arch_check_folder(j) for j, _ in jobs)
    return ["scripts/need.sh python3 python3-yaml",
            f"/usr/bin/python3 -m harness.archmerge {folders} -o {ARCH_CHECK_TABLE}"]


def arch_check_arches(text):
    """The arches of --arches (words separated by spaces or commas; empty: every arch), each
    checked against its data file, in `python3 -m harness.arch names` order."""
    wanted = [w for w in re.split(r"[\s,]+", text) if w]
    for a in wanted:
        harness_arch.load(a)
    every = harness_arch.names()
    arches = [a for a in every if not wanted or a in wanted]
    if len(arches) + 1 > MAX_NEEDS:
        raise harness_arch.ArchError(f"{len(arches)} arches: the table job would need more than "
                                     f"GitLab's {MAX_NEEDS} jobs")
    return arches


# --- GitLab CI ---------------------------------------------------------------------------------

def gitlab_kernel_job(b):
    return f"kernel:{b[0]}:{b[1]}:{b[2]}"


def gitlab(plan, arches=None):
    """The child pipeline: stages build -> boot -> merge, needs between jobs, artifacts
    passed between them, the merged junit.xml as the test report; the matrix of plan, the
    arch-check jobs of arches, or both (None: not that part)."""
    doc = {"stages": ["build", "boot", "merge"], "default": {"image": IMAGE}}
    if plan is not None:
        gitlab_matrix(doc, plan)
    if arches is not None:
        gitlab_arch_check(doc, arches)
    return doc


def gitlab_matrix(doc, plan):
    for b in plan.builds:
        name = folder_name(*b)
        doc[gitlab_kernel_job(b)] = {
            "stage": "build", "needs": [],
            "script": kernel_script(*b, kimage(b[0]), name),
            # Only this pipeline's boot jobs read them.
            "artifacts": {"paths": [f"build/kernel/{name}/"], "expire_in": "1 day"}}
    for arch in plan.arches:
        doc[f"image:{arch}"] = {"stage": "build", "needs": [], "script": image_script(arch)}
    for i, builds, arches in plan.shards:
        doc[f"boot:shard-{i}"] = {
            "stage": "boot",
            "needs": [{"job": f"image:{a}", "artifacts": False} for a in arches]
                     + [{"job": gitlab_kernel_job(b), "artifacts": True} for b in builds],
            "script": boot_script(plan, i),
            # A shard with an unexpected value fails its job; its results still go on.
            "artifacts": {"when": "always", "paths": [f"results/shard-{i}/"], "expire_in": "1 week"}}
    doc["merge"] = {
        "stage": "merge",
        "needs": [{"job": f"boot:shard-{i}", "artifacts": True} for i, _, _ in plan.shards],
        # After failed shards too: the merge reports their cells (or their absence).
        "when": "always",
        "script": merge_script(plan),
        "artifacts": {"when": "always", "paths": ["results/merged/"],
                      "reports": {"junit": "results/merged/junit.xml"}}}


def gitlab_arch_check(doc, arches):
    jobs = arch_check_jobs(arches)
    for job, args in jobs:
        doc[f"arch-check:{job}"] = {
            "stage": "build", "needs": [],
            "script": arch_check_script(job, args),
            # A failed row fails the job; its rows still go to the table.
            "artifacts": {"when": "always", "paths": [f"{arch_check_folder(job)}/"], "expire_in": "1 week"}}
    doc["arch-check:table"] = {
        "stage": "merge",
        "needs": [{"job": f"arch-check:{job}", "artifacts": True} for job, _ in jobs],
        # After failed jobs too: their rows are the failures the table shows.
        "when": "always",
        "script": arch_table_script(jobs),
        "artifacts": {"when": "always", "paths": [f"{ARCH_CHECK_TABLE}/table.txt"]}}


# --- GitHub Actions ----------------------------------------------------------------------------

def container(privileged):
    # debootstrap mounts /proc in its chroot and arm64's needs binfmt_misc: privileged.
    return {"image": IMAGE, "options": "--privileged"} if privileged else {"image": IMAGE}


M = "${{ matrix.%s }}"
CHECKOUT = {"uses": "actions/checkout@v4"}


def step_summary(path):
    return {"if": "${{ !cancelled() }}",
            "run": f"{{ echo '```'; cat {path}; echo '```'; }} >>\"$GITHUB_STEP_SUMMARY\""}


def github(plan, title, arches=None):
    """The workflow of the matrix of plan, the arch-check jobs of arches, or both (None:
    not that part)."""
    jobs = {}
    if plan is not None:
        jobs.update(github_matrix(plan))
    if arches is not None:
        jobs.update(github_arch_check(arches))
    return {"name": title, "on": {"workflow_dispatch": None, "push": None},
            "permissions": {"contents": "read"},
            "defaults": {"run": {"shell": "bash"}},
            "jobs": jobs}


def github_matrix(plan):
    """A kernel job and an image job as matrices, a matrix of shards that needs both and
    downloads only its own kernels, and a merge job."""
    m, checkout = M, CHECKOUT
    kernels = {
        "name": f"kernel {m % 'arch'} {m % 'tree'} {m % 'config'}",
        "runs-on": "ubuntu-latest", "container": container(False),
        "strategy": {"fail-fast": False, "matrix": {"include": [
            {"arch": b[0], "tree": b[1], "config": b[2], "kimage": kimage(b[0]), "name": folder_name(*b)}
            for b in plan.builds]}},
        "steps": [checkout,
                  {"run": "\n".join(kernel_script(m % "arch", m % "tree", m % "config", m % "kimage", m % "name"))},
                  # Named as its folder: a pattern download puts it in build/kernel/<name>/.
                  {"uses": "actions/upload-artifact@v4",
                   "with": {"name": m % "name", "path": f"build/kernel/{m % 'name'}/",
                            "include-hidden-files": True, "if-no-files-found": "error", "retention-days": 1}}]}
    images = {
        "name": f"image {m % 'arch'}", "runs-on": "ubuntu-latest", "container": container(True),
        "strategy": {"fail-fast": False, "matrix": {"arch": plan.arches}},
        "steps": [checkout, {"run": "\n".join(image_script(m % "arch"))}]}
    boot = {
        "name": f"boot shard {m % 'shard'}/{plan.n}", "needs": ["kernel", "image"],
        "runs-on": "ubuntu-latest", "container": container(True),
        "strategy": {"fail-fast": False, "matrix": {"include": [
            {"shard": i, "kernels": download_pattern([folder_name(*b) for b in builds])}
            for i, builds, _ in plan.shards]}},
        "steps": [checkout,
                  {"uses": "actions/download-artifact@v4", "with": {"pattern": m % "kernels", "path": "build/kernel"}},
                  {"run": "\n".join(boot_script(plan, m % "shard"))},
                  {"uses": "actions/upload-artifact@v4", "if": "${{ !cancelled() }}",
                   "with": {"name": f"shard-{m % 'shard'}", "path": f"results/shard-{m % 'shard'}/"}}]}
    merge = {
        "needs": ["boot"], "if": "${{ !cancelled() }}",
        "runs-on": "ubuntu-latest", "container": container(False),
        "steps": [checkout,
                  {"uses": "actions/download-artifact@v4", "with": {"pattern": "shard-*", "path": "results"}},
                  {"run": "\n".join(merge_script(plan))},
                  {"uses": "actions/upload-artifact@v4", "if": "${{ !cancelled() }}",
                   "with": {"name": "merged", "path": "results/merged/"}},
                  step_summary("results/merged/summary.txt")]}
    return {"kernel": kernels, "image": images, "boot": boot, "merge": merge}


def github_arch_check(arches):
    """A matrix of arch-check jobs, each uploading its rows as arch-check-<job>, and a table
    job that downloads them into results/arch-check-<job>/ and merges them."""
    jobs = arch_check_jobs(arches)
    check = {
        "name": f"arch-check {M % 'job'}", "runs-on": "ubuntu-latest", "container": container(False),
        "strategy": {"fail-fast": False, "matrix": {"include": [{"job": j, "args": a} for j, a in jobs]}},
        "steps": [CHECKOUT,
                  {"run": "\n".join(arch_check_script(M % "job", M % "args"))},
                  # A failed row fails the job; its rows still go to the table.
                  {"uses": "actions/upload-artifact@v4", "if": "${{ !cancelled() }}",
                   "with": {"name": f"arch-check-{M % 'job'}", "path": f"{arch_check_folder(M % 'job')}/"}}]}
    table = {
        "needs": ["arch-check"], "if": "${{ !cancelled() }}",
        "runs-on": "ubuntu-latest", "container": container(False),
        "steps": [CHECKOUT,
                  # Each artifact lands in results/<its name>/, the folder its job wrote.
                  {"uses": "actions/download-artifact@v4", "with": {"pattern": "arch-check-*", "path": "results"}},
                  {"run": "\n".join(arch_table_script(jobs))},
                  # Not named arch-check-*: the download above must not take it for a job's.
                  {"uses": "actions/upload-artifact@v4", "if": "${{ !cancelled() }}",
                   "with": {"name": "arch-check", "path": f"{ARCH_CHECK_TABLE}/table.txt"}},
                  step_summary(f"{ARCH_CHECK_TABLE}/table.txt")]}
    return {"arch-check": check, "arch-check-table": table}


def download_pattern(names):
    """A download-artifact pattern matching exactly these artifact names (minimatch braces)."""
    return names[0] if len(names) == 1 else "{" + ",".join(names) + "}"


# --- the command -------------------------------------------------------------------------------

OUT = {"gitlab": os.path.join("build", "ci", "gitlab-pipeline.yml"),
       "github": os.path.join("build", "ci", "github-workflow.yml")}


def shard_count(text):
    if not re.fullmatch(r"[0-9]{1,3}", text) or not 1 <= int(text) <= MAX_SHARDS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 1 to {MAX_SHARDS}")
    return int(text)


def matrix_arg(path):
    """The --matrix words for the jobs' commands: none for the repository's matrix.yaml, else
    its path in the repository (a CI job sees only the checkout)."""
    rel = os.path.relpath(os.path.abspath(path), ROOT)
    if rel == "matrix.yaml":
        return ""
    if rel.startswith(".."):
        raise matrixspec.MatrixError(f"--matrix {path}: not in the repository, which is all a CI job sees")
    return f" --matrix {rel}"


def matrix_plan(args):
    """The Plan of --set, --only, --shards and --matrix."""
    spec = matrixspec.load(args.matrix, ROOT)
    cells = spec.cells(args.set, args.only)
    if not cells:
        raise matrixspec.MatrixError(f"no cell matches set '{args.set}' and ONLY='{args.only}'")
    n = args.shards or min(len({Plan.build_of(spec, c) for c in cells}), MAX_SHARDS)
    if n > len(cells):
        raise matrixspec.MatrixError(f"--shards {n}: more shards than the {len(cells)} cells")
    selection = f"--set {args.set}" + (f" --only {args.only}" if args.only else "") + matrix_arg(args.matrix)
    return Plan(spec, cells, n, selection)


def main(argv=None):
    ap = ArgParser("pipeline", prog="python3 -m harness.pipeline", description=__doc__.splitlines()[0])
    ap.add_argument("engine", choices=sorted(OUT), help="gitlab: a child pipeline; github: a workflow")
    ap.add_argument("--set", help="a set of matrix.yaml: its builds, boots and merge")
    ap.add_argument("--only", default="", help="filters: key=value[,key=value...] (as make matrix ONLY=)")
    ap.add_argument("--shards", type=shard_count, default=None,
                    help=f"boot jobs (1 to {MAX_SHARDS}; default: one per kernel build)")
    ap.add_argument("--matrix", default=os.path.join(ROOT, "matrix.yaml"))
    ap.add_argument("-o", dest="out", metavar="FILE", help="where to write (default build/ci/<engine>-...yml)")
    ap.add_argument("--arch-check", action="store_true",
                    help="make arch-check's jobs too (or alone, without --set): a job per arch and the merged table")
    ap.add_argument("--arches", default="", help="with --arch-check: only these arches (A,B or 'A B'; default every arch)")
    args = ap.parse_args(argv)
    if args.arches and not args.arch_check:
        ap.error("--arches needs --arch-check")
    if not args.set and not args.arch_check:
        ap.error("nothing to generate: give --set, --arch-check or both")
    if not args.set and (args.only or args.shards):
        ap.error("--only and --shards need --set")
    try:
        plan, command, titles = None, f"python3 -m harness.pipeline {args.engine}", []
        if args.set:
            plan = matrix_plan(args)
            command += f" {plan.selection} --shards {plan.n}"
            titles.append(f"matrix, set {args.set}" + (f" ({args.only})" if args.only else ""))
        arches = None
        if args.arch_check:
            arches = arch_check_arches(args.arches)
            command += " --arch-check" + (f" --arches {','.join(arches)}" if args.arches else "")
            titles.append("arch-check")
        if args.engine == "gitlab":
            doc = gitlab(plan, arches)
        else:
            doc = github(plan, "selinux-ro-hooks " + "; ".join(titles), arches)
    except (matrixspec.MatrixError, harness_arch.ArchError) as e:
        print(f"pipeline: error: {e}", file=sys.stderr)
        return 2
    out = args.out or os.path.join(ROOT, OUT[args.engine])
    write(out, header(command, plan, arches) + yaml.dump(doc, Dumper=Dumper, sort_keys=False, width=200))
    print(os.path.relpath(out, ROOT) if not os.path.relpath(out, ROOT).startswith("..") else os.path.abspath(out))
    return 0


class Dumper(yaml.SafeDumper):
    """Plain YAML for CI engines: no anchors or aliases (GitHub refuses a step that is an
    alias), and a script of several lines as a literal block."""

    def ignore_aliases(self, data):
        return True


def _str(dumper, text):
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|" if "\n" in text else None)


Dumper.add_representer(str, _str)


def header(command, plan, arches=None):
    sources = " and ".join(s for s, part in (("matrix.yaml", plan), ("configs/arch", arches)) if part is not None)
    lines = [f"Generated from {sources} by harness/pipeline.py: do not edit, generate it again.", f"  {command}"]
    if plan is not None:
        lines.append(f"{plan.describe()}.")
    if arches is not None:
        lines.append(f"arch-check: {len(arches)} arches, a job each, and the defconfig rows' job, merged into "
                     f"{ARCH_CHECK_TABLE}/table.txt.")
    return "".join(f"# {line}\n" for line in lines)


def write(path, text):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    atomic.write_text(path, text)


if __name__ == "__main__":
    sys.exit(main())
