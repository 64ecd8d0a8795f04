"""What a disk may hold after a power cut, rebuilt from the record of a
server's file system calls (the preload library tests/fault/fsfault.c,
CUCKOOD_FSREC).

The model, as the ALICE study and LazyFS draw it for Linux file systems:
- a file's bytes are durable as of its last fsync/fdatasync; what was
  written since may be lost, kept, or kept up to some 4 KiB boundary;
- a name (a file created, renamed, unlinked; a directory made) is durable
  once its directory was fsynced after it; before that the change may or
  may not have happened, and changes to one directory persist in the order
  they were made (a prefix of them).

read_log() parses a record; Disk.replay() applies its first k operations;
Disk.states() gives the disk states a power cut there may leave, each as
a dict {relative path: bytes} (directories as None), and materialize()
writes one into a directory.

Files written through stdio (fopen) are not seen: libc writes them with
calls of its own, not the preload's. The server writes none of its
durable files so; such a file appears empty in the model."""

import os
import random
import struct

REC = struct.Struct("<IIiiQQQQII")
REC_MAGIC = 0x31525346
OPEN, WRITE, TRUNC, FSYNC, RENAME, UNLINK, MKDIR = range(1, 8)
NAMES = {OPEN: "open", WRITE: "write", TRUNC: "ftruncate", FSYNC: "fsync",
         RENAME: "rename", UNLINK: "unlink", MKDIR: "mkdir"}
O_CREAT, O_TRUNC, O_DIRECTORY = 0o100, 0o1000, 0o200000
BLOCK = 4096


class Op:
    __slots__ = ("op", "pid", "ret", "t0", "t1", "off", "path", "path2",
                 "data")

    def __repr__(self):
        return "%s(%s%s, off=%d, %d bytes, pid %d)" % (
            NAMES.get(self.op, self.op), self.path,
            " -> " + self.path2 if self.path2 else "", self.off,
            len(self.data), self.pid)


def read_log(path):
    """The operations of a record, in the order they were logged."""
    ops = []
    with open(path, "rb") as f:
        buf = f.read()
    pos = 0
    while pos + REC.size <= len(buf):
        (magic, op, pid, ret, t0, t1, off, n, plen,
         plen2) = REC.unpack_from(buf, pos)
        assert magic == REC_MAGIC, "a torn record at byte %d" % pos
        pos += REC.size
        o = Op()
        o.op, o.pid, o.ret, o.t0, o.t1, o.off = op, pid, ret, t0, t1, off
        o.path = os.path.normpath(buf[pos:pos + plen].decode())
        pos += plen
        o.path2 = (os.path.normpath(buf[pos:pos + plen2].decode())
                   if plen2 else None)
        pos += plen2
        o.data = buf[pos:pos + n]
        pos += n
        ops.append(o)
    assert pos == len(buf), "a torn record at the end"
    return ops


class Inode:
    __slots__ = ("data", "synced")

    def __init__(self):
        self.data = bytearray()
        self.synced = b""


