"""The container image, built (scripts/image.sh) and run as its users run
it: with the engine when it can start containers, else from the image's own
filesystem in new namespaces (image.py says how; the summary line says
which ran). Every run has a read-only root filesystem and only the volume
writable."""

import os
import re

import pytest

import image as img
from conftest import REPORT

ITEMS = ["alpha", "beta", "gamma", "delta"]
ABSENT = ["zeta", "eta"]
STOP_TIMEOUT = 10  # docker stop's default grace period


def proc_argv(pid):
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        return [a.decode() for a in f.read().split(b"\0")[:-1]]


def mounts(pid):
    """{mount point: options} of the process's mount namespace."""
    out = {}
    with open("/proc/%d/mountinfo" % pid) as f:
        for line in f:
            fields = line.split()
            out[fields[4]] = fields[5].split(",")
    return out


def config_get(c, name, password=None):
    rc, out = c.cli("CONFIG", "GET", name, password=password)
    assert rc == 0, out
    lines = out.splitlines()
    assert len(lines) == 2 and lines[0] == name, out
    return lines[1]


def check_running_as_image_says(image, c, args=()):
    """PID 1 of its own PID namespace, the image's user (never root), the
    image's entry point and command, a read-only root with the volume
    writable."""
    assert c.host_pid, c.logs()
    st = img.host_pid_status(c.host_pid)
    assert st["NSpid"][-1] == "1", st["NSpid"]
    uid, gid = image.ids()
    assert uid != 0
    assert st["Uid"] == [str(uid)] * 4
    assert st["Gid"] == [str(gid)] * 4
    assert int(st["CapEff"][0], 16) == 0  # no capabilities either
    assert proc_argv(c.host_pid) == image.argv(args)
    m = mounts(c.host_pid)
    assert "ro" in m["/"], m["/"]
    assert "rw" in m[image.volumes[0]], m[image.volumes[0]]


def test_image_says_how_it_runs(image):
    assert image.entrypoint, "no ENTRYPOINT"
    assert image.health_argv(), "no HEALTHCHECK (built with --format oci?)"
    assert image.volumes and image.ports
    uid, _ = image.ids()
    assert uid != 0, "runs as root"
    assert image.workdir in image.volumes


def test_serves_probes_saves_and_restores(image, mode, start, volume):
    c = start(volume)  # the image's own entry point, command and config
    c.wait_healthy()
    check_running_as_image_says(image, c)
    assert c.cli("PING") == (0, "PONG")
    assert config_get(c, "port") == str(image.ports[0])
    assert config_get(c, "dir") == image.volumes[0]
    dbfile = config_get(c, "dbfilename")
    rc, out = c.cli("CF.RESERVE", "seen", "1000")
    assert (rc, out) == (0, "OK")
    for item in ITEMS:
        assert c.cli("CF.ADD", "seen", item) == (0, "1")
    rc, before = c.cli("CF.MEXISTS", "seen", *(ITEMS + ABSENT))
    assert rc == 0 and before.split() == ["1"] * len(ITEMS) + \
        ["0"] * len(ABSENT), before
    assert c.health() == 0

    # docker stop: the image's stop signal to PID 1, a bounded wait.
    assert c.stop(STOP_TIMEOUT) == 0, c.logs()
    assert os.path.isfile(os.path.join(volume, dbfile)), os.listdir(volume)
    assert "ready to exit" in c.logs()
    # The health check, as the engine would run it now: nothing serves.
    assert start.health_once(volume) != 0

    again = start(volume)
    again.wait_healthy()
    rc, after = again.cli("CF.MEXISTS", "seen", *(ITEMS + ABSENT))
    assert (rc, after) == (0, before)
    assert again.stop(STOP_TIMEOUT) == 0, again.logs()


@pytest.mark.parametrize("save", [["60 1000"], ["60", "1000"]],
                         ids=["save-one-word", "save-two-words"])
def test_appended_arguments(image, start, volume, save):
    # docker run IMAGE --requirepass s3cret --port 7000 --save ... (and
    # the compose example's --maxmemory)
    args = ["--requirepass", "s3cret", "--port", "7000", "--save"] + save + \
        ["--maxmemory", "512mb"]
    c = start(volume, args, port=7000)
    c.wait_healthy()  # the probe follows --port (through the volume)
    check_running_as_image_says(image, c, args)
    rc, out = c.cli("PING")
    assert out.startswith("NOAUTH"), out
    assert c.cli("PING", password="s3cret") == (0, "PONG")
    assert config_get(c, "port", "s3cret") == "7000"
    assert config_get(c, "save", "s3cret") == "60 1000"
    assert config_get(c, "maxmemory", "s3cret") == str(512 << 20)
    assert c.health() == 0
    assert c.stop(STOP_TIMEOUT) == 0, c.logs()


