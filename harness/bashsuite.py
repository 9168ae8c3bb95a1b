"""Run the checks of a bash suite file (tests/suite.sh): one function t_NAME a check.

Each check runs in its own bash process with errexit, nounset and pipefail, so every
command in it counts. (Called on the left of "||" in the caller's shell, bash would ignore
errexit in the whole check, down to the functions it calls, and only the last command
would decide it.) Exit 0 passes, 4 skips (kselftest's convention), anything else fails.
"""
import os
import re
import resource
import subprocess
import time

SKIP = 4


def results_dir(root):
    """Where make test writes each check's log: results/test, or $TEST_RESULTS."""
    return os.environ.get("TEST_RESULTS", os.path.join(root, "results", "test"))


def times_file(root):
    """The file record() adds each check's wall and CPU seconds to (make test empties it)."""
    return os.path.join(results_dir(root), "times.tsv")


class Result:
    def __init__(self, name, rc, log, seconds=0.0, cpu=0.0):
        self.name, self.rc, self.log = name, rc, log
        self.seconds, self.cpu = seconds, cpu

    @property
    def status(self):
        return "pass" if self.rc == 0 else "skip" if self.rc == SKIP else "fail"

    def tail(self, n=15):
        with open(self.log, errors="replace") as f:
            return "".join(f.readlines()[-n:])


def names(suite):
    """The checks of a suite file, in the order they are defined."""
    with open(suite) as f:
        return re.findall(r"^t_([a-z0-9_]+)\(\)", f.read(), re.M)


def variable(suite, name, root):
    """A variable the suite file sets (BACKGROUND_FOR and the like); "" if unset."""
    out = subprocess.run(["bash", "-c", '. "$1"; printf %s "${!2:-}"', "read-var", suite, name],
                         env=dict(os.environ, ROOT=root), capture_output=True, text=True, check=True)
    return out.stdout


def children_cpu():
    """CPU seconds (user and system) of this process's children that have ended."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def record(times, name, seconds, cpu):
    """Add a line "NAME<tab>WALL<tab>CPU" (seconds) to the file TIMES: where a run's time
    and CPU went, check by check. One write of a short line with O_APPEND, so two workers
    adding theirs at once do not mix them."""
    fd = os.open(times, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{name}\t{seconds:.1f}\t{cpu:.1f}\n".encode())
    finally:
        os.close(fd)


def run(suite, name, log, root, times=None):
    """Run check NAME of SUITE with its output in LOG; returns a Result. With TIMES, its
    wall time and the CPU time of its processes are added to that file (record)."""
    os.makedirs(os.path.dirname(log), exist_ok=True)
    start, cpu = time.monotonic(), children_cpu()
    with open(log, "w") as out:
        rc = subprocess.run(["bash", "-euo", "pipefail", "-c", '. "$1"; "t_$2"', "run-test", suite, name],
                            env=dict(os.environ, ROOT=root), stdin=subprocess.DEVNULL,
                            stdout=out, stderr=subprocess.STDOUT).returncode
    r = Result(name, rc, log, time.monotonic() - start, children_cpu() - cpu)
    if times:
        record(times, name, r.seconds, r.cpu)
    return r


def start_background(suite, log, root):
    """Start the suite's background() function, niced, with its output in LOG."""
    os.makedirs(os.path.dirname(log), exist_ok=True)
    out = open(log, "w")
    return subprocess.Popen(["nice", "-n", "10", "bash", "-euo", "pipefail", "-c", '. "$1"; background',
                             "background", suite],
                            env=dict(os.environ, ROOT=root), stdin=subprocess.DEVNULL,
                            stdout=out, stderr=subprocess.STDOUT)
