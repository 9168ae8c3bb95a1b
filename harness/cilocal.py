"""make ci-local: the generated GitLab child pipeline of a slice, run on this machine by
gitlab-ci-local (harness/npmtools.py) with its shell executor.

    python3 -m harness.cilocal [--set NAME] [--only F] [--shards N] [--concurrency N] [--out DIR]

Clones the committed HEAD into OUT/repo (default build/ci-local/repo, the folder made anew;
uncommitted changes are not in it), generates the pipeline there (make ci-pipeline) and runs
it with KERNEL_SEED_FROM set to this checkout's build folder (a kernel job starts from the
same kernel built here, scripts/kernel.sh), --force-shell-executor (the jobs' debian:bookworm image is ignored: no docker) and
--shell-isolation: each job runs in a folder of its own holding the tracked files only
(OUT/repo/.gitlab-ci-local/builds/<job>/) and receives the artifacts of the jobs it needs, as
on a runner. gitlab-ci-local's output goes to OUT/gitlab-ci-local.log; a line per job start
and end is printed. Artifacts are copied back into the clone, so the merge job's folder is
OUT/repo/results/merged, the last line printed.

The kernel trees a job unpacked (about 4 GB per kernel job, most of it build/src) are removed
once the job passed and its artifacts were copied out, while the next jobs run: a failed job's
folder stays whole for a look.

Exit 0 when every job passed. Exit 1 with one line naming the failed jobs, and those the
pipeline never ran (the merged folder, if the merge ran, is still the last line). Exit 2 with
one line when the pipeline cannot be made or the tool cannot be had.
"""
import base64
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import time

import yaml

from harness import ROOT, npmtools
from harness.cli import ArgParser
from harness.pipeline import shard_count

OUT = os.path.join("build", "ci-local")
# A job's start and end as gitlab-ci-local prints them ("<job> starting shell (<stage>)",
# "<job> finished in 4.1 min  FAIL 1"), and its final table (" PASS  <job>", " FAIL  <job>";
# WARN: failed, allowed to).
EVENT = re.compile(r"^(\S+)\s+(starting shell .*|finished in .*)$")
VERDICT = re.compile(r"^ (PASS|FAIL|WARN) +(\S+) *$")
# After a job's artifacts are exported: its folder is of no further use to gitlab-ci-local.
COPIED_OUT = re.compile(r"^(\S+)\s+copied artifacts to cwd")


class CiLocalError(Exception):
    pass


# What gitlab-ci-local's shell executor runs besides the jobs: it copies the tracked files
# into each job's folder with rsync, and reads the clone with git. Without rsync every job
# fails at its start with "rsync: command not found" in the log only.
TOOLS = ("git", "rsync")


def check_tools():
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        raise CiLocalError(f"gitlab-ci-local's shell executor needs {' and '.join(missing)}, not installed "
                           f"(make ci-local installs it; or: apt-get install {' '.join(missing)})")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def rel(path):
    r = os.path.relpath(path, ROOT)
    return path if r.startswith("..") else r


def clean_env():
    """The environment of this process, without what make passes its children: a job
    starts from a runner's environment, not from inside `make ci-local`."""
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES")}


def git(*args, cwd=ROOT):
    p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        raise CiLocalError(f"git {' '.join(args)}: {npmtools.last_line(p.stderr)}")
    return p.stdout.strip()


def clone_head(repo):
    """OUT/repo: a clone of HEAD, detached at it; returns (sha, subject, paths differing)."""
    sha = git("rev-parse", "--verify", "HEAD")
    subject = git("log", "-1", "--format=%s", sha)
    dirty = len([line for line in git("status", "--porcelain").splitlines() if line])
    git("clone", "-q", "--no-checkout", ROOT, repo)
    git("checkout", "-q", "--detach", sha, cwd=repo)
    return sha, subject, dirty


def generate(repo, args):
    """make ci-pipeline in the clone; the pipeline's path there, relative to it."""
    cmd = ["make", "-s", "--no-print-directory", "ci-pipeline", f"SET={args.set}", f"ONLY={args.only}"]
    if args.shards:
        cmd.append(f"SHARDS={args.shards}")
    p = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, env=clean_env())
    if p.returncode != 0 or not p.stdout.strip():
        # The generator's own line, not make's "*** [Makefile:N: ci-pipeline] Error 2" after it.
        why = [line for line in (p.stderr + p.stdout).splitlines() if line.strip() and not line.startswith("make")]
        raise CiLocalError(f"make ci-pipeline in {rel(repo)}: {why[-1] if why else f'exit {p.returncode}'}")
    return p.stdout.strip().splitlines()[-1]


