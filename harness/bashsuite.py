"""Run the checks of a bash suite file (tests/suite.sh): one function t_NAME a check.

Each check runs in its own bash process with errexit, nounset and pipefail, so every
command in it counts. (Called on the left of "||" in the caller's shell, bash would ignore
errexit in the whole check, down to the functions it calls, and only the last command
would decide it.) Exit 0 passes, 4 skips (kselftest's convention), anything else fails.
"""
import os
import re
import subprocess

SKIP = 4


class Result:
    def __init__(self, name, rc, log):
        self.name, self.rc, self.log = name, rc, log

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


def run(suite, name, log, root):
    """Run check NAME of SUITE with its output in LOG; returns a Result."""
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "w") as out:
        rc = subprocess.run(["bash", "-euo", "pipefail", "-c", '. "$1"; "t_$2"', "run-test", suite, name],
                            env=dict(os.environ, ROOT=root), stdin=subprocess.DEVNULL,
                            stdout=out, stderr=subprocess.STDOUT).returncode
    return Result(name, rc, log)


def start_background(suite, log, root):
    """Start the suite's background() function, niced, with its output in LOG."""
    os.makedirs(os.path.dirname(log), exist_ok=True)
    out = open(log, "w")
    return subprocess.Popen(["nice", "-n", "10", "bash", "-euo", "pipefail", "-c", '. "$1"; background',
                             "background", suite],
                            env=dict(os.environ, ROOT=root), stdin=subprocess.DEVNULL,
                            stdout=out, stderr=subprocess.STDOUT)
