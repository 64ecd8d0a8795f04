"""The built container image and two ways to run it.

Everything about how the image runs comes from the image itself (the
engine's `image inspect`): its User, WorkingDir, Entrypoint and Cmd, its
Healthcheck, its volume and exposed port, its stop signal.

- "engine": `podman run` / `docker run`, the way users run it: the root
  filesystem read-only (`--read-only`), a host directory as the volume, the
  port published on 127.0.0.1.
- "namespaces": where the engine cannot start containers (crun refuses on
  some hosts: cgroups in hybrid mode, setrlimit not permitted), the image's
  own filesystem (`podman image mount`) is run the way an OCI runtime would
  run it: bind-mounted read-only with the volume directory bound writable
  over it, a minimal /dev, a new network namespace (so the image's own port
  is free), and the entry point started by `unshare --pid --fork
  --mount-proc --root --wd --setuid --setgid`, so that it is PID 1 of a new
  PID namespace, as the image's user, in the image's working directory. The
  health check and clients enter those namespaces with nsenter, as
  `docker exec` does.
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

IMAGE = os.environ.get("CUCKOOD_IMAGE", "cuckood:latest")
START_TIMEOUT = 20.0


def run(argv, timeout=60, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout, **kw)


def docker_works():
    return shutil.which("docker") is not None and \
        run(["docker", "info"], timeout=20).returncode == 0


def pick_engine():
    """The engine that holds IMAGE: $CUCKOOD_IMAGE_ENGINE, else docker when
    its daemon answers, else podman (as scripts/image.sh picks)."""
    name = os.environ.get("CUCKOOD_IMAGE_ENGINE")
    if name:
        return name
    return "docker" if docker_works() else "podman"


def first_line(b):
    lines = [ln for ln in b.decode(errors="replace").splitlines()
             if ln.strip() and "level=" not in ln]
    return lines[-1].strip() if lines else ""


class Image:
    """What `image inspect` says about IMAGE."""

    def __init__(self, engine, ref=IMAGE):
        self.engine = engine
        self.ref = ref
        r = run([engine, "image", "inspect", ref])
        if r.returncode != 0:
            raise RuntimeError("%s image inspect %s: %s" %
                               (engine, ref, first_line(r.stderr)))
        d = json.loads(r.stdout)[0]
        cfg = d.get("Config") or {}
        self.size = d.get("Size")
        self.user = cfg.get("User") or "0"
        self.workdir = cfg.get("WorkingDir") or "/"
        self.entrypoint = cfg.get("Entrypoint") or []
        self.cmd = cfg.get("Cmd") or []
        # docker keeps the health check in Config, podman beside it.
        hc = cfg.get("Healthcheck") or d.get("Healthcheck") or {}
        self.healthcheck = hc.get("Test") or []
        self.volumes = sorted((cfg.get("Volumes") or {}).keys())
        self.ports = sorted(int(p.split("/")[0])
                            for p in (cfg.get("ExposedPorts") or {}))
        self.stopsignal = cfg.get("StopSignal") or "SIGTERM"
        self.env = cfg.get("Env") or []
        self._root = None
        self._root_tmp = None

    def argv(self, args=()):
        """The process the engine starts: Entrypoint + (args or Cmd)."""
        return list(self.entrypoint) + (list(args) if args else
                                        list(self.cmd))

    def health_argv(self):
        """The HEALTHCHECK's command as an argv ([] when there is none)."""
        t = self.healthcheck
        if not t or t[0] == "NONE":
            return []
        if t[0] == "CMD":
            return list(t[1:])
        if t[0] == "CMD-SHELL":
            return ["/bin/sh", "-c", t[1]]
        return list(t)

    def environ(self):
        """The image's environment (PATH above all), for what runs in it."""
        env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
                       "/sbin:/bin"}  # the engines' default
        env.update(e.split("=", 1) for e in self.env)
        return env

    def stop_signal(self):
        s = self.stopsignal
        if s.isdigit():
            return int(s)
        return getattr(signal, s if s.startswith("SIG") else "SIG" + s)

    def root(self):
        """The image's filesystem, read-only: podman mounts it, docker's is
        exported from a created (never started) container."""
        if self._root is not None:
            return self._root
        if self.engine == "podman":
            r = run(["podman", "image", "mount", self.ref])
            if r.returncode != 0:
                raise RuntimeError("podman image mount: %s" %
                                   first_line(r.stderr))
            self._root = r.stdout.decode().strip()
        else:
            tmp = tempfile.mkdtemp(prefix="cuckood-image-root-")
            cid = run([self.engine, "create", self.ref]).stdout.decode()
            cid = cid.strip()
            try:
                exp = subprocess.Popen([self.engine, "export", cid],
                                       stdout=subprocess.PIPE)
                subprocess.run(["tar", "-C", tmp, "-xf", "-"],
                               stdin=exp.stdout, check=True)
                exp.wait()
            finally:
                run([self.engine, "rm", "-f", cid])
            self._root = self._root_tmp = tmp
        return self._root

    def release(self):
        if self._root is None:
            return
        if self._root_tmp:
            shutil.rmtree(self._root_tmp, ignore_errors=True)
        else:
            run(["podman", "image", "unmount", self.ref])
        self._root = None

    def ids(self):
        """User's (uid, gid), names resolved in the image's own files."""
        user, _, group = self.user.partition(":")

        def lookup(path, name):
            if name.isdigit():
                return int(name), None
            with open(os.path.join(self.root(), path)) as f:
                for line in f:
                    fields = line.split(":")
                    if fields[0] == name:
                        return int(fields[2]), fields
            raise RuntimeError("%s not in the image's /%s" % (name, path))

        uid, pw = lookup("etc/passwd", user or "0")
        if group:
            return uid, lookup("etc/group", group)[0]
        if pw is not None:
            return uid, int(pw[3])
        # A bare uid: its passwd entry's group, else 0 (as runc does).
        with open(os.path.join(self.root(), "etc/passwd")) as f:
            for line in f:
                fields = line.split(":")
                if fields[2] == str(uid):
                    return uid, int(fields[3])
        return uid, 0

    def packages(self):
        """{package: version} installed in the image (its dpkg database)."""
        r = run(["dpkg-query", "--admindir=" +
                 os.path.join(self.root(), "var/lib/dpkg"), "-W",
                 "-f=${Package}\t${Version}\t${db:Status-Abbrev}\n"])
        assert r.returncode == 0, r.stderr
        out = {}
        for line in r.stdout.decode().splitlines():
            name, version, status = line.split("\t")
            if status.startswith("ii"):
                out[name] = version
        return out