def test_as_a_sidecar(image, start, volume):
    # The Kubernetes example: the pod's containers share one network
    # namespace, the server listens on its loopback only.
    args = ["--bind", "127.0.0.1", "--maxmemory", "512mb"]
    c = start(volume, args)
    c.wait_healthy()
    check_running_as_image_says(image, c, args)
    assert c.cli("PING", sidecar=True) == (0, "PONG")
    rc, out = c.cli("CONFIG", "GET", "bind", sidecar=True)
    assert (rc, out.splitlines()) == (0, ["bind", "127.0.0.1"])
    assert c.cli("CF.ADD", "seen", "k", sidecar=True) == (0, "1")
    assert c.health() == 0
    assert c.stop(STOP_TIMEOUT) == 0, c.logs()


def test_the_loader_runs_in_the_image(image, start, volume):
    # cuckood-load is in the image, with the libraries it needs, and loads
    # into the server it runs beside.
    c = start(volume)
    c.wait_healthy()
    items = b"".join(b"id-%d\n" % i for i in range(5000))
    r = img.run(c.exec_argv() + ["cuckood-load", "-p", str(c.port),
                                 "--verify", "100", "users"],
                input=items, env=image.environ())
    assert r.returncode == 0, r.stderr
    assert b"5000 items into users" in r.stderr, r.stderr
    assert c.cli("CF.EXISTS", "users", "id-4999") == (0, "1")
    assert c.cli("CF.EXISTS", "users", "id-5000") == (0, "0")
    assert c.stop(STOP_TIMEOUT) == 0, c.logs()


# Compilers, build tools and headers (gcc-12-base, libgcc-s1 and libstdc++6
# are run-time parts of every Debian base).
BUILD_TOOLS = re.compile(r"^(gcc|g\+\+|cpp|clang|llvm|make|cmake)(-[0-9.]+)?$"
                         r"|^(binutils|pkg-?config|pkgconf|libc-dev-bin)"
                         r"($|-)|-dev$")


def listdir(path):
    return os.listdir(path) if os.path.isdir(path) else []


def last_from():
    with open(os.path.join(os.path.dirname(__file__), "..", "..",
                           "Dockerfile")) as f:
        froms = re.findall(r"^FROM\s+(\S+)", f.read(), re.M | re.I)
    return froms[-1]


def test_runtime_holds_nothing_it_does_not_need(image):
    pkgs = image.packages()
    assert not sorted(p for p in pkgs if BUILD_TOOLS.search(p))
    root = image.root()
    inc = os.path.join(root, "usr/include")
    assert not os.path.isdir(inc) or not os.listdir(inc), "headers"
    # No package lists or caches left from installing (tens of MB).
    # (An image without apt has neither folder.)
    lists = os.path.join(root, "var/lib/apt/lists")
    assert not [f for f in listdir(lists) if f not in ("lock", "partial",
                                                         "auxfiles")]
    cache = os.path.join(root, "var/cache/apt")
    assert not [f for f in listdir(cache) if f.endswith(".bin")]
    path = image.environ()["PATH"].split(":")
    for tool in ("cc", "gcc", "c++", "clang", "ld", "as", "make"):
        for d in path:
            assert not os.path.lexists(os.path.join(root, d.lstrip("/"),
                                                    tool)), (d, tool)

    base_ref = last_from()
    added = sorted(pkgs)
    base_size = None
    try:
        base = img.Image(image.engine, base_ref)
        added = sorted(set(pkgs) - set(base.packages()))
        base_size = base.size
        base.release()
    except RuntimeError:
        pass
    # What the server links to; the base may hold some already (apt
    # needs libxxhash0), and nothing else is added to it.
    runtime = {"libuv1", "libhiredis0.14", "libxxhash0", "libssl3"}
    assert runtime <= set(pkgs)
    if base_size is not None:
        assert set(added) <= runtime, added
    mb = 1000 * 1000
    REPORT.append("image %s: %.1f MB (%s engine's size)%s" % (
        image.ref, image.size / mb, image.engine,
        "; base %s %.1f MB, added %.1f MB" % (
            base_ref, base_size / mb, (image.size - base_size) / mb)
        if base_size else ""))
    REPORT.append("packages added to %s: %s" % (base_ref, " ".join(
        "%s=%s" % (p, pkgs[p]) for p in added)))
    REPORT.append("all %d packages: %s" % (len(pkgs), " ".join(sorted(pkgs))))
