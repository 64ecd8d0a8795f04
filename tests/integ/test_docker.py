"""The container image, tested without a container engine: the Dockerfile
has what the image promises, the built binary runs exactly as the image's
ENTRYPOINT runs it (the image's config file, arguments appended, a non-root
user, a scratch directory standing in for /data), the HEALTHCHECK probe
answers as a health check must, SIGTERM stops it cleanly, the programs
need no shared library beyond those the runtime image holds, and the
runtime's root (scripts/image_root.sh) runs them in a chroot.
tests/image builds the image and runs it for real (CI does).
"""

import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from support.proc import Daemon, ROOT, daemon_binary, use_redis_server
from support.resp import encode_command

pytestmark = pytest.mark.skipif(use_redis_server(),
                                reason="cuckood's own image")

DOCKERFILE = os.path.join(ROOT, "Dockerfile")
RUNTIME_PACKAGES = {"libuv1", "libhiredis0.14", "libxxhash0", "libssl3"}
RUNTIME_LIBS = {"libuv.so.1", "libhiredis.so.0.14", "libxxhash.so.0",
                "libssl.so.3", "libcrypto.so.3", "libc.so.6", "libm.so.6"}
NOBODY = 65534


def instructions():
    """(stage index, INSTRUCTION, arguments) for every instruction, with
    continuation lines joined and comments dropped."""
    with open(DOCKERFILE) as f:
        text = f.read()
    text = re.sub(r"\\\n", " ", text)
    out, stage = [], -1
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        word = word.upper()
        if word == "FROM":
            stage += 1
        out.append((stage, word, rest.strip()))
    return out


def last(stage, word):
    found = [a for s, w, a in instructions() if s == stage and w == word]
    assert found, "%s missing in stage %d" % (word, stage)
    return found[-1]


def exec_form(args):
    v = json.loads(args)
    assert isinstance(v, list) and all(isinstance(x, str) for x in v)
    return v


def test_dockerfile_stages():
    froms = [a for s, w, a in instructions() if w == "FROM"]
    assert len(froms) == 2
    assert re.match(r"^debian:bookworm\s+AS\s+builder$", froms[0], re.I)
    assert froms[1] == "scratch"
    build = " ".join(a for s, w, a in instructions() if s == 0 and w == "RUN")
    assert "-DCUCKOOD_WERROR=ON" in build
    # gcc without recommends cannot link without libc6-dev's crt files.
    assert "libc6-dev" in build.split()
    assert "ctest" in build and "-L unit" in build
    # The runtime's root is assembled in the builder, from both programs.
    m = re.search(r"scripts/image_root\.sh (\S+) ([^&;]*)", build)
    assert m, build
    assert m.group(2).split() == ["build/server/cuckood",
                                  "build/tools/cuckood-load"]
    copies = [a for s, w, a in instructions() if s == 1 and w == "COPY"]
    assert "--from=builder %s/ /" % m.group(1) in copies
    assert any(c.startswith("--from=builder --chown=10001:10001 ") and
               c.endswith(" /data/") for c in copies)
    assert os.path.isfile(os.path.join(ROOT, "conf", "docker.conf"))


def test_dockerfile_runtime_runs_nothing():
    # An empty base has no shell: every file comes from the builder.
    assert not [a for s, w, a in instructions() if s == 1 and w == "RUN"]
    assert all(a.startswith("--from=builder ") for s, w, a in instructions()
               if s == 1 and w == "COPY")


def loader_binary():
    return os.environ.get("CUCKOOD_LOAD_BIN") or os.path.join(
        ROOT, "build", "tools", "cuckood-load")


