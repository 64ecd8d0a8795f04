"""RedisBloom's own filters, recorded (tests/fixtures/redisbloom): each
fixture's CF.SCANDUMP chunks and the exact CF.EXISTS / CF.COUNT answers
RedisBloom gave, and helpers to load them and compare a server's answers."""

import base64
import json
import os
import random

FIXDIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), "fixtures", "redisbloom")
NAMES = ["default_1000", "bucket4_grown", "autocreated_dups", "bucket1_exp1",
         "bucket3_100k"]


def load(name):
    with open(os.path.join(FIXDIR, name + ".json")) as f:
        return json.load(f)


def chunks(fx):
    """[(iterator, bytes)] in SCANDUMP's order, the header chunk first."""
    return [(int(it), base64.b64decode(data)) for it, data in fx["chunks"]]


def _range(spec):
    lo, hi = spec["range"]
    return [spec["format"].format(i=i).encode() for i in range(lo, hi)]


def probes(fx):
    return _range(fx["probes"]["present"]) + _range(fx["probes"]["absent"])


def bits(b64, n):
    """Bit i of a base64 bitmap, least significant bit of each byte first."""
    raw = base64.b64decode(b64)
    return [bool(raw[i >> 3] >> (i & 7) & 1) for i in range(n)]


def expected(fx):
    ps = probes(fx)
    ex = bits(fx["expected_exists_bits"], len(ps))
    cnt = list(base64.b64decode(fx["expected_count"]))
    assert len(cnt) == len(ps)
    return ps, ex, cnt


def load_into(raw, key, fx):
    """CF.LOADCHUNK of every chunk; the replies."""
    return raw.pipeline([("CF.LOADCHUNK", key, it, data)
                         for it, data in chunks(fx)])


def answers(raw, key, items, batch=1000):
    """(CF.EXISTS answers as bools, CF.COUNT answers capped at 255), asked
    in pipelines of CF.EXISTS and CF.COUNT per item."""
    ex, cnt = [], []
    for i in range(0, len(items), batch):
        part = items[i:i + batch]
        reps = raw.pipeline([("CF.EXISTS", key, it) for it in part] +
                            [("CF.COUNT", key, it) for it in part])
        ex += [bool(r) for r in reps[:len(part)]]
        cnt += [min(int(r), 255) for r in reps[len(part):]]
    return ex, cnt


def plain(v):
    """A reply as JSON keeps it: strings decoded, an error as
    {"error": its text}."""
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, Exception):
        return {"error": str(v)}
    return v


def scandump(raw, key):
    """Every (iterator, chunk) of CF.SCANDUMP, until [0, nil]."""
    out, it = [], 0
    while True:
        nxt, data = raw.command("CF.SCANDUMP", key, it)
        if nxt == 0:
            return out
        out.append((nxt, data))
        it = nxt


def write_sequence(name, key, n=4000):
    """The commands of writes_<name>.json (make_writes.py), from a fixed
    seed."""
    rng = random.Random(name)
    cmds = []
    for i in range(n):
        x = rng.random()
        if rng.random() < .5:
            it = "item:%d" % rng.randrange(0, 3000)
        else:
            it = "new:%d" % rng.randrange(0, 12000)
        if x < .35:
            cmds.append(["CF.ADD", key, it])
        elif x < .45:
            cmds.append(["CF.ADDNX", key, it])
        elif x < .75:
            cmds.append(["CF.DEL", key, it])
        elif x < .8:
            cmds.append(["CF.INSERT", key, "ITEMS", it, it + "x"])
        elif x < .83:
            cmds.append(["CF.INSERTNX", key, "ITEMS", it, it + "y"])
        elif x < .9:
            cmds.append(["CF.COUNT", key, it])
        elif x < .995:
            cmds.append(["CF.EXISTS", key, it])
        else:
            cmds.append(["CF.INFO", key])
        if i % 1500 == 1499:
            cmds.append(["CF.COMPACT", key])
    return cmds