def host_pid_status(pid):
    """{field: value} of /proc/<pid>/status."""
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.split()
    return out


class Container:
    """One run of the image; subclasses say how."""

    image = None
    port = None          # the port inside the container
    host_pid = None      # its PID 1, as the host sees it

    def cli(self, *args, password=None, sidecar=False):
        """redis-cli as a client of the container: (exit status, output).
        A sidecar's client shares the container's network namespace (as
        the containers of a pod do) and uses its own port."""
        if sidecar:
            argv = ["nsenter", "--target", str(self.host_pid), "--net",
                    "--", "redis-cli", "-h", "127.0.0.1", "-p",
                    str(self.port)]
        else:
            argv = self.cli_prefix() + ["redis-cli"] + self.cli_address()
        if password is not None:
            argv += ["--no-auth-warning", "-a", password]
        r = run(argv + list(args), timeout=20)
        return r.returncode, (r.stdout + r.stderr).decode().strip()

    def wait_healthy(self):
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            rc = self.health()
            if rc == 0:
                return
            if not self.running():
                raise AssertionError("exited before it was healthy:\n" +
                                     self.logs())
            if time.monotonic() > deadline:
                raise AssertionError("not healthy in %ds (last status %d):"
                                     "\n%s" % (START_TIMEOUT, rc,
                                               self.logs()))
            time.sleep(0.2)


class EngineContainer(Container):
    def __init__(self, image, data, args=(), port=None):
        self.image = image
        self.engine = image.engine
        self.name = "cuckood-test-%d-%d" % (os.getpid(), time.monotonic_ns())
        self.port = port or image.ports[0]
        self.host_port = free_port()
        self.data = data
        # podman's --read-only leaves /tmp, /var/tmp and /run writable
        # unless told not to; docker's leaves nothing.
        ro = ["--read-only"] + (["--read-only-tmpfs=false"]
                                if self.engine == "podman" else [])
        argv = [self.engine, "run", "-d", "--name", self.name] + ro + [
                "-v", "%s:%s" % (data, image.volumes[0]),
                "-p", "127.0.0.1:%d:%d" % (self.host_port, self.port),
                image.ref] + list(args)
        r = run(argv, timeout=120)
        if r.returncode != 0:
            raise AssertionError("%s: %s" % (" ".join(argv),
                                             first_line(r.stderr)))
        r = run([self.engine, "inspect", "--format", "{{.State.Pid}}",
                 self.name])
        self.host_pid = int(r.stdout.decode().strip() or 0)
        self.exit_status = None

    def cli_prefix(self):
        return []

    def exec_argv(self):
        """Runs a program of the image in the container (docker exec)."""
        return [self.engine, "exec", "-i", self.name]

    def cli_address(self):
        return ["-h", "127.0.0.1", "-p", str(self.host_port)]

    def health(self):
        return run([self.engine, "exec", self.name] +
                   self.image.health_argv(), timeout=30).returncode

    def running(self):
        r = run([self.engine, "inspect", "--format", "{{.State.Running}}",
                 self.name])
        return r.stdout.decode().strip() == "true"

    def stop(self, timeout):
        run([self.engine, "kill", "--signal", self.image.stopsignal,
             self.name])
        r = run([self.engine, "wait", self.name], timeout=timeout)
        self.exit_status = int(r.stdout.decode().split()[-1])
        return self.exit_status

    def logs(self):
        r = run([self.engine, "logs", self.name])
        return (r.stdout + r.stderr).decode(errors="replace")

    def remove(self):
        run([self.engine, "rm", "-f", self.name], timeout=60)

    @staticmethod
    def health_once(image, data):
        """The health check in a new container on the same volume."""
        hc = image.health_argv()
        return run([image.engine, "run", "--rm", "--read-only",
                    "--network=none", "-v", "%s:%s" % (data, image.volumes[0]),
                    "--entrypoint", hc[0], image.ref] + hc[1:],
                   timeout=120).returncode


