"""Fixtures of the fast tier. The helpers live in fakeqemu.py: a module of its own name,
because tests/ has a conftest.py too and "from conftest import" would find either."""
from fakeqemu import qemu_run  # noqa: F401  (the fixture, registered by being here)
