"""What both tiers share. When a selected slow-tier check needs it (tests/suite.sh's
BACKGROUND_FOR), the suite's background work (guest images, the kernels of the matrix test
set) starts with the first slow-tier check, niced, in one of the processes that run the
slow tier; the checks that need its results wait on their locks. make test runs the slow
tier's checks in order on two pytest workers, most of the boots on one, and the fast tier's
tests on what is left (tests/slow/test_suite.py)."""
import fcntl
import os
import re
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from harness import bashsuite  # noqa: E402

SUITE = os.path.join(ROOT, "tests", "suite.sh")
RESULTS = bashsuite.results_dir(ROOT)
# Each slow check's wall and CPU time, and the background's (harness/bashsuite.py: record)
TIMES = bashsuite.times_file(ROOT)


@pytest.fixture(scope="session")
def background(request):
    pattern = bashsuite.variable(SUITE, "BACKGROUND_FOR", ROOT)
    selected = [i.callspec.params["name"] for i in request.session.items
                if hasattr(i, "callspec") and "name" in i.callspec.params]
    if not pattern or not any(re.search(pattern, n) for n in selected):
        yield None
        return
    # Both groups of slow checks ask for it, each in its own worker: the first to take the
    # lock starts it and holds the lock until the background is done.
    os.makedirs(RESULTS, exist_ok=True)
    held = open(os.path.join(RESULTS, ".background.lock"), "w")
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        held.close()
        yield None
        return
    log = os.path.join(RESULTS, "background.log")
    sys.stderr.write(f"\nstarted in the background: {bashsuite.variable(SUITE, 'BACKGROUND_WHAT', ROOT)}"
                     f" (log: {os.path.relpath(log, ROOT)})\n")
    start = time.monotonic()
    proc = bashsuite.start_background(SUITE, log, ROOT)
    yield proc
    # What the background started and no check waited for is not left running alone.
    # wait4 rather than wait: its CPU time goes in times.tsv beside the checks'.
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    bashsuite.record(TIMES, "background", time.monotonic() - start, usage.ru_utime + usage.ru_stime)
    if proc.returncode != 0:
        sys.stderr.write(f"background work failed; see {os.path.relpath(log, ROOT)}\n")
    held.close()
