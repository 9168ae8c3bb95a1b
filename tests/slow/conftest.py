"""The slow tier: builds kernels and boots them. Its checks live in tests/suite.sh (bash,
where they drive shell tools); this tier runs each one as a pytest test, in suite order.
When a selected check needs it, the suite's background work (guest images, the kernels
only the matrix set needs) starts with the first check, niced, so it fills the cores the
builds leave idle; the checks that need its results wait on their locks."""
import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from harness import bashsuite  # noqa: E402

SUITE = os.path.join(ROOT, "tests", "suite.sh")
RESULTS = os.environ.get("TEST_RESULTS", os.path.join(ROOT, "results", "test"))


@pytest.fixture(scope="session", autouse=True)
def background(request):
    pattern = bashsuite.variable(SUITE, "BACKGROUND_FOR", ROOT)
    selected = [i.callspec.params["name"] for i in request.session.items
                if hasattr(i, "callspec") and "name" in i.callspec.params]
    if not pattern or not any(re.search(pattern, n) for n in selected):
        yield None
        return
    log = os.path.join(RESULTS, "background.log")
    sys.stderr.write(f"\nstarted in the background: {bashsuite.variable(SUITE, 'BACKGROUND_WHAT', ROOT)}"
                     f" (log: {os.path.relpath(log, ROOT)})\n")
    proc = bashsuite.start_background(SUITE, log, ROOT)
    yield proc
    # What the background started and no check waited for is not left running alone.
    if proc.wait() != 0:
        sys.stderr.write(f"background work failed; see {os.path.relpath(log, ROOT)}\n")
