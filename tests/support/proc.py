"""The one launcher of the suites and the benchmarks: cuckood and
redis-server (with or without the cuckoo.so module), each on a free port,
ready once the port answers with the pid of the process started.

Binaries
  daemon_binary()     $CUCKOOD_BIN, else build/server/cuckood; a missing
                      binary FAILS the test. With CUCKOOD_TEST_REDIS_SERVER=1
                      (use_redis_server()) or CUCKOOD_TEST_MODULE=1
                      (use_module()) it is the system's redis-server, the
                      reference run: only there may a suite skip.
  redis_server_binary(), module_path() ($CUCKOO_MODULE, else
                      build/module/cuckoo.so); REDIS_CLI.
  run_binary(*args, timeout=10, **kw)
                      subprocess.run of daemon_binary(), output piped.
  free_port()         a port that was free a moment ago; cluster_port() one
                      whose cluster bus port (+10000) is free too.
  module_server_env() the environment of a redis-server loading the module
                      ($CUCKOO_SERVER_PRELOAD preloaded: the sanitizer
                      build's module needs the ASan runtime first), or None.
  sanitizer_report(text)
                      the first ASan/LSan/UBSan report in a log, or None.

Waiting
  wait_until(pred, timeout=30, step=0.05, what=None)
                      calls pred until it returns a true value and returns
                      that value; past timeout it raises AssertionError
                      naming `what` and pred's last value. A bound, never a
                      measurement.
  server_ms(command)  the server's clock (TIME) in ms; command is a
                      client's execute_command or a RawConn's command.
  wait_expired(command, key, timeout=10)
                      reads key's PEXPIRETIME, then polls TIME until the
                      server's clock is past it: the key is expired, and
                      no command has touched it since its time came.

Server(binary, *args, password=None, conf=None, dir=None, cwd=None,
       prefix=(), preexec_fn=None, tls=None, port=None, env=None,
       start_timeout=None)
  The process. Without conf it runs as `BINARY BASE-ARGS ARGS...` (the
  class's base_args(port): where it listens and its data directory). With
  conf (a config file's text) it runs as `BINARY CONF ARGS...` and nothing
  is added: the text and ARGS say where it listens, through the
  placeholders "{port}" and "{dir}", which are replaced in both; password
  then only says how to AUTH. prefix goes before the binary (it must exec
  it, as setpriv does). dir is the data directory (default: a fresh one,
  removed by cleanup()); the log (stdout and stderr) and the config file
  live in s.home. port fixes the port (default: a free one each start).
  start() picks a port, starts the process and polls (bounded) until the
  port answers INFO server with the pid of the process it started: another
  process answering there (a port taken between choosing and binding, e.g.
  by a parallel ctest job) is a PidMismatch, and start() kills its process
  and tries another port, at most ATTEMPTS times. start() may be called
  again after the process stopped. fail_to_start(timeout=20) starts it
  expecting an exit: the exit status, None when it still runs (killed).
  stop(timeout=15) SIGTERM then wait: the exit status, None if it had to be
  killed. shutdown(save=False) SHUTDOWN [NO]SAVE then wait. kill()
  SIGKILL. wait(timeout=15) the exit status of a process that exits by
  itself. cleanup() stops it, removes s.home (and dir unless the caller
  gave it) and fails on a sanitizer report in the log of a preloaded
  module. raw(**kw) a RawConn, client(**kw) a redis-py client, log_text()
  the whole log. Attributes: port, pid, proc, dir, home, conf (its path,
  or None), password, args.

Daemon(*args, binary=None, **kw)
  The server under test: cuckood (daemon_binary(), or binary), listening
  as `--port P --dir DIR --bind 127.0.0.1 [--requirepass PASSWORD]`; in
  the reference runs redis-server, with the module loaded under
  use_module().
RedisServer(*args, module=False, module_args=(), binary=None, **kw)
  redis-server (no saving, no AOF, unless ARGS say otherwise), with the
  module and its load arguments when module is true; ready only once it
  has loaded its data (PING answers); stop() is SHUTDOWN NOSAVE, its log
  is kept across restarts. ModuleServer(*args, **kw): module=True.
module_cluster(n, *args, replicas=0, pick_port=cluster_port)
  n ModuleServers made one Redis Cluster, every node's state ok; a node
  that cannot listen on its port pair tries a new pair (start()'s
  ATTEMPTS).
Fleet(cls)
  The servers of one test: fleet(*args, start=True, **kw) makes one (and
  starts it); cleanup() cleans every one, then raises the first failure.
shared_dir(prefix)
  A context manager for servers that share one data directory (restarts,
  a second server reading the first's files): yields (dir, servers), a
  fresh directory and a list the caller appends each server to; at the
  end it kills them (no final save to wait for), cleans them up as
  cleanup_all() does and removes the directory.
"""

