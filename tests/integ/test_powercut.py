"""Power cuts: what was acknowledged survives losing every unsynced byte.

A kill -9 keeps the kernel's page cache, so it cannot show a missing fsync
of a file or of its directory. Here the real cuckood runs with its file
system calls recorded (the preload library tests/fault/fsfault.c) under a
write load; then, for crash points along the record (every fsync, rename
and unlink, just before and just after, and points between),
tests/support/fsmodel.py rebuilds the data directory as a disk could hold
it after a power cut there: only what was synced, everything written, and
mixes of both (a prefix of the directory changes not yet made durable,
unsynced tails cut at 4 KiB boundaries). cuckood starts on each, and:

- it starts (a refusal is a failure: every state here is one a real disk
  can hold after a cut);
- appendfsync always: every CF.ADD acknowledged before the cut is there;
- appendfsync everysec: everything acknowledged 2 s before the cut;
- snapshots only: everything acknowledged before the last SAVE or BGSAVE
  that answered OK (and finished) before the cut;
- FLUSHALL: keys flushed by an acknowledged FLUSHALL do not come back.

Each scenario runs under appendfsync always, everysec and snapshots only
where it means something: steady writes, BGREWRITEAOF under writes,
SAVE and BGSAVE, FLUSHALL, CONFIG SET appendonly yes at run time, and
ACL SAVE. CUCKOOD_POWERCUT_POINTS bounds the crash points per scenario
(CI samples a few; 0 tries every point the record offers:
tests/powercut.sh)."""

import json
import os
import random
import shutil
import tempfile
import threading
import time

import pytest
import redis

from support import fsmodel
from support.durable import bgsave, fsfault_env, missing
from support.proc import Daemon, use_redis_server, wait_until

pytestmark = pytest.mark.skipif(use_redis_server(),
                                reason="cuckood's own files")

POINTS = int(os.environ.get("CUCKOOD_POWERCUT_POINTS", "4"))
TORN = int(os.environ.get("CUCKOOD_POWERCUT_TORN", "1"))
# each writer's pause between adds: fewer syncs to try in a full run
PACE = float(os.environ.get("CUCKOOD_POWERCUT_PACE", "0.002"))


class Writers:
    """Clients adding unique items to keys w0..wN-1, recording for each
    acknowledged item the time (time.monotonic(), the recorder's clock)
    its reply arrived."""

    def __init__(self, port, clients=3):
        self.port = port
        self.acked = []  # (time, key, item)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.errors = []
        self.threads = [threading.Thread(target=self.run, args=(i,))
                        for i in range(clients)]

    def run(self, n):
        c = redis.Redis(port=self.port, socket_timeout=30)
        key, i = "w%d" % n, 0
        while not self.stop.is_set():
            item = "i%d-%d" % (n, i)
            i += 1
            try:
                r = c.execute_command("CF.ADD", key, item)
            except redis.RedisError as e:
                self.errors.append(e)
                return
            now = time.monotonic()
            assert r == 1
            with self.lock:
                self.acked.append((now, key, item))
            time.sleep(PACE)

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(30)


class Run:
    """One recorded run: the server under the recorder in its own data
    directory, and what its clients saw."""

    def __init__(self, tmp, *args):
        self.dir = os.path.join(tmp, "data")
        os.makedirs(self.dir, exist_ok=True)
        self.log = os.path.join(tmp, "fs.log")
        self.args = args
        self.server = Daemon(*args, dir=self.dir,
                             env=fsfault_env(CUCKOOD_FSREC=self.log))

    def __enter__(self):
        self.initial = fsmodel.snapshot_dir(self.dir)
        self.server.start()
        return self

    def __exit__(self, *exc):
        self.end = time.monotonic()  # the cut at the end of the record
        self.server.kill()
        self.server.cleanup()

    def client(self):
        return self.server.client()


