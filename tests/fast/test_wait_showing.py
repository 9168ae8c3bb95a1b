"""scripts/lib.sh's wait_showing: a long step (a kernel build, debootstrap, the guest's
second stage) says how long it has run and where it is while it runs, and its exit status
is the step's. PROGRESS_EVERY=1 in place of the minute; a loaded machine may stretch the
seconds, so the count is a pattern."""
import os
import re
import subprocess

from fakeqemu import ROOT


def wait_showing(job, pattern="^I: "):
    script = (f'set -euo pipefail; . {ROOT}/scripts/lib.sh; log=$(mktemp); '
              f'( {job} ) >"$log" 2>&1 & rc=0; wait_showing $! "arm: debootstrap" "$log" \'{pattern}\' || rc=$?; '
              'rm -f "$log"; echo "rc=$rc"')
    # bytes, decoded by hand: text mode would turn a CR LF into LF before the test sees it
    r = subprocess.run(["bash", "-c", script], capture_output=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "HOME": os.environ["HOME"], "PROGRESS_EVERY": "1"})
    return subprocess.CompletedProcess(r.args, r.returncode, r.stdout.decode(), r.stderr.decode())


def test_a_long_step_shows_its_time_and_last_matching_line():
    # a serial console's CR LF is taken off; lines the pattern does not match are not shown
    r = wait_showing("printf 'I: Retrieving libc6\\r\\n'; echo noise; sleep 2.5; exit 3")
    assert r.stdout == "rc=3\n", r.stderr
    lines = r.stderr.split("\n")[:-1]
    assert lines, "nothing shown in 2.5 s"
    for line in lines:
        assert re.fullmatch(r"\[bash\] arm: debootstrap: \d+s, I: Retrieving libc6", line), r.stderr


def test_a_step_with_no_matching_line_yet_shows_its_time_alone():
    r = wait_showing("echo noise; sleep 1.5")
    assert r.stdout == "rc=0\n", r.stderr
    lines = r.stderr.split("\n")[:-1]
    assert lines and all(re.fullmatch(r"\[bash\] arm: debootstrap: \d+s", l) for l in lines), r.stderr


def test_a_short_step_says_nothing():
    r = wait_showing("exit 0")
    assert (r.stdout, r.stderr) == ("rc=0\n", "")