import contextlib
import os
import random
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time

from support.resp import RawConn, RespError, encode_command, info_field
from support.tls_certs import server_args as tls_server_args

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The password of the integration suites' auth_server fixture.
PASSWORD = "s3cret pass"

REDIS_CLI = shutil.which("redis-cli")


def _fail(msg):
    import pytest
    pytest.fail(msg)


def use_redis_server():
    return os.environ.get("CUCKOOD_TEST_REDIS_SERVER", "") not in ("", "0")


def use_module():
    """CUCKOOD_TEST_MODULE=1: the target is redis-server with the cuckoo.so
    module ($CUCKOO_MODULE, else build/module/cuckoo.so) loaded, which runs
    the CF suites unchanged against the module."""
    return os.environ.get("CUCKOOD_TEST_MODULE", "") not in ("", "0")


def module_server_env():
    """The environment of a redis-server that loads the module. With
    $CUCKOO_SERVER_PRELOAD (set by the sanitizer build: the ASan runtime,
    which must be the first library of a process, and Debian's redis-server
    is not linked with it) that library is preloaded into the server, and
    only there. None: the server inherits ours."""
    preload = os.environ.get("CUCKOO_SERVER_PRELOAD")
    if not preload:
        return None
    env = dict(os.environ)
    env["LD_PRELOAD"] = preload
    # A report ends the server with an exit status, not abort(): Redis's own
    # SIGABRT handler (its crash report) would hang in a process that the
    # sanitizer has stopped.
    env["ASAN_OPTIONS"] = ":".join(
        filter(None, [env.get("ASAN_OPTIONS"), "abort_on_error=0"]))
    return env


def sanitizer_report(text):
    """The first sanitizer report (ASan, LSan, UBSan) in a log, or None."""
    m = re.search(r"^.*(==\d+==ERROR: \w+Sanitizer|runtime error:).*$", text,
                  re.M)
    return text[m.start():m.start() + 3000] if m else None


def module_path():
    path = os.environ.get("CUCKOO_MODULE") or os.path.join(
        ROOT, "build", "module", "cuckoo.so")
    if not os.access(path, os.R_OK):
        _fail("module not found at %s (set CUCKOO_MODULE)" % path)
    return os.path.abspath(path)


def redis_server_binary(skip=False):
    """The system's redis-server; missing, it fails the test (skips it
    when skip is true)."""
    path = shutil.which("redis-server")
    if path is None:
        import pytest
        (pytest.skip if skip else pytest.fail)(
            "redis-server not installed (scripts/deps.sh test)")
    return path


def daemon_binary():
    if use_redis_server() or use_module():
        return redis_server_binary(skip=True)
    path = os.environ.get("CUCKOOD_BIN") or os.path.join(
        ROOT, "build", "server", "cuckood")
    if not os.access(path, os.X_OK):
        _fail("cuckood binary not found at %s (set CUCKOOD_BIN)" % path)
    return os.path.abspath(path)


def run_binary(*args, timeout=10, **kw):
    opts = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                timeout=timeout)
    opts.update(kw)
    return subprocess.run([daemon_binary()] + [str(a) for a in args], **opts)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster_port():
    """A free port whose cluster bus port (+10000) is free too."""
    rnd = random.Random()
    for _ in range(200):
        p = rnd.randrange(20000, 55535)
        try:
            for q in (p, p + 10000):
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    s.bind(("127.0.0.1", q))
            return p
        except OSError:
            continue
    raise RuntimeError("no free port pair")


def wait_until(pred, timeout=30.0, step=0.05, what=None):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() >= deadline:
            what = what or (pred.__doc__ or pred.__name__).strip()
            raise AssertionError("timed out after %gs waiting for %s "
                                 "(last: %r)" % (timeout, what, v))
        time.sleep(step)


def server_ms(command):
    sec, usec = command("TIME")
    return int(sec) * 1000 + int(usec) // 1000


def wait_expired(command, key, timeout=10.0):
    # Redis expires a key once its clock is past the time (now > when),
    # cuckood once it reaches it: past it satisfies both. A key already
    # gone (-2) is expired too; one without a timeout (-1) never will be.
    at = int(command("PEXPIRETIME", key))
    assert at != -1, "%r has no timeout" % (key,)
    if at >= 0:
        wait_until(lambda: server_ms(command) > at, timeout, step=0.005,
                   what="the server's clock to pass %r's time %d" % (key, at))