def test_image_root_runs_in_a_chroot(tmp_path):
    """scripts/image_root.sh on the built programs: the tree the image
    holds, in which both programs start with nothing else around them."""
    root = str(tmp_path / "root")
    r = subprocess.run(["bash", os.path.join(ROOT, "scripts",
                                             "image_root.sh"), root,
                        daemon_binary(), loader_binary()],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    for f in ("usr/local/bin/cuckood", "usr/local/bin/cuckood-load",
              "etc/cuckood/cuckood.conf", "etc/passwd", "etc/group",
              "var/lib/dpkg/status", "lib64/ld-linux-x86-64.so.2"):
        assert os.path.isfile(os.path.join(root, f)), f
    with open(os.path.join(root, "etc/passwd")) as f:
        assert "cuckood:x:10001:10001:" in f.read()
    with open(os.path.join(root, "var/lib/dpkg/status")) as f:
        pkgs = set(re.findall(r"^Package: (\S+)$", f.read(), re.M))
    sanitized = "libasan" in subprocess.run(
        ["ldd", daemon_binary()], stdout=subprocess.PIPE).stdout.decode()
    if not sanitized:
        assert pkgs == RUNTIME_PACKAGES | {"libc6"}, pkgs
    if os.geteuid() != 0:
        pytest.skip("chroot needs root")
    if sanitized:
        # LeakSanitizer needs /proc, which the bare tree has not; the
        # image is never built with the sanitizers.
        pytest.skip("sanitizer build")
    for argv, want in ((["cuckood", "--version"], b"cuckood v="),
                       (["cuckood-load", "--help"], b"SYNOPSIS")):
        r = subprocess.run(["chroot", "--userspec=10001:10001", root] +
                           ["/usr/local/bin/" + argv[0]] + argv[1:],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=30)
        assert r.returncode == 0, r.stderr
        assert want in r.stdout


def test_dockerfile_runtime_settings():
    user = last(1, "USER")
    uid = user.split(":")[0]
    assert uid not in ("root", "0")
    assert last(1, "WORKDIR") == "/data"
    vol = last(1, "VOLUME")
    assert vol in ("/data", '["/data"]')
    assert "6379" in last(1, "EXPOSE").split()
    assert last(1, "STOPSIGNAL") == "SIGTERM"
    entry = exec_form(last(1, "ENTRYPOINT"))
    assert entry[0] == "cuckood" and entry[1].endswith(".conf")
    assert not [a for s, w, a in instructions() if w == "CMD"], \
        "a CMD would be appended to the entry point's arguments"
    hc = last(1, "HEALTHCHECK")
    assert re.search(r"--interval=\d+s", hc) and re.search(r"--timeout=\d+s",
                                                           hc)
    assert healthcheck() == ["cuckood", entry[1], "--ping"]


def healthcheck():
    hc = last(1, "HEALTHCHECK")
    return exec_form(hc[hc.index("CMD") + 3:].strip())


def test_dockerignore():
    with open(os.path.join(ROOT, ".dockerignore")) as f:
        lines = {ln.strip() for ln in f}
    for p in ("build*/", ".git", "**/node_modules/", "**/*.cuckoo"):
        assert p in lines


def image_conf(data_dir):
    """The image's config file with /data mapped to the stand-in."""
    with open(os.path.join(ROOT, "conf", "docker.conf")) as f:
        text = f.read()
    assert re.search(r"^dir /data$", text, re.M)
    assert re.search(r"^bind \* -::\*$", text, re.M)
    assert re.search(r"^daemonize no$", text, re.M)
    return text.replace("dir /data", "dir " + data_dir)


def as_nonroot():
    """argv prefix that drops to an unprivileged user, as USER does."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
            "--clear-groups"]


def probe(port):
    return subprocess.run([daemon_binary(), "--ping", "127.0.0.1:%d" % port],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=10)


def health(conf, cwd):
    """The image's HEALTHCHECK command, run as the engine runs it: in the
    container's working directory, the image's config file mapped."""
    argv = healthcheck()
    entry = exec_form(last(1, "ENTRYPOINT"))
    argv = [daemon_binary()] + [conf if a == entry[1] else a
                                for a in argv[1:]]
    return subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=10)


def test_entrypoint_probe_and_sigterm():
    prefix = as_nonroot()
    assert prefix is not None, "no setpriv (util-linux) to drop root"
    binary = daemon_binary()
    if prefix:
        # The unprivileged user must reach the binary, as in the image.
        path = binary
        while path != "/":
            if not os.stat(path).st_mode & 0o001:
                pytest.skip("%s not reachable by an unprivileged user" % path)
            path = os.path.dirname(path)
    tmp = tempfile.mkdtemp(prefix="cuckood-image-")
    d = None
    try:
        data = os.path.join(tmp, "data")
        os.mkdir(data)
        os.chmod(tmp, 0o755)
        if prefix:
            os.chown(data, NOBODY, NOBODY)
        entry = exec_form(last(1, "ENTRYPOINT"))
        # `docker run IMAGE --requirepass s3cret --port N`: the arguments
        # follow the entry point's. With a password, since the image's
        # configuration listens on every interface.
        d = Daemon(*entry[2:], "--requirepass", "s3cret", "--port", "{port}",
                   conf=image_conf(data), dir=data, cwd=data, prefix=prefix,
                   password="s3cret").start()
        r = probe(d.port)
        assert r.returncode == 0
        assert r.stdout.startswith(b"NOAUTH")  # alive, wants a password
        # The HEALTHCHECK itself follows `--port` given to docker run.
        r = health(d.conf, data)
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith(b"NOAUTH")
        with d.raw(timeout=5) as c:
            c.send(encode_command("AUTH", "s3cret") +
                   encode_command("CF.ADD", "k", "a") +
                   encode_command("CONFIG", "GET", "dir"))
            assert c.read() == "OK"
            assert c.read() == 1
            # dir from the image's file
            assert c.read() == [b"dir", data.encode()]
        if prefix:
            with open("/proc/%d/status" % d.pid) as f:
                uid = [ln for ln in f if ln.startswith("Uid:")][0]
            assert uid.split()[1:] == [str(NOBODY)] * 4
        assert d.stop() == 0  # docker stop: SIGTERM
        out = d.log_text()
        assert "Received SIGTERM" in out
        assert "ready to exit" in out
        r = probe(d.port)
        assert r.returncode != 0  # down: unhealthy
        assert health(d.conf, data).returncode != 0
        for name in os.listdir(data):  # whatever it saved is the user's
            st = os.stat(os.path.join(data, name))
            if prefix:
                assert st.st_uid == NOBODY
    finally:
        if d is not None:
            d.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


def test_binary_needs_only_runtime_libraries():
    ldd = shutil.which("ldd")
    assert ldd is not None, "no ldd (libc-bin)"
    out = subprocess.run([ldd, daemon_binary()], stdout=subprocess.PIPE,
                         check=True).stdout.decode()
    if "libasan" in out or "libubsan" in out:
        pytest.skip("sanitizer build")
    libs = {}
    out += subprocess.run([ldd, loader_binary()], stdout=subprocess.PIPE,
                          check=True).stdout.decode()
    for line in out.splitlines():
        m = re.match(r"\s*(\S+)(?: => (\S+))?", line)
        name, path = m.group(1), m.group(2)
        if name.startswith("linux-vdso") or "ld-linux" in name:
            continue
        libs[name] = path
    assert set(libs) <= RUNTIME_LIBS, sorted(libs)
    assert {"libuv.so.1", "libhiredis.so.0.14", "libxxhash.so.0"} <= \
        set(libs)
    # Each comes from a package the runtime image holds (or libc6).
    if shutil.which("dpkg") is None:
        return
    for name, path in libs.items():
        real = os.path.realpath(path)
        owner = None
        for p in (path, real, "/usr" + real if not real.startswith("/usr")
                  else real[4:]):
            r = subprocess.run(["dpkg", "-S", p], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
            if r.returncode == 0:
                owner = r.stdout.decode().split(":")[0]
                break
        assert owner is not None, path
        assert owner in RUNTIME_PACKAGES | {"libc6"}, (name, owner)
