"""The cache guard in front of PostgreSQL: a table of users and a cuckoo
filter in cuckood holding every id in it.

- get_user(id) asks the filter first: "absent" is certain, and the
  database is not asked at all; "present" may be a false positive (about
  0.1% of absent ids with the default filter), so the database decides.
- add_user and delete_user change the database first, then the filter,
  so that the filter never answers "absent" for a row that exists:
    * insert: the row is inserted in a transaction, then CF.ADD, then
      COMMIT. No reader sees the row before its id is in the filter; an
      insert the database refuses (a duplicate id) never reaches the
      filter; a commit that fails after CF.ADD leaves an id the table
      does not hold, which only costs a query (a false positive).
    * delete: DELETE and COMMIT, then CF.DEL, and only when a row was
      really deleted. Deleting an id from a cuckoo filter that was never
      added could remove another id's fingerprint: a false negative. A
      CF.DEL that is lost (a crash just after the commit) leaves a stale
      id: a false positive again, until the next rebuild.
- rebuild() makes a new filter from the table (COPY ... TO STDOUT into
  cuckood-load --swap) and puts it in place with one RENAME; then it waits
  for the transactions open at that moment to end, and adds the rows
  committed after the COPY's snapshot, since their CF.ADD may have gone
  to the filter that was just replaced.
"""

import os
import subprocess
import time

KEY = "users"


class Guarded:
    """Users by id, with the guard (use_guard=True) or without."""

    def __init__(self, db, cf, key=KEY, use_guard=True):
        self.db = db        # a psycopg2 connection
        self.cf = cf        # a redis-py client of cuckood
        self.key = key
        self.use_guard = use_guard
        self.requests = 0
        self.db_queries = 0

    @property
    def avoided(self):
        return self.requests - self.db_queries

    def get_user(self, user_id):
        self.requests += 1
        if self.use_guard and not self.cf.execute_command(
                "CF.EXISTS", self.key, user_id):
            return None
        self.db_queries += 1
        with self.db.cursor() as cur:
            cur.execute("SELECT name FROM users WHERE id = %s", (user_id,))
            row = cur.fetchone()
        self.db.commit()
        return row[0] if row else None

    def add_user(self, user_id, name):
        with self.db.cursor() as cur:
            try:
                cur.execute("INSERT INTO users (id, name) VALUES (%s, %s)",
                            (user_id, name))
            except Exception:
                self.db.rollback()
                raise
        self.cf.execute_command("CF.ADD", self.key, user_id)
        self.db.commit()

    def delete_user(self, user_id):
        with self.db.cursor() as cur:
            cur.execute("DELETE FROM users WHERE id = %s", (user_id,))
            deleted = cur.rowcount == 1
        self.db.commit()
        if deleted:
            self.cf.execute_command("CF.DEL", self.key, user_id)
        return deleted


def create_table(db, n, step=2):
    """users with n rows: ids step, 2*step, ... (the ids in between are
    the absent ones), and a created_at for rebuild()'s catch-up."""
    with db.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS users")
        cur.execute("CREATE TABLE users (id bigint PRIMARY KEY, name text "
                    "NOT NULL, created_at timestamptz NOT NULL "
                    "DEFAULT clock_timestamp())")
        cur.execute("INSERT INTO users (id, name) SELECT g * %s, "
                    "'user ' || g FROM generate_series(1, %s) g", (step, n))
    db.commit()


def rebuild(db, cf, loader, port, key=KEY, margin="1 minute", extra=()):
    """The nightly rebuild: the table's ids, streamed by COPY into
    `cuckood-load --format copy --swap`, then the catch-up.

    The COPY reads one snapshot (REPEATABLE READ). A row committed after
    it is not in the new filter, and its CF.ADD may have gone to the old
    one, replaced by the RENAME: such rows are added again after the
    swap. They are found as the rows created since the rebuild began
    (less margin, the longest a writer's transaction may run) that the
    snapshot did not hold; adding only those keeps one copy per row, so
    a later delete leaves nothing behind. A writer whose CF.ADD reached
    the old filter began its transaction before the swap: the catch-up
    reads only once every transaction open just after the swap has ended
    (wait_for_open_transactions()), or it could miss a row committed a
    moment after it read. Returns (the loader's exit status, its standard
    error, the ids caught up)."""
    with db.cursor() as cur:
        cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        cur.execute("SELECT now() - %s::interval, count(*) FROM users",
                    (margin,))
        since, count = cur.fetchone()
        cur.execute("SELECT id FROM users WHERE created_at >= %s", (since,))
        seen = {r[0] for r in cur.fetchall()}
        p = subprocess.Popen([loader, "-p", str(port), "--format", "copy",
                              "--swap", "--count", str(max(count, 1)),
                              "--verify", "1000"] + list(extra) + [key],
                             stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            cur.copy_expert("COPY (SELECT id FROM users) TO STDOUT", p.stdin)
            p.stdin.close()
        except BrokenPipeError:
            pass  # the loader stopped: its exit status says why
    db.commit()
    err = p.stderr.read().decode()
    if p.wait() != 0:
        return p.returncode, err, 0
    wait_for_open_transactions(db)
    with db.cursor() as cur:
        cur.execute("SELECT id FROM users WHERE created_at >= %s", (since,))
        late = [r[0] for r in cur.fetchall() if r[0] not in seen]
    db.commit()
    for i in range(0, len(late), 1000):
        cf.execute_command("CF.INSERT", key, "ITEMS", *late[i:i + 1000])
    return 0, err, len(late)


def wait_for_open_transactions(db, timeout=600.0):
    """Returns once every transaction that holds a transaction id now (it
    has written) has committed or rolled back. Each holds a lock on its
    own id until it ends, which pg_locks shows to every user (a snapshot's
    in-progress list leaves out the newest ids)."""
    query = ("SELECT transactionid::text FROM pg_locks "
             "WHERE locktype = 'transactionid' AND mode = 'ExclusiveLock' "
             "AND pid <> pg_backend_pid()")
    with db.cursor() as cur:
        cur.execute(query)
        open_now = {r[0] for r in cur.fetchall()}
    db.commit()
    deadline = time.monotonic() + timeout
    while open_now:
        if time.monotonic() > deadline:
            raise TimeoutError("transactions still open: %s" % open_now)
        time.sleep(0.01)
        with db.cursor() as cur:
            cur.execute(query)
            open_now &= {r[0] for r in cur.fetchall()}
        db.commit()


def loader_path(root):
    return os.environ.get("CUCKOOD_LOAD_BIN") or os.path.join(
        root, "build", "tools", "cuckood-load")


def now_ns():
    return time.perf_counter_ns()