def replica_synced(master, replica):
    """Returns once replica (a started Server) has its link to master up
    and has applied everything master had written when called."""
    off = master.client().info("replication")["master_repl_offset"]

    def caught_up():
        inf = replica.client().info("replication")
        return (inf.get("master_link_status") == "up" and
                inf.get("slave_repl_offset", -1) >= off)
    wait_until(caught_up, what="replica to catch up")


def redis_args(port, dir, module):
    """redis-server's arguments for a server on port with its data in dir:
    no saving and no AOF; with the module loaded when module is true."""
    argv = ["--port", str(port), "--dir", dir, "--bind", "127.0.0.1",
            "--save", "", "--daemonize", "no", "--appendonly", "no"]
    if module:
        # No per-command latency histograms: each is allocated on its
        # command's first call, which would move used_memory under a test
        # that checks a refusal allocates nothing.
        argv += ["--latency-tracking", "no", "--enable-debug-command", "yes",
                 "--loadmodule", module_path()]
    return argv


# --------------------------------------------------------------------------
# The process.

class PidMismatch(AssertionError):
    """The port answered, but not from the process the launcher started."""


class Exited(AssertionError):
    """The process exited while it was awaited."""


def answering_pid(port, password=None):
    """The process_id that INFO server reports on port: an int, None when
    nothing answers yet, or the error reply that came instead."""
    try:
        c = RawConn(port, timeout=5.0)
    except OSError:
        return None
    try:
        if password is not None:
            c.command("AUTH", password)
        info = c.command("INFO", "server")
        # INFO answers while the files load; the server is up once they
        # are loaded (until then other commands answer -LOADING).
        persistence = c.command("INFO", "persistence")
    except OSError:
        return None
    finally:
        c.close()
    if isinstance(info, RespError):
        return info
    if (not isinstance(persistence, RespError)
            and info_field(persistence, "loading") == "1"):
        return None
    pid = info_field(info, "process_id")
    return int(pid) if pid is not None else RespError("no process_id")


