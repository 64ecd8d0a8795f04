"""The module's suites: redis-server processes with cuckoo.so loaded
(support.proc.ModuleServer), each on a free port in its own temporary
directory, ready once it has loaded its data, stopped with SHUTDOWN NOSAVE
at the end.

$CUCKOO_MODULE names the module (default build/module/cuckoo.so). In the
sanitizer build $CUCKOO_SERVER_PRELOAD names the ASan runtime, preloaded
into each redis-server; a sanitizer report in a server's log (a leak shows
at SHUTDOWN) then fails the test at cleanup. Run by hand:
PYTHONPATH=tests python3 -m pytest ...
"""

import pytest

from support.proc import Fleet, ModuleServer


@pytest.fixture
def servers():
    """Factory: servers(*args, module_args=..., start=True) -> a
    redis-server with the module (started); all are cleaned up after the
    test."""
    fleet = Fleet(ModuleServer)
    yield fleet
    fleet.cleanup()
