"""Every check of tests/suite.sh as a pytest test (tests/conftest.py starts the suite's
background work). A check's output is in results/test/<name>.log; a failure shows its last
lines."""
import os
import re
import sys

import pytest

# Not "from conftest import": tests/ and tests/fast each have a conftest.py, and either may
# be the one loaded under that name.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from harness import bashsuite  # noqa: E402

SUITE = os.path.join(ROOT, "tests", "suite.sh")
RESULTS = bashsuite.results_dir(ROOT)


# Two groups: with pytest-xdist's --dist loadgroup (make test), the checks named by
# tests/suite.sh's BESIDE (most of the boots) run in order on one worker and every other
# check in order on another, while the fast tier's tests share out what is left. A check
# that needs what the other group builds waits on that kernel's or image's lock. The
# background starts with the first check that asks for it (tests/conftest.py).
def _checks():
    beside = bashsuite.variable(SUITE, "BESIDE", ROOT)
    for name in bashsuite.names(SUITE):
        group = "boots" if beside and re.search(beside, name) else "suite"
        yield pytest.param(name, marks=pytest.mark.xdist_group(group), id=name)


@pytest.mark.suite
@pytest.mark.usefixtures("background")
@pytest.mark.parametrize("name", list(_checks()))
def test_check(name):
    r = bashsuite.run(SUITE, name, os.path.join(RESULTS, name + ".log"), ROOT,
                      times=bashsuite.times_file(ROOT))
    if r.status == "skip":
        pytest.skip(r.tail(1).strip())
    assert r.status == "pass", f"exit {r.rc}, log: {os.path.relpath(r.log, ROOT)}\n{r.tail()}"