class Disk:
    """The files under root: as the server saw them (names, each inode's
    data) and what is durable (durable names, each inode's synced bytes),
    with the directory changes not yet durable in order."""

    def __init__(self, root, initial=None):
        """initial: {path relative to root: bytes} already on the disk,
        durable, when the record starts."""
        self.root = os.path.abspath(root)
        self.inodes = []
        self.names = {}      # path -> inode number, as the server sees it
        self.durable = {}    # path -> inode number, after a power cut
        self.dirs = {self.root}
        self.durable_dirs = {self.root}
        self.pending = []    # (parent dir, kind, a, b, inode)
        self.opened = {}     # the path an fd was opened with -> inode
        for rel, data in (initial or {}).items():
            ino = Inode()
            ino.data, ino.synced = bytearray(data), bytes(data)
            self.inodes.append(ino)
            path = os.path.join(self.root, rel)
            self.names[path] = self.durable[path] = len(self.inodes) - 1

    def _mine(self, path):
        return path == self.root or path.startswith(self.root + "/")

    def apply(self, o):
        if o.path is None or not self._mine(o.path):
            return
        if o.op == OPEN:
            if o.off & O_DIRECTORY or o.path in self.dirs:
                return
            ino = self.names.get(o.path)
            if ino is None:
                assert o.off & O_CREAT, "opened a file never made: %r" % o
                ino = len(self.inodes)
                self.inodes.append(Inode())
                self.names[o.path] = ino
                self.pending.append((os.path.dirname(o.path), "link",
                                     o.path, None, ino))
            if o.off & O_TRUNC:
                del self.inodes[ino].data[:]
            self.opened[o.path] = ino
        elif o.op == WRITE:
            d = self.inodes[self.opened[o.path]].data
            if len(d) < o.off:
                d.extend(bytes(o.off - len(d)))
            d[o.off:o.off + len(o.data)] = o.data
        elif o.op == TRUNC:
            d = self.inodes[self.opened[o.path]].data
            if len(d) > o.off:
                del d[o.off:]
            else:
                d.extend(bytes(o.off - len(d)))
        elif o.op == FSYNC:
            if o.path in self.dirs:
                self._dir_durable(o.path)
            else:
                ino = self.inodes[self.opened[o.path]]
                ino.synced = bytes(ino.data)
        elif o.op == RENAME:
            ino = self.names.pop(o.path, None)
            if ino is None:  # made through stdio, which is not recorded
                ino = len(self.inodes)
                self.inodes.append(Inode())
            self.names[o.path2] = ino
            self.pending.append((os.path.dirname(o.path2), "rename", o.path,
                                 o.path2, ino))
        elif o.op == UNLINK:
            ino = self.names.pop(o.path, None)
            self.pending.append((os.path.dirname(o.path), "unlink", o.path,
                                 None, ino))
        elif o.op == MKDIR:
            self.dirs.add(o.path)
            self.pending.append((os.path.dirname(o.path), "mkdir", o.path,
                                 None, None))

    @staticmethod
    def _do(names, dirs, change):
        _, kind, a, b, ino = change
        if kind == "link":
            names[a] = ino
        elif kind == "rename":
            names.pop(a, None)
            names[b] = ino
        elif kind == "unlink":
            names.pop(a, None)
        elif kind == "mkdir":
            dirs.add(a)

    def _dir_durable(self, d):
        keep = []
        for change in self.pending:
            if change[0] == d:
                self._do(self.durable, self.durable_dirs, change)
            else:
                keep.append(change)
        self.pending = keep

    def states(self, rng, torn=2):
        """The disk states a power cut now may leave: (name, files) with
        files a dict {path relative to root: bytes, or None for a
        directory}. Always "synced" (only what was made durable) and
        "written" (everything the server wrote); then `torn` mixes of
        both: a prefix of the directory changes, and each file's unsynced
        tail kept up to a random 4 KiB boundary."""
        out = [("synced", self._files(self.durable, self.durable_dirs,
                                      lambda ino: ino.synced)),
               ("written", self._files(self.names, self.dirs,
                                       lambda ino: bytes(ino.data)))]
        for i in range(torn):
            names, dirs = dict(self.durable), set(self.durable_dirs)
            for change in self.pending[:rng.randint(0, len(self.pending))]:
                self._do(names, dirs, change)
            out.append(("torn %d" % i, self._files(
                names, dirs, lambda ino: self._cut(ino, rng))))
        return out

    @staticmethod
    def _cut(ino, rng):
        data = bytes(ino.data)
        if not data.startswith(ino.synced):
            return rng.choice([ino.synced, data])
        cuts = sorted({len(ino.synced), len(data)} | set(
            range((len(ino.synced) // BLOCK + 1) * BLOCK, len(data), BLOCK)))
        return data[:rng.choice(cuts)]

    def _files(self, names, dirs, content):
        files = {}
        for d in dirs:
            if d != self.root and self._reachable(d, dirs):
                files[os.path.relpath(d, self.root)] = None
        for path, ino in names.items():
            if self._reachable(os.path.dirname(path), dirs):
                files[os.path.relpath(path, self.root)] = content(
                    self.inodes[ino])
        return files

    def _reachable(self, d, dirs):
        while d != self.root:
            if d not in dirs:
                return False
            d = os.path.dirname(d)
        return True


def snapshot_dir(root):
    """{path relative to root: bytes} of the files under root now (the
    `initial` of a Disk)."""
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            path = os.path.join(d, n)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = f.read()
    return out


def materialize(files, dest):
    """Writes a state of Disk.states() under dest (which exists)."""
    for rel in sorted(files, key=lambda p: p.count("/")):
        path = os.path.join(dest, rel)
        if files[rel] is None:
            os.makedirs(path, exist_ok=True)
    for rel, data in files.items():
        if data is not None:
            with open(os.path.join(dest, rel), "wb") as f:
                f.write(data)


def crash_points(ops, root, limit, rng):
    """Indices k (a power cut after ops[:k]) worth trying: just before and
    just after every sync, rename and unlink under root, the very end, and
    random points between; at most limit of those (all when limit is 0),
    plus, always, just before and just after every rename and every sync
    of a directory (the moments a file is published: few, and where
    ordering bugs live)."""
    root = os.path.abspath(root)
    mine = [i for i, o in enumerate(ops) if o.path and
            (o.path == root or o.path.startswith(root + "/"))]
    dirs = {o.path for o in ops if o.op == OPEN and o.off & O_DIRECTORY}
    dirs |= {o.path for o in ops if o.op == MKDIR} | {root}
    always, special = {len(ops)}, set()
    for i in mine:
        o = ops[i]
        if o.op == RENAME or (o.op == FSYNC and o.path in dirs):
            always.update((i, i + 1))
        elif o.op in (FSYNC, UNLINK):
            special.update((i, i + 1))
    special -= always
    others = sorted(set(mine) - special - always)
    points = sorted(special)
    if limit and len(points) > limit:
        points = rng.sample(points, limit)
    room = max(0, limit - len(points)) if limit else len(others) // 4
    points += rng.sample(others, min(room, len(others)))
    return sorted(set(points) | always)
