"""A throw-away PostgreSQL cluster for the example, its test and its
benchmark: initdb and pg_ctl from Debian's postgresql package, a data
directory and a socket directory under one temporary directory, no TCP
(unix socket only), the superuser `guard` with trust authentication.

PostgreSQL refuses to run as root; when started by root (as CI runs), the
cluster runs as the unprivileged user `nobody`, which owns the directory.

    pg = TempPostgres().start()
    conn = pg.connect()
    ...
    pg.stop()
"""

import glob
import os
import pwd
import shutil
import subprocess
import tempfile

PGBIN = os.environ.get("PGBIN") or (
    sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1:] or ["/usr/bin"])[0]
PORT = 5432  # only names the socket: the cluster listens on no TCP port


class TempPostgres:
    def __init__(self, fast=True):
        self.dir = tempfile.mkdtemp(prefix="cache-guard-pg-")
        os.chmod(self.dir, 0o755)
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "postgres.log")
        self.fast = fast  # no fsync: a cluster that is thrown away
        self.user = None
        if os.geteuid() == 0:
            self.user = pwd.getpwnam("nobody")
            os.chown(self.dir, self.user.pw_uid, self.user.pw_gid)

    def _run(self, *argv):
        def drop():
            if self.user is not None:
                os.setgroups([])
                os.setgid(self.user.pw_gid)
                os.setuid(self.user.pw_uid)
        r = subprocess.run([os.path.join(PGBIN, argv[0])] + list(argv[1:]),
                           preexec_fn=drop, cwd=self.dir,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=120)
        if r.returncode != 0:
            raise RuntimeError("%s failed:\n%s" % (argv[0],
                                                   r.stdout.decode()))

    def start(self):
        self._run("initdb", "-D", self.data, "-U", "guard", "--auth=trust",
                  "-E", "UTF8", "--locale=C", "--no-sync")
        opts = "-p %d -k %s -c listen_addresses=''" % (PORT, self.dir)
        if self.fast:
            opts += " -c fsync=off -c synchronous_commit=off"
        self._run("pg_ctl", "-D", self.data, "-l", self.log, "-o", opts,
                  "-w", "-t", "60", "start")
        return self

    def dsn(self):
        return "host=%s port=%d user=guard dbname=postgres" % (self.dir,
                                                                 PORT)

    def connect(self):
        import psycopg2
        return psycopg2.connect(self.dsn())

    def stop(self):
        try:
            self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w",
                      "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