def check_states(tmp, run, must_have, must_not_have=lambda t: (),
                 check=lambda c, t: None, args=None):
    """Every crash point sampled along run's record, every state a cut
    there may leave: cuckood starts on it (with args, run's by default),
    holds must_have(T) and none of must_not_have(T) (T: the time of the
    cut), and check(client, T) says nothing is wrong (None, or what is)."""
    ops = fsmodel.read_log(run.log)
    args = run.args if args is None else args
    counts = dict(points=0, states=0, lost=0, back=0, refused=0, wrong=0)
    rng = random.Random(int(os.environ.get("CUCKOOD_POWERCUT_SEED",
                                           str(len(ops)))))
    points = fsmodel.crash_points(ops, run.dir, POINTS, rng)
    failures = []
    disk = fsmodel.Disk(run.dir, run.initial)
    done = 0
    for k in points:
        counts["points"] += 1
        while done < k:
            disk.apply(ops[done])
            done += 1
        t_cut = ops[k].t0 / 1e9 if k < len(ops) else run.end
        for name, files in disk.states(rng, TORN):
            state = tempfile.mkdtemp(prefix="state-", dir=tmp)
            fsmodel.materialize(files, state)
            s = Daemon(*args, dir=state)
            counts["states"] += 1
            try:
                s.start()
            except Exception as e:
                counts["refused"] += 1
                failures.append("cut after op %d (%s), state %s: does not "
                                "start: %s\n%s" % (k, ops[k - 1] if k else
                                                   "none", name, e,
                                                   s.log_text()[-2000:]))
                s.cleanup()
                continue
            try:
                c = s.client()
                lost = missing(c, must_have(t_cut))
                counts["lost"] += len(lost)
                if lost:
                    failures.append(
                        "cut after op %d (%s), state %s: %d acknowledged "
                        "items lost, e.g. %r" % (
                            k, ops[k - 1] if k else "none", name, len(lost),
                            lost[:3]))
                back = [key for key in must_not_have(t_cut)
                        if c.exists(key)]
                counts["back"] += len(back)
                if back:
                    failures.append("cut after op %d, state %s: flushed "
                                    "keys came back: %r" % (k, name,
                                                            back[:5]))
                wrong = check(c, t_cut)
                counts["wrong"] += bool(wrong)
                if wrong:
                    failures.append("cut after op %d, state %s: %s" %
                                    (k, name, wrong))
            finally:
                s.kill()
                s.cleanup()
                shutil.rmtree(state, ignore_errors=True)
    report(counts, len(ops))
    assert failures == [], "\n".join(failures[:5])


def report(counts, nops):
    """One line of tests/powercut.sh's table, when it asks for one."""
    path = os.environ.get("CUCKOOD_POWERCUT_REPORT")
    if path:
        name = os.environ.get("PYTEST_CURRENT_TEST", "?").split("::")[-1]
        with open(path, "a") as f:
            f.write(json.dumps(dict(counts, test=name.split(" ")[0],
                                    ops=nops)) + "\n")


