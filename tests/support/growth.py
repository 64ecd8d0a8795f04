"""A filter's exact contents for the growth suites (tests/integ/
test_growth.py, tests/module/test_mod_growth.py): a multiset model of the
items in one filter, and drivers that send random, pipelined CF.ADD /
CF.INSERT / CF.DEL / CF.EXISTS / CF.COUNT through a RawConn and check every
reply against it.

  Model(seed, name, prefix)
                      the multiset and its RNG (seeded by seed and name);
                      fresh items are PREFIX:N
  run_ops(c, key, model, until, insert=False)
                      random operations until `until` fresh items were
                      handed out: no false negative, CF.COUNT never below
                      the copies, CF.DEL of a present item answers 1
  check_all(c, key, model)
                      every live item answers 1 to CF.MEXISTS and CF.INFO
                      counts the multiset; returns CF.INFO as a dict
  grow(c, key, model, until, insert=False, start=RESERVE)
                      run_ops in doublings, check_all after each
  drain(c, key, model) deletes every copy of every live item
  mexists(c, key, items), info(c, key)

Deletes go only to items the model holds: a delete of an item never added
is outside any cuckoo filter's guarantee.
"""

import random

from support.resp import cf_info

RESERVE = 64
BATCH = 4000


def info(c, key):
    return cf_info(c.call("CF.INFO", key))


class Model:
    """The exact multiset of items in one filter, and the next fresh item."""

    def __init__(self, seed, name, prefix):
        self.seed = seed  # named by every failure
        self.rnd = random.Random("%s:%s" % (seed, name))
        self.prefix = prefix
        self.count = {}
        self.live = []  # items with count > 0
        self.pos = {}  # item -> index in live
        self.total = 0  # sum of count
        self.fresh = 0
        self.seen = []  # every item ever added, in order

    def new_item(self):
        item = b"%s:%d" % (self.prefix, self.fresh)
        self.fresh += 1
        return item

    def added(self, item):
        n = self.count.get(item, 0)
        if n == 0:
            if item not in self.count:
                self.seen.append(item)
            self.pos[item] = len(self.live)
            self.live.append(item)
        self.count[item] = n + 1
        self.total += 1

    def deleted(self, item):
        n = self.count[item] - 1
        self.count[item] = n
        self.total -= 1
        if n == 0:
            i = self.pos.pop(item)
            last = self.live.pop()
            if last != item:
                self.live[i] = last
                self.pos[last] = i

    def pick(self):
        return self.live[self.rnd.randrange(len(self.live))]

    def copy(self, prefix=None):
        m = Model(self.seed, self.rnd.random(), prefix or self.prefix)
        m.count = dict(self.count)
        m.live = list(self.live)
        m.pos = dict(self.pos)
        m.total = self.total
        m.fresh = self.fresh
        m.seen = list(self.seen)
        return m


def where(model, what):
    return "%s (seed %d, %d items, %d distinct live)" % (
        what, model.seed, model.total, len(model.live))


def run_ops(c, key, model, until, insert=False):
    """Random operations on key until the model has handed out `until`
    fresh items, pipelined in batches; every reply is checked against the
    model as it stood when the command was generated."""
    rnd = model.rnd
    while model.fresh < until:
        cmds, checks = [], []
        while len(cmds) < BATCH and model.fresh < until:
            r = rnd.random()
            if r < 0.55 or not model.live:
                if insert:
                    items = [model.new_item()
                             for _ in range(rnd.randint(1, 40))]
                    if model.live and rnd.random() < 0.3:
                        dup = model.pick()
                        if model.count[dup] < 3:
                            items.append(dup)
                    cmds.append(("CF.INSERT", key, "ITEMS", *items))
                    checks.append(("insert", items))
                    for it in items:
                        model.added(it)
                else:
                    item = model.new_item()
                    cmds.append(("CF.ADD", key, item))
                    checks.append(("add", item))
                    model.added(item)
            elif r < 0.60:
                item = model.pick()
                if model.count[item] >= 3:
                    continue
                cmds.append(("CF.ADD", key, item))
                checks.append(("add", item))
                model.added(item)
            elif r < 0.78:
                item = model.pick()
                cmds.append(("CF.DEL", key, item))
                checks.append(("del", item))
                model.deleted(item)
            elif r < 0.92:
                item = model.pick()
                cmds.append(("CF.EXISTS", key, item))
                checks.append(("exists", item))
            else:
                item = model.pick()
                cmds.append(("CF.COUNT", key, item))
                checks.append(("count", item, model.count[item]))
        for rep, chk in zip(c.pipeline(cmds), checks):
            kind = chk[0]
            if kind == "insert":
                assert rep == [1] * len(chk[1]), where(
                    model, "CF.INSERT refused an item: %r" % (rep,))
            elif kind in ("add", "del", "exists"):
                assert rep == 1, where(model, "CF.%s %r answered %r" % (
                    kind.upper(), chk[1], rep))
            else:
                assert isinstance(rep, int) and rep >= chk[2], where(
                    model, "CF.COUNT %r answered %r for %d copies" % (
                        chk[1], rep, chk[2]))


def mexists(c, key, items, batch=2000):
    out = []
    for i in range(0, len(items), batch):
        out += c.call("CF.MEXISTS", key, *items[i:i + batch])
    return out


def check_all(c, key, model):
    """Every live item answers 1, and CF.INFO counts the multiset."""
    live = list(model.live)
    got = mexists(c, key, live)
    missing = [it for it, x in zip(live, got) if x != 1]
    assert not missing, where(model, "false negatives: %d, e.g. %r" % (
        len(missing), missing[:5]))
    inf = info(c, key)
    assert inf[b"Number of items inserted"] == model.total, where(
        model, "CF.INFO counts %r" % inf[b"Number of items inserted"])
    assert inf[b"Number of filters"] >= 1 and inf[b"Size"] > 0
    assert inf[b"Bucket size"] >= 1
    return inf


def grow(c, key, model, until, insert=False, start=RESERVE):
    """run_ops in steps of doublings (of fresh items, from start), with
    check_all after each."""
    step = max(start, model.fresh)
    while model.fresh < until:
        step = min(step * 2, until)
        run_ops(c, key, model, step, insert)
        check_all(c, key, model)


def drain(c, key, model):
    """Deletes every copy of every live item (each must answer 1), then
    the filter counts none."""
    cmds = [("CF.DEL", key, it)
            for it in model.live for _ in range(model.count[it])]
    model.rnd.shuffle(cmds)
    for i in range(0, len(cmds), BATCH):
        rep = c.pipeline(cmds[i:i + BATCH])
        bad = [(cmd[2], r) for cmd, r in zip(cmds[i:i + BATCH], rep)
               if r != 1]
        assert not bad, where(model, "CF.DEL of present items: %r" % bad[:5])
    for it in list(model.live):
        while model.count[it]:
            model.deleted(it)
    assert info(c, key)[b"Number of items inserted"] == 0
