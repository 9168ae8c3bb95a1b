"""Every check of tests/suite.sh as a pytest test (tests/conftest.py starts the suite's
background work). A check's output is in results/test/<name>.log; a failure shows its last
lines."""
import os
import sys

import pytest

# Not "from conftest import": tests/ and tests/fast each have a conftest.py, and either may
# be the one loaded under that name.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from harness import bashsuite  # noqa: E402

SUITE = os.path.join(ROOT, "tests", "suite.sh")
RESULTS = os.environ.get("TEST_RESULTS", os.path.join(ROOT, "results", "test"))


# One group: with pytest-xdist's --dist loadgroup (make test), every check runs on the same
# worker in the order of tests/suite.sh (a check may need what one before it made), and the
# fast tier's tests share out the other workers. The background starts with the first check.
@pytest.mark.suite
@pytest.mark.xdist_group("suite")
@pytest.mark.usefixtures("background")
@pytest.mark.parametrize("name", bashsuite.names(SUITE))
def test_check(name):
    r = bashsuite.run(SUITE, name, os.path.join(RESULTS, name + ".log"), ROOT)
    if r.status == "skip":
        pytest.skip(r.tail(1).strip())
    assert r.status == "pass", f"exit {r.rc}, log: {os.path.relpath(r.log, ROOT)}\n{r.tail()}"