@pytest.fixture
def tmp():
    d = tempfile.mkdtemp(prefix="cuckood-powercut-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def acked_before(acked, t):
    return [(key, item) for when, key, item in acked if when < t]


class Policy:
    """A durability setting and what it promises: durable(acked, saves, T)
    is what must survive a cut at T, given the acknowledged items and the
    times SAVE or BGSAVE answered (and finished)."""

    def __init__(self, name, args, delay):
        self.name, self.args, self.delay = name, args, delay

    def durable(self, acked, saves, t):
        if self.delay is None:  # snapshots only: up to the last save
            done = [asked for when, asked in saves if when < t]
            return acked_before(acked, max(done)) if done else []
        return acked_before(acked, t - self.delay)

    def __repr__(self):
        return self.name


ALWAYS = Policy("always", ("--appendonly", "yes", "--appendfsync", "always",
                           "--save", ""), 0.0)
EVERYSEC = Policy("everysec", ("--appendonly", "yes", "--appendfsync",
                               "everysec", "--save", ""), 2.0)
SNAPSHOTS = Policy("snapshots", ("--appendonly", "no", "--save", ""), None)
POLICIES = [ALWAYS, EVERYSEC, SNAPSHOTS]
AOF_POLICIES = [ALWAYS, EVERYSEC]


def save(c, background):
    """SAVE or BGSAVE until done: (when it finished, when it was asked);
    what was acknowledged before it was asked is in the snapshot."""
    asked = time.monotonic()
    if background:
        assert bgsave(c) == "ok"
    else:
        assert c.execute_command("SAVE") in (b"OK", "OK", True)
    return time.monotonic(), asked


def writes_for(policy, run, seconds, saves):
    """Writers for `seconds`; under snapshots only, a SAVE every 0.4 s
    (else nothing would be durable)."""
    with Writers(run.server.port) as w:
        c = run.client()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            time.sleep(0.4)
            if policy is SNAPSHOTS:
                saves.append(save(c, False))
    assert w.errors == []
    return w


@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_steady_writes(tmp, policy):
    saves = []
    with Run(tmp, *policy.args) as run:
        w = writes_for(policy, run, 3.0 if policy is EVERYSEC else 1.5,
                       saves)
    check_states(tmp, run,
                 lambda t: policy.durable(w.acked, saves, t))


@pytest.mark.parametrize("policy", AOF_POLICIES, ids=repr)
def test_rewrite_under_writes(tmp, policy):
    with Run(tmp, *policy.args) as run:
        with Writers(run.server.port) as w:
            time.sleep(0.7)
            c = run.client()
            c.execute_command("BGREWRITEAOF")
            wait_until(lambda: c.info("persistence")[
                "aof_rewrite_in_progress"] == 0, what="the rewrite")
            time.sleep(2.5 if policy is EVERYSEC else 0.7)
        assert w.errors == []
    check_states(tmp, run,
                 lambda t: policy.durable(w.acked, [], t))


@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_save_and_bgsave(tmp, policy):
    saves = []
    with Run(tmp, *policy.args) as run:
        with Writers(run.server.port) as w:
            c = run.client()
            for i in range(4):
                time.sleep(0.3)
                saves.append(save(c, i % 2 == 1))
            if policy is EVERYSEC:
                time.sleep(2.0)
        assert w.errors == []
    check_states(tmp, run,
                 lambda t: policy.durable(w.acked, saves, t))


@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_flushall_does_not_come_back(tmp, policy):
    """Keys flushed by an acknowledged FLUSHALL stay gone once the flush
    is durable: at once with always, 2 s later with everysec, from the
    next save on with snapshots only."""
    saves = []
    with Run(tmp, *policy.args) as run:
        c = run.client()
        old = ["old%d" % i for i in range(20)]
        for k in old:
            c.execute_command("CF.ADD", k, "x")
        if policy is SNAPSHOTS:
            saves.append(save(c, False))
        assert c.flushall() is True
        gone = time.monotonic() + (policy.delay or 0)
        if policy is SNAPSHOTS:
            saves.append(save(c, True))
            gone = saves[-1][0]
        w = writes_for(policy, run, 2.5 if policy is EVERYSEC else 0.6,
                       saves)
    check_states(tmp, run,
                 lambda t: policy.durable(w.acked, saves, t),
                 lambda t: old if t > gone else [])


@pytest.mark.parametrize("policy", AOF_POLICIES, ids=repr)
def test_appendonly_switched_on_at_run_time(tmp, policy):
    """CONFIG SET appendonly yes under writes: once its rewrite is done,
    what came before it lives in the new base, and what comes after is
    durable as the policy says."""
    args = ("--appendonly", "no") + policy.args[2:]
    with Run(tmp, *args) as run:
        with Writers(run.server.port) as w:
            time.sleep(0.4)
            c = run.client()
            asked = time.monotonic()
            c.config_set("appendonly", "yes")
            wait_until(lambda: c.info("persistence")["aof_enabled"] == 1 and
                       c.info("persistence")["aof_rewrite_in_progress"] == 0
                       and c.info("persistence")["aof_rewrite_scheduled"]
                       == 0, what="the AOF switched on")
            on = time.monotonic()
            time.sleep(2.5 if policy is EVERYSEC else 0.4)
        assert w.errors == []

    def must_have(t):
        if t <= on:
            return []
        return (acked_before(w.acked, asked) +
                policy.durable(w.acked, [], t))
    check_states(tmp, run, must_have, args=policy.args)


def test_acl_save(tmp):
    """ACL SAVE: the users file is replaced whole; after a cut the server
    starts on the old users or the new ones, and on the new ones once ACL
    SAVE answered."""
    data = os.path.join(tmp, "data")
    os.mkdir(data)
    with open(os.path.join(data, "users.acl"), "w") as f:
        f.write("user default on nopass ~* &* +@all\n")
    saved = []
    with Run(tmp, "--aclfile", "users.acl", "--save", "") as run:
        c = run.client()
        for i in range(3):
            c.execute_command("ACL", "SETUSER", "u%d" % i, "on", ">pw%d" % i,
                              "+@read")
            assert c.execute_command("ACL", "SAVE") in (b"OK", "OK", True)
            saved.append((time.monotonic(), "u%d" % i))

    def users_there(c, t):
        users = {u.decode() if isinstance(u, bytes) else u
                 for u in c.execute_command("ACL", "USERS")}
        want = {u for when, u in saved if when < t}
        return None if want <= users else "users %r lost" % (want - users)
    check_states(tmp, run, lambda t: [], check=users_there)
