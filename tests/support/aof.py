"""What the append-only file's suites share.

need_aof_writer(*args)
    A module-scoped autouse fixture that skips the module's tests, saying
    so, when this build does not start with `appendonly yes` (args): the
    writer of the files and the feed of what is logged are merged
    separately, and these suites need both.
"""
import pytest

from support.proc import Daemon, Exited


def need_aof_writer(*args):
    @pytest.fixture(autouse=True, scope="module")
    def fixture(tmp_path_factory):
        d = Daemon(*args, dir=str(tmp_path_factory.mktemp("probe")))
        try:
            d.start()
        except Exited as e:
            if "Bad directive" not in str(e):
                raise
            pytest.skip("this build has no append-only file writer yet")
        finally:
            d.cleanup()
    return fixture
