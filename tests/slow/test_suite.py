"""Every check of tests/suite.sh as a pytest test (see conftest.py). A check's output is
in results/test/<name>.log; a failure shows its last lines."""
import os

import pytest

from conftest import RESULTS, ROOT, SUITE, bashsuite


@pytest.mark.suite
@pytest.mark.parametrize("name", bashsuite.names(SUITE))
def test_check(name):
    r = bashsuite.run(SUITE, name, os.path.join(RESULTS, name + ".log"), ROOT)
    if r.status == "skip":
        pytest.skip(r.tail(1).strip())
    assert r.status == "pass", f"exit {r.rc}, log: {os.path.relpath(r.log, ROOT)}\n{r.tail()}"
