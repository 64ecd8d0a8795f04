"""Shared fixtures for the integration suites; the launcher, the RESP reader
and the wait helper they use are in the support package (tests/support).

The daemon under test is taken from $CUCKOOD_BIN, else build/server/cuckood
relative to the repository root. Setting CUCKOOD_TEST_REDIS_SERVER=1 runs the
same suites against the system's redis-server instead, which checks the
non-CF expectations against the server cuckood imitates; tests marked `cf`
are skipped there. Run by hand: python3 -m pytest tests/integ/test_x.py (pytest.ini puts
tests/ on the path).
"""

import pytest

from support.proc import PASSWORD, Daemon, Fleet, use_redis_server


@pytest.fixture(scope="session")
def is_redis():
    return use_redis_server()


@pytest.fixture(scope="module")
def server():
    d = Daemon().start()
    yield d
    d.cleanup()


@pytest.fixture(scope="module")
def auth_server():
    d = Daemon(password=PASSWORD).start()
    yield d
    d.cleanup()


@pytest.fixture
def daemon():
    """Factory for daemons owned by one test: daemon(*args, **kw) takes
    support.proc.Daemon's arguments and returns it started; each is stopped
    and removed at the end of the test."""
    fleet = Fleet(Daemon)
    yield fleet
    fleet.cleanup()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "cf: needs the CF commands (skipped against redis-server)")


def pytest_collection_modifyitems(config, items):
    if not use_redis_server():
        return
    skip = pytest.mark.skip(reason="CF commands: not in plain redis-server")
    for item in items:
        if item.get_closest_marker("cf") is not None:
            item.add_marker(skip)
