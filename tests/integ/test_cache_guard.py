"""examples/cache-guard against a real PostgreSQL (a temporary cluster,
run as `nobody` when the test runs as root) and the real daemon: the
table is loaded into the guard with cuckood-load --swap from COPY; every
id of the table is answered "maybe" (no false negative), lookups of
absent ids skip the database and are counted, every answer equals the
table's; inserts and deletes keep the guard in step, a rebuild while
inserts run loses none of them, and a failed rebuild leaves the guard as
it was."""

import os
import random
import sys
import threading
import time

import pytest

from support.proc import ROOT, use_module

EXAMPLE = os.path.join(ROOT, "examples", "cache-guard")
sys.path.insert(0, EXAMPLE)

import psycopg2  # noqa: E402  (scripts/deps.sh test installs it)
import guard  # noqa: E402
from pgtemp import PGBIN, TempPostgres  # noqa: E402

pytestmark = [
    pytest.mark.cf,
    pytest.mark.skipif(use_module(), reason="runs against the daemon"),
]

N = 20000  # rows: ids 2, 4, ..., 2N


@pytest.fixture(scope="module")
def pg():
    if not os.path.exists(os.path.join(PGBIN, "initdb")):
        pytest.fail("PostgreSQL not installed (scripts/deps.sh test)")
    p = TempPostgres().start()
    yield p
    p.stop()


@pytest.fixture
def setup(pg, server):
    db = pg.connect()
    guard.create_table(db, N)
    cf = server.client()
    cf.delete(guard.KEY)
    rc, err, _ = guard.rebuild(db, cf, guard.loader_path(ROOT), server.port)
    assert rc == 0, err
    yield db, cf
    db.close()


def table_ids(db):
    with db.cursor() as cur:
        cur.execute("SELECT id FROM users")
        ids = [r[0] for r in cur.fetchall()]
    db.commit()
    return ids


def no_false_negative(db, cf):
    ids = table_ids(db)
    for i in range(0, len(ids), 1000):
        got = cf.execute_command("CF.MEXISTS", guard.KEY, *ids[i:i + 1000])
        assert got == [1] * len(got), [ids[i + k] for k, g in enumerate(got)
                                       if g != 1][:10]
    return len(ids)


def test_the_guard_holds_the_table(setup):
    db, cf = setup
    assert no_false_negative(db, cf) == N
    info = cf.execute_command("CF.INFO", guard.KEY)
    assert dict(zip(info[::2], info[1::2]))[b"Number of items inserted"] == N


