"""Fixtures of the fast tier. The helpers live in fakeqemu.py: a module of its own name,
because tests/slow has a conftest.py too and "from conftest import" would find either."""
from fakeqemu import qemu_run  # noqa: F401  (the fixture, registered by being here)


def pytest_collection_modifyitems(items):
    """The tests marked long (seconds of a timer, a browser or a compiler) go first: handed
    out early, they leave the short ones to even out the workers' ends (make check runs
    one worker per core). The order is otherwise kept."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