class Server:
    START_TIMEOUT = 30.0
    STOP_TIMEOUT = 15.0
    ATTEMPTS = 5
    LOG_MODE = "wb"  # "ab": one log across restarts
    pick_port = staticmethod(free_port)

    def __init__(self, binary, *args, password=None, conf=None, dir=None,
                 cwd=None, prefix=(), preexec_fn=None, tls=None, port=None,
                 env=None, start_timeout=None):
        # It runs in its own directory: a relative path is made absolute.
        self.binary = os.path.abspath(binary) if os.sep in binary else binary
        self.args = [str(a) for a in args]
        self.password = password
        self.conf_text = conf
        self.prefix = list(prefix)
        self.preexec_fn = preexec_fn
        self.env = env
        self.home = tempfile.mkdtemp(prefix="cuckood-integ-")
        os.chmod(self.home, 0o755)  # a daemon that drops root reads conf
        self.own_dir = dir is None
        self.dir = self.home if dir is None else dir
        self.cwd = cwd
        self.conf = None if conf is None else os.path.join(self.home,
                                                           "cuckood.conf")
        self.logpath = os.path.join(self.home, "daemon.log")
        self.proc = None
        self.port = None
        self.log = None
        if port is not None:
            self.pick_port = lambda: port
        if start_timeout is not None:
            self.START_TIMEOUT = start_timeout
        # tls: a certificate set from tls_certs.make_certs(): the server
        # also listens on a TLS port (the plain port answers the readiness
        # check), and client() and raw() use TLS with the client's
        # certificate.
        self.certs = tls
        self.tls_port = None

    def base_args(self, port):
        return []

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def _fill(self, text, port):
        return text.replace("{port}", str(port)).replace("{dir}", self.dir)

    def argv(self, port):
        argv = self.prefix + [self.binary]
        if self.conf is not None:
            with open(self.conf, "w") as f:
                f.write(self._fill(self.conf_text, port))
            os.chmod(self.conf, 0o644)
            argv.append(self.conf)
        else:
            argv += self.base_args(port)
        if self.certs is not None:
            self.tls_port = free_port()
            argv += ["--tls-port", str(self.tls_port)]
            argv += tls_server_args(self.certs)
        return argv + [self._fill(a, port) for a in self.args]

    def tls_context(self):
        ctx = ssl.create_default_context(cafile=self.certs["ca.crt"])
        ctx.load_cert_chain(self.certs["client.crt"],
                            self.certs["client.key"])
        return ctx

    def _spawn(self, port):
        self.log = open(self.logpath, self.LOG_MODE)
        self.port = port
        self.proc = subprocess.Popen(
            self.argv(port), cwd=self.cwd or self.dir, stdout=self.log,
            stderr=subprocess.STDOUT, preexec_fn=self.preexec_fn,
            env=self.env)

    def start(self):
        assert not self.alive(), "already running"
        why = None
        for _ in range(self.ATTEMPTS):
            self._spawn(self.pick_port())
            try:
                self._await_own_answer()
                self._await_ready()
                return self
            except (PidMismatch, Exited) as e:
                why = e
                self.kill()
            except BaseException:
                self.kill()
                raise
        raise type(why)("server not started in %d attempts: %s\nlog:\n%s"
                        % (self.ATTEMPTS, why, self.log_text()[-4000:]))

    def fail_to_start(self, timeout=20):
        """Starts it expecting it to exit: the exit status, or None when it
        still runs after timeout (then it is killed)."""
        assert not self.alive(), "already running"
        self._spawn(self.pick_port())
        try:
            return self.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def _await_own_answer(self):
        """Returns once the port answers with this process's pid."""
        last = []

        def answered():
            if self.proc.poll() is not None:
                raise Exited("exited with status %d" % self.proc.returncode)
            pid = answering_pid(self.port, self.password)
            last[:] = [pid]
            return isinstance(pid, int) and pid

        try:
            pid = wait_until(answered, self.START_TIMEOUT, what="port %d to "
                             "answer INFO server" % self.port)
        except (PidMismatch, Exited):
            raise
        except AssertionError:
            self.kill()
            raise AssertionError("port %d never answered INFO server (last: "
                                 "%r)\nlog:\n%s" % (self.port, last,
                                                    self.log_text()[-4000:]))
        if pid != self.proc.pid:
            raise PidMismatch("port %d is answered by pid %d, not by the "
                              "daemon started (pid %d)"
                              % (self.port, pid, self.proc.pid))

    def _await_ready(self):
        """After the pid check: what else start() waits for."""

    def _close_log(self):
        if self.log is not None:
            self.log.close()
            self.log = None

    def stop(self, timeout=None):
        """SIGTERM, then wait: the exit status (None if it had to be
        killed)."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
        return self._reap(timeout)

    def shutdown(self, save=False, timeout=None):
        """SHUTDOWN NOSAVE (SAVE), then wait: the exit status (None if it
        had to be killed)."""
        if self.alive():
            try:
                with self.raw(timeout=30) as c:
                    if self.password is not None:
                        c.command("AUTH", self.password)
                    c.send(encode_command("SHUTDOWN",
                                          "SAVE" if save else "NOSAVE"))
                    c.closed_by_peer(timeout or self.STOP_TIMEOUT)
            except OSError:
                pass
        return self._reap(timeout)

    def _reap(self, timeout):
        if self.proc is None:
            return None
        try:
            rc = self.proc.wait(timeout=timeout or self.STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = None
        self._close_log()
        return rc

    def kill(self):
        if self.alive():
            self.proc.kill()
            self.proc.wait()
        self._close_log()

    def wait(self, timeout=None):
        """The exit status of a process that exits by itself."""
        rc = self.proc.wait(timeout=timeout or self.STOP_TIMEOUT)
        self._close_log()
        return rc

    def sanitized(self):
        """Whether a sanitizer runtime is preloaded into this process."""
        return bool(self.env and self.env.get("LD_PRELOAD"))

    def cleanup(self):
        self.stop()  # an exit, so that a leak check runs
        report = sanitizer_report(self.log_text()) if self.sanitized() \
            else None
        shutil.rmtree(self.home, ignore_errors=True)
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        assert report is None, "sanitizer report:\n" + report

    def log_text(self):
        try:
            with open(self.logpath, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def raw(self, **kw):
        if self.certs is not None:
            return RawConn(self.tls_port, tls=self.tls_context(), **kw)
        return RawConn(self.port, **kw)

    def client(self, **kw):
        import redis
        opts = dict(host="127.0.0.1", port=self.port,
                    password=self.password, socket_timeout=30)
        if self.certs is not None:
            opts.update(port=self.tls_port, ssl=True,
                        ssl_ca_certs=self.certs["ca.crt"],
                        ssl_certfile=self.certs["client.crt"],
                        ssl_keyfile=self.certs["client.key"])
        opts.update(kw)
        return redis.Redis(**opts)


class Daemon(Server):
    def __init__(self, *args, binary=None, **kw):
        self.is_redis = binary is None and (use_redis_server() or
                                            use_module())
        if use_module() and binary is None:
            kw.setdefault("env", module_server_env())
        super().__init__(binary or daemon_binary(), *args, **kw)

    def base_args(self, port):
        if self.is_redis:
            argv = redis_args(port, self.dir, use_module())
        else:
            argv = ["--port", str(port), "--dir", self.dir,
                    "--bind", "127.0.0.1"]
        if self.password is not None:
            argv += ["--requirepass", self.password]
        return argv


class RedisServer(Server):
    LOG_MODE = "ab"

    def __init__(self, *args, module=False, module_args=(), binary=None,
                 **kw):
        self.module = module
        self.module_args = [str(a) for a in module_args]
        if module:
            kw.setdefault("env", module_server_env())
        super().__init__(binary or redis_server_binary(), *args, **kw)

    def base_args(self, port):
        argv = redis_args(port, self.dir, self.module) + self.module_args
        if self.password is not None:
            argv += ["--requirepass", self.password]
        return argv

    def _await_ready(self):
        def loaded():
            if self.proc.poll() is not None:
                raise Exited("exited with status %d" % self.proc.returncode)
            with self.raw(timeout=5) as c:
                if self.password is not None:
                    c.command("AUTH", self.password)
                return c.command("PING") == "PONG"
        wait_until(loaded, self.START_TIMEOUT,
                   what="redis-server on port %d to load" % self.port)

    def stop(self, timeout=None, save=False):
        return self.shutdown(save=save, timeout=timeout)


class ModuleServer(RedisServer):
    """redis-server with the module loaded."""

    def __init__(self, *args, **kw):
        super().__init__(*args, module=True, **kw)


def module_cluster(n, *args, replicas=0, pick_port=cluster_port):
    """n ModuleServers (ARGS each) made one Redis Cluster by redis-cli
    --cluster create with replicas replicas a master, returned once every
    node reports cluster_state:ok; cleanup_all() them when done (on a
    failure here they are cleaned up already). Each node's port comes from
    pick_port() (a port whose bus port is free too), called again for a
    node that could not listen on the one picked (another run took it, or
    its bus port, meanwhile)."""
    if REDIS_CLI is None:
        _fail("redis-cli not installed (scripts/deps.sh test)")
    nodes = [ModuleServer("--cluster-enabled", "yes",
                          "--cluster-config-file", "nodes.conf", *args)
             for _ in range(n)]
    for node in nodes:
        node.pick_port = pick_port
    try:
        for node in nodes:
            node.start()
        out = subprocess.run(
            [REDIS_CLI, "--cluster", "create"] +
            ["127.0.0.1:%d" % node.port for node in nodes] +
            ["--cluster-replicas", str(replicas), "--cluster-yes"],
            capture_output=True, timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr
        wait_until(lambda: all(
            b"cluster_state:ok" in node.client().execute_command(
                "CLUSTER", "INFO") for node in nodes), 60,
            what="cluster_state:ok")
    except BaseException:
        cleanup_all(nodes)
        raise
    return nodes


class Fleet:
    """The servers of one test (a fixture's factory)."""

    def __init__(self, cls):
        self.cls = cls
        self.made = []

    def __call__(self, *args, start=True, **kw):
        s = self.cls(*args, **kw)
        self.made.append(s)
        return s.start() if start else s

    def cleanup(self):
        cleanup_all(self.made)


@contextlib.contextmanager
def shared_dir(prefix):
    d = tempfile.mkdtemp(prefix=prefix)
    servers = []
    try:
        yield d, servers
    finally:
        for s in servers:
            s.kill()
        try:
            cleanup_all(servers)
        finally:
            shutil.rmtree(d, ignore_errors=True)


@contextlib.contextmanager
def daemons(prefix):
    """make(*args): a cuckood (not started) with snapshots off and args,
    in one scratch directory for all of them; every one is killed and the
    directory removed at the end."""
    with shared_dir(prefix) as (d, servers):
        def make(*extra):
            s = Daemon("--save", "", *extra, dir=d)
            servers.append(s)
            return s

        yield make


def cleanup_all(servers):
    """cleanup() of every server, then the first failure (a sanitizer
    report), if any."""
    errors = []
    for s in servers:
        try:
            s.cleanup()
        except AssertionError as e:
            errors.append(e)
    if errors:
        raise errors[0]