def test_reads_skip_the_database_on_absent(setup):
    db, cf = setup
    rng = random.Random(7)
    g = guard.Guarded(db, cf)
    plain = guard.Guarded(db, cf, use_guard=False)
    absent = 0
    for _ in range(3000):
        uid = rng.randrange(1, 2 * N + 1) if rng.random() < 0.9 else \
            2 * rng.randrange(1, N + 1)
        want = "user %d" % (uid // 2) if uid % 2 == 0 else None
        absent += want is None
        assert g.get_user(uid) == want
        assert plain.get_user(uid) == want
    assert plain.db_queries == 3000
    # Every absent id the guard turned away is a query avoided; a false
    # positive (about 0.1%) still reaches the database, and gets None.
    assert g.avoided <= absent
    assert g.avoided >= absent * 0.98, (g.avoided, absent)


def test_inserts_and_deletes_keep_in_step(setup):
    db, cf = setup
    g = guard.Guarded(db, cf)
    new = [2 * N + 2 * k + 1 for k in range(500)]  # odd: absent so far
    for uid in new:
        g.add_user(uid, "new %d" % uid)
    for uid in new:
        assert g.get_user(uid) == "new %d" % uid
    # A duplicate is refused by the database and never reaches the
    # filter: the count stays.
    before = cf.execute_command("CF.COUNT", guard.KEY, new[0])
    with pytest.raises(psycopg2.IntegrityError):
        g.add_user(new[0], "again")
    assert cf.execute_command("CF.COUNT", guard.KEY, new[0]) == before
    gone = new[:250] + [2 * k for k in range(1, 251)]
    for uid in gone:
        assert g.delete_user(uid)
    assert not g.delete_user(gone[0])  # no row: no CF.DEL either
    g.requests = g.db_queries = 0
    for uid in gone:
        assert g.get_user(uid) is None
    assert g.avoided >= len(gone) * 0.98
    assert no_false_negative(db, cf) == N + 500 - 500


def test_rebuild_while_inserts_run_loses_none(setup, pg, server, tmp_path):
    """Inserts run while the guard is rebuilt; at least one of them is
    committed after the rebuild's snapshot, whatever the machine's load:
    the loader is started through a wrapper (after the snapshot) that
    waits until the writer has committed a row it saw the wrapper start
    for."""
    db, cf = setup
    stop = threading.Event()
    added = []
    started, acked = tmp_path / "started", tmp_path / "acked"
    wrapper = tmp_path / "loader"
    wrapper.write_text(
        "#!/bin/sh\n: > '%s'\n"
        "for i in $(seq 3000); do [ -e '%s' ] && break; sleep 0.01; done\n"
        "exec '%s' \"$@\"\n"
        % (started, acked, guard.loader_path(ROOT)))
    wrapper.chmod(0o755)

    def writer():
        wdb = pg.connect()
        w = guard.Guarded(wdb, server.client())
        uid = 10 * N + 1
        while not stop.is_set():
            after = started.exists()
            w.add_user(uid, "late")
            added.append(uid)
            uid += 2
            if after and not acked.exists():
                acked.touch()
        wdb.close()

    t = threading.Thread(target=writer)
    t.start()
    try:
        rc, err, late = guard.rebuild(db, cf, str(wrapper), server.port)
    finally:
        stop.set()
        t.join()
    assert acked.exists()
    assert rc == 0, err
    assert added and late >= 1
    no_false_negative(db, cf)
    assert cf.keys("*users*") == [b"users"]


def test_rebuild_waits_for_a_writer_open_across_the_swap(setup, pg, server,
                                                        tmp_path):
    """A writer inserts a row and adds its id to the filter before the
    swap, and commits only after the swap (a second after the loader has
    exited): the rebuild's catch-up waits for that transaction, so the id
    is in the new filter."""
    db, cf = setup
    started, swapped = tmp_path / "started", tmp_path / "swapped"
    wrapper = tmp_path / "loader"
    wrapper.write_text(
        "#!/bin/sh\n: > '%s'\n'%s' \"$@\"\nrc=$?\n: > '%s'\nexit $rc\n"
        % (started, guard.loader_path(ROOT), swapped))
    wrapper.chmod(0o755)
    uid = 20 * N + 1
    opened = threading.Event()

    def writer():
        wdb = pg.connect()
        wcf = server.client()
        with wdb.cursor() as cur:
            cur.execute("INSERT INTO users (id, name) VALUES (%s, 'x')",
                        (uid,))
        wcf.execute_command("CF.ADD", guard.KEY, uid)  # the old filter
        opened.set()
        while not swapped.exists():
            time.sleep(0.01)
        time.sleep(1)
        wdb.commit()
        wdb.close()

    t = threading.Thread(target=writer)
    t.start()
    assert opened.wait(60)
    try:
        rc, err, late = guard.rebuild(db, cf, str(wrapper), server.port)
    finally:
        t.join()
    assert rc == 0, err
    assert late >= 1
    assert cf.execute_command("CF.EXISTS", guard.KEY, uid) == 1
    no_false_negative(db, cf)


def test_failed_rebuild_leaves_the_guard(setup, server):
    db, cf = setup
    before = cf.execute_command("CF.INFO", guard.KEY)
    # A server that refuses the load: the new key is dropped, the guard
    # stays as it was.
    cf.execute_command("CONFIG", "SET", "maxmemory", "1")
    try:
        rc, err, _ = guard.rebuild(db, cf, guard.loader_path(ROOT),
                                   server.port)
    finally:
        cf.execute_command("CONFIG", "SET", "maxmemory", "0")
    assert rc == 1 and "left as it was" in err, err
    assert cf.execute_command("CF.INFO", guard.KEY) == before
    assert cf.keys("*users*") == [b"users"]