def job_names(path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    return [k for k, v in doc.items() if isinstance(v, dict) and "script" in v]


def job_folder(repo, job):
    """Where --shell-isolation runs a job: gitlab-ci-local 4.73's folder name for it, each run
    of characters other than ASCII letters, digits, '_' and '-' base64url-encoded (':' gives
    'Og', '.' gives 'Lg')."""
    safe = re.sub(r"[^\w-]+", lambda m: base64.urlsafe_b64encode(m.group().encode()).decode().rstrip("="),
                  job, flags=re.ASCII)
    return os.path.join(repo, ".gitlab-ci-local", "builds", safe)


def remove_trees(folder):
    # A tree left half removed costs disk, not a result: errors are not the run's.
    shutil.rmtree(os.path.join(folder, "build", "src"), ignore_errors=True)


def run_pipeline(tool, repo, pipeline, concurrency, logfile, variables=None):
    """Run gitlab-ci-local; (exit status, {job: PASS|FAIL|WARN}, its last line). VARIABLES
    ({name: value}) reach every job, as a runner's variables do. The trees of a job that
    passed are removed in the background as soon as its artifacts are out: removing a few
    hundred thousand files took 17 min on a loaded 2-core machine after the pipeline, and
    costs little beside the next job, which mostly computes."""
    cmd = [tool, "--force-shell-executor", "--shell-isolation", "--artifacts-to-source",
           "--no-color", "--file", pipeline, "--concurrency", str(concurrency)]
    for name, value in (variables or {}).items():
        cmd += ["--variable", f"{name}={value}"]
    check_tools()
    start = time.time()
    verdicts, passed, last = {}, set(), ""
    pruner = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    with open(logfile, "w") as out:
        out.write(f"# cd {repo} && {' '.join(cmd)}\n")
        out.flush()
        p = subprocess.Popen(cmd, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, errors="replace", env=clean_env())
        for line in p.stdout:
            out.write(line)
            out.flush()
            line = line.rstrip("\n")
            if line.strip():
                last = line.strip()
            m = EVENT.match(line)
            if m:
                mins, secs = divmod(int(time.time() - start), 60)
                log(f"[ci-local {mins}m{secs:02d}s] {m.group(1)} {' '.join(m.group(2).split())}")
                if m.group(2).startswith("finished in") and "FAIL" not in m.group(2):
                    passed.add(m.group(1))
            m = COPIED_OUT.match(line)
            if m and m.group(1) in passed:
                pruner.submit(remove_trees, job_folder(repo, m.group(1)))
            m = VERDICT.match(line)
            if m:
                verdicts[m.group(2)] = m.group(1)
        rc = p.wait()
    pruner.shutdown(wait=True)
    return rc, verdicts, last


def failure(jobs, verdicts, rc, last):
    """Why the run failed, in one line, or None: the jobs that failed, those gitlab-ci-local
    never ran (a job they need failed), else its own exit status and last line."""
    failed = [j for j in jobs if verdicts.get(j) == "FAIL"]
    unrun = [j for j in jobs if j not in verdicts]
    parts = ([f"failed: {', '.join(failed)}"] if failed else []) + ([f"never run: {', '.join(unrun)}"] if unrun else [])
    if parts:
        return "; ".join(parts)
    return f"gitlab-ci-local exited {rc}: {last}" if rc != 0 else None


def main(argv=None):
    ap = ArgParser("ci-local", prog="python3 -m harness.cilocal", description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="test", help="a set of matrix.yaml (default test)")
    ap.add_argument("--only", default="arch=x86_64", help="the slice, key=value,... (default arch=x86_64)")
    ap.add_argument("--shards", type=shard_count, default=2, help="boot jobs (default 2)")
    # One job at a time by default: each job already spreads over every core (make -jN, a
    # guest per core), and more at once on a small machine only bring the boots nearer
    # their timeouts.
    ap.add_argument("--concurrency", type=shard_count, default=1, help="jobs at once (default 1)")
    ap.add_argument("--out", default=os.path.join(ROOT, OUT), help=f"the folder made anew (default {OUT})")
    args = ap.parse_args(argv)
    out = os.path.abspath(args.out)
    repo, logfile = os.path.join(out, "repo"), os.path.join(out, "gitlab-ci-local.log")
    started = time.time()
    try:
        check_tools()
        tool = npmtools.ensure()["gitlab-ci-local"]
        if os.path.exists(out):
            log(f"ci-local: removing the previous {rel(out)}")
            shutil.rmtree(out)
        os.makedirs(out)
        sha, subject, dirty = clone_head(repo)
        log(f"ci-local: {rel(repo)}: a clean clone of HEAD {sha[:12]} ({subject}); uncommitted changes are "
            f"not in it" + (f" ({dirty} paths differ from HEAD here)" if dirty else ""))
        pipeline = generate(repo, args)
        jobs = job_names(os.path.join(repo, pipeline))
        log(f"ci-local: {pipeline}: {len(jobs)} jobs, {args.concurrency} at a time; log: {rel(logfile)}")
    except (CiLocalError, npmtools.Unavailable, OSError) as e:
        print(f"ci-local: error: {e}", file=sys.stderr)
        return 2
    # A kernel job starts from this checkout's build of the same kernel, if there is one
    # (scripts/kernel.sh's KERNEL_SEED_FROM, as a runner's cache would give it): in its own
    # clone it otherwise compiles every object again, ccache hits or not.
    rc, verdicts, last = run_pipeline(tool, repo, pipeline, args.concurrency, logfile,
                                      {"KERNEL_SEED_FROM": os.path.join(ROOT, "build")})
    merged = os.path.join(repo, "results", "merged")
    mins, secs = divmod(int(time.time() - started), 60)
    why = failure(jobs, verdicts, rc, last)
    if why:
        log(f"ci-local: error: {why} after {mins}m{secs:02d}s (log: {rel(logfile)})")
        if os.path.isdir(merged):
            print(rel(merged))
        return 1
    if not os.path.isdir(merged):
        log(f"ci-local: error: every job passed but the merge left no {rel(merged)} (log: {rel(logfile)})")
        return 1
    log(f"ci-local: {len(jobs)} jobs passed in {mins}m{secs:02d}s (log: {rel(logfile)})")
    print(rel(merged))
    return 0


if __name__ == "__main__":
    sys.exit(main())
