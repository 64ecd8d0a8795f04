"""Fixtures for the image test: the image (CUCKOOD_IMAGE, default
cuckood:latest, built by scripts/image.sh), the way it is run (see
image.py), volume directories, and a summary of what was run and measured
at the end of the session."""

import os
import shutil
import tempfile

import pytest

import image as img

REPORT = []


@pytest.fixture(scope="session")
def image():
    engine = img.pick_engine()
    if shutil.which(engine) is None:
        pytest.fail("no %s: scripts/image.sh builds the image" % engine)
    try:
        im = img.Image(engine)
    except RuntimeError as e:
        pytest.fail("%s (build it with scripts/image.sh)" % e)
    yield im
    im.release()


@pytest.fixture(scope="session")
def mode(image):
    how, why = img.pick_mode(image)
    REPORT.append("image run mode: %s (%s)" % (how, why))
    return how


@pytest.fixture
def volume(image):
    """A host directory for the image's volume, owned as the volume is in
    the image (what a new named volume gets from the engines)."""
    d = tempfile.mkdtemp(prefix="cuckood-volume-")
    st = os.stat(os.path.join(image.root(), image.volumes[0].lstrip("/")))
    os.chown(d, st.st_uid, st.st_gid)
    os.chmod(d, st.st_mode & 0o7777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def start(image, mode):
    """start(volume, args=(), port=None): a running container of the image
    with `args` appended; stopped and removed at the end of the test."""
    cls = img.EngineContainer if mode == "engine" else img.NamespaceContainer
    started = []

    def go(volume, args=(), port=None):
        c = cls(image, volume, args, port)
        started.append(c)
        return c

    go.health_once = lambda volume: cls.health_once(image, volume)
    yield go
    for c in started:
        c.remove()


def pytest_terminal_summary(terminalreporter):
    for line in REPORT:
        terminalreporter.write_line(line)