# The container's mounts, done in a new mount namespace by the host's sh,
# before the image's process starts. $1 image root, $2 empty directory for
# the read-only root, $3 volume directory, $4 volume path; the rest: the
# unshare command that starts the process.
SETUP = r'''
ip link set lo up
mount --bind -o ro "$1" "$2"
mount --bind "$3" "$2$4"
mount -t tmpfs -o nosuid,mode=755 tmpfs "$2/dev"
for d in null zero full random urandom tty; do
    touch "$2/dev/$d"
    mount --bind "/dev/$d" "$2/dev/$d"
done
shift 4
exec "$@"
'''


class NamespaceContainer(Container):
    def __init__(self, image, data, args=(), port=None, argv=None):
        self.image = image
        self.port = port or image.ports[0]
        self.data = data
        uid, gid = image.ids()
        self.uid, self.gid = uid, gid
        self.rootdir = tempfile.mkdtemp(prefix="cuckood-ro-")
        self.log = tempfile.TemporaryFile()
        argv = argv if argv is not None else image.argv(args)
        start = ["unshare", "--pid", "--fork", "--kill-child",
                 "--mount-proc",
                 "--root", self.rootdir, "--wd", image.workdir,
                 "--setuid", str(uid), "--setgid", str(gid), "--"]
        env = image.environ()
        self.proc = subprocess.Popen(
            ["unshare", "--mount", "--net", "--propagation", "private",
             "--", "sh", "-ec", SETUP, "sh", image.root(), self.rootdir,
             data, image.volumes[0]] + start + argv,
            stdout=self.log, stderr=subprocess.STDOUT, env=env,
            stdin=subprocess.DEVNULL, cwd="/")
        self.host_pid = self._find_pid1()
        self.exit_status = None

    def _find_pid1(self):
        """The host's pid of the namespace's PID 1: unshare's child, once
        it has exec'd the image's process."""
        deadline = time.monotonic() + START_TIMEOUT
        path = "/proc/%d/task/%d/children" % (self.proc.pid, self.proc.pid)
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return None
            try:
                with open(path) as f:
                    kids = [int(k) for k in f.read().split()]
                for k in kids:
                    st = host_pid_status(k)
                    comm = os.readlink("/proc/%d/exe" % k)
                    if st["NSpid"][-1] == "1" and \
                            os.path.basename(comm) != "unshare":
                        return k
            except (OSError, KeyError):
                pass
            time.sleep(0.05)
        return None

    def enter(self):
        """nsenter into the container as its user, in its working
        directory (what `docker exec` does)."""
        return ["nsenter", "--target", str(self.host_pid), "--mount",
                "--net", "--pid", "--root", "--wdns=" + self.image.workdir,
                "--setuid", str(self.uid), "--setgid", str(self.gid), "--"]

    def exec_argv(self):
        return self.enter()

    def cli_prefix(self):
        # The host's redis-cli on the container's network only.
        return ["nsenter", "--target", str(self.host_pid), "--net", "--"]

    def cli_address(self):
        return ["-h", "127.0.0.1", "-p", str(self.port)]

    def health(self):
        if not self.running():
            return 255
        return run(self.enter() + self.image.health_argv(), timeout=30,
                   env=self.image.environ()).returncode

    def running(self):
        return self.host_pid is not None and self.proc.poll() is None

    def stop(self, timeout):
        os.kill(self.host_pid, self.image.stop_signal())
        self.exit_status = self.proc.wait(timeout=timeout)
        return self.exit_status

    def logs(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def remove(self):
        if self.proc.poll() is None:
            # PID 1's end ends its namespace; --kill-child covers the rest.
            if self.host_pid:
                os.kill(self.host_pid, signal.SIGKILL)
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        os.rmdir(self.rootdir)

    @staticmethod
    def health_once(image, data):
        c = NamespaceContainer(image, data, argv=image.health_argv())
        try:
            return c.proc.wait(timeout=60)
        finally:
            c.remove()


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pick_mode(image):
    """("engine" | "namespaces", why): the engine when it can start the
    image's health check as a container (exit status 0 or 1 is the check's
    own answer), else the namespaces."""
    hc = image.health_argv()
    argv = [image.engine, "run", "--rm", "--network=none",
            "--entrypoint", hc[0], image.ref] + hc[1:]
    r = run(argv, timeout=120)
    if r.returncode in (0, 1):
        return "engine", "%s run works" % image.engine
    if image.engine != "podman":
        raise RuntimeError("%s run fails (%s) and only podman can mount "
                           "an image" % (image.engine, first_line(r.stderr)))
    return "namespaces", "%s run fails: %s" % (image.engine,
                                               first_line(r.stderr))
