#!/usr/bin/env python3
"""Checks that the source tree keeps its layers (Python 3 standard library).

    python3 scripts/check_layers.py [--root DIR] [--objects BUILDDIR] [--graph]

Include level: reads every `#include` of the C sources and headers in the
layer folders (common/, filter/, protocol/, commands/, module/, server/,
tools/, those that exist) and builds a graph of modules. A module is one
folder's x.c with its
x.h, and with its private x_int.h when there is one, so that a header and
its implementation are one node, not a cycle. A quoted include resolves as
the compiler does: the includer's folder first, then the layer folders (the
build's include directories). An angle include of <uv.h> or <uv/...> is an
edge to libuv; other angle includes are external and ignored.

Link level (--objects BUILDDIR, after a build): runs nm on the object files
CMake wrote for the layer folders' targets (BUILDDIR/<layer>/CMakeFiles/
*.dir/) and builds the graph "a module calls or uses a symbol another module
defines"; an undefined uv_* symbol that none of ours defines is libuv.

Inside server/ the modules are grouped in named sub-layers (SUBLAYERS,
lowest first): base (helpers and file formats that know no server state),
core (the request path: connections, dispatcher, replies, the server's
state and the checks every command meets: ACL, transactions, expiry, the
slow log, MONITOR), services (what runs beside it: snapshots, the AOF,
loading, the daemon's start and stop), commands (the command families)
and root (main.c, the composition root). A module may use its own
sub-layer and those below it; cycles are allowed inside a sub-layer, so
that calls go straight down instead of through function pointers.

Both graphs fail the check (exit status 1, each finding printed) on:
  - a cycle among modules, except one inside a single server/ sub-layer;
  - a server/ module that uses a module of a higher sub-layer (an upward
    edge), or that is in no sub-layer;
  - a forbidden edge:
      common/   -> any other folder of ours, libuv
      filter/   -> any other folder of ours, libuv
      protocol/ -> server/, filter/, commands/, module/, libuv
      commands/ -> server/, module/, libuv
      module/   -> server/, libuv
      server/   -> module/
      tools/    -> filter/, protocol/, commands/, module/, server/, libuv
                   (a client program: it speaks to the server over the
                   network only)
  - (includes only) a quoted include that two layer folders could satisfy.
Exit status 0 when the tree is clean, 2 on a usage error (no sources, no
objects in BUILDDIR, nm missing).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

# In the order the build lists them as include directories.
LAYERS = ("common", "filter", "protocol", "commands", "module", "server",
          "tools")
LIBUV = "libuv"

FORBIDDEN = {
    "common": {"filter", "protocol", "commands", "module", "server", LIBUV},
    "filter": {"protocol", "commands", "module", "server", LIBUV},
    "protocol": {"server", "filter", "commands", "module", LIBUV},
    "commands": {"server", "module", LIBUV},
    "module": {"server", LIBUV},
    "server": {"module"},
    "tools": {"filter", "protocol", "commands", "module", "server", LIBUV},
}

# server/'s sub-layers, lowest first: module stems (server/<stem>.c with
# its .h and _int.h). A new file of server/ goes into one of them.
SUBLAYERS = (
    ("base", ("aofman", "cmdclock", "config", "config_load", "dump", "glob",
              "heap", "keyspace", "lazyfree", "log", "probe", "snapshot",
              "sysmem", "tls", "util")),
    ("core", ("acl", "acl_check", "acl_desc", "acl_log", "cmd", "conn",
              "conn_info", "expire", "latency", "monitor", "multi",
              "propagate", "redact", "reply", "server", "slowlog")),
    ("services", ("acl_file", "aof", "aof_check", "aof_run", "aofload",
                  "daemon", "loadprog", "memstat", "persist")),
    ("commands", ("cfhost", "cmd_acl", "cmd_admin", "cmd_client",
                  "cmd_command", "cmd_conn", "cmd_debug", "cmd_expire",
                  "cmd_keys", "cmd_object", "cmdtab")),
    ("root", ("main",)),
)
SUBLAYER_OF = {"server/" + stem: (rank, name)
               for rank, (name, stems) in enumerate(SUBLAYERS)
               for stem in stems}

SOURCE_EXT = (".c", ".h")
INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"]')


def strip_comments(text):
    """Blanks C comments and string literals out of text, keeping the line
    breaks so that line numbers stay right, and keeping the quoted name of
    an #include line."""
    out = []
    i, n = 0, len(text)
    line_start = True
    in_include = False
    while i < n:
        c = text[i]
        if c == "\n":
            out.append(c)
            i += 1
            line_start = True
            in_include = False
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if line_start and c == "#":
            eol = text.find("\n", i)
            rest = text[i:eol if eol >= 0 else n]
            in_include = bool(re.match(r"#[ \t]*include\b", rest))
        if c in "\"'" and not in_include:
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j, n)
            out.append(c + " " * (j - i - 1))
            if j < n and text[j] == c:
                out.append(c)  # the closing quote opens nothing
                j += 1
            i = j
            line_start = False
            continue
        if not c.isspace():
            line_start = False
        out.append(c)
        i += 1
    return "".join(out)


def module_of(path):
    """The module node of a source path relative to the root: "server/conn"
    for server/conn.c and server/conn.h (Tree adds x_int.h to module x)."""
    folder, name = os.path.split(path)
    stem = os.path.splitext(name)[0]
    return folder + "/" + stem


class Tree:
    def __init__(self, root):
        self.root = root
        self.layers = [l for l in LAYERS if os.path.isdir(os.path.join(root, l))]
        self.files = []  # relative paths
        for layer in self.layers:
            for dirpath, dirnames, filenames in os.walk(os.path.join(root, layer)):
                dirnames.sort()
                for f in sorted(filenames):
                    if f.endswith(SOURCE_EXT):
                        full = os.path.join(dirpath, f)
                        self.files.append(os.path.relpath(full, root).replace(os.sep, "/"))
        self.fileset = set(self.files)
        self.node_of = {}
        for f in self.files:
            node = module_of(f)
            folder, stem = node.rsplit("/", 1)
            if stem.endswith("_int") and f.endswith(".h"):
                owner = folder + "/" + stem[: -len("_int")]
                if owner + ".c" in self.fileset or owner + ".h" in self.fileset:
                    node = owner
            self.node_of[f] = node

    def resolve(self, includer, name):
        """The files a quoted include can mean, in the compiler's order: its
        own folder, then the layer folders."""
        own = os.path.normpath(os.path.join(os.path.dirname(includer), name)).replace(os.sep, "/")
        if own in self.fileset:
            return [own]
        hits = []
        for layer in self.layers:
            cand = os.path.normpath(os.path.join(layer, name)).replace(os.sep, "/")
            if cand in self.fileset:
                hits.append(cand)
        return hits


def layer_of(node):
    return node.split("/", 1)[0] if node != LIBUV else LIBUV


class Graph:
    """Module graph with, for each edge, the first place that made it."""

    def __init__(self):
        self.nodes = set()
        self.edges = {}  # src -> {dst: evidence}

    def add(self, src, dst, evidence):
        self.nodes.add(src)
        self.nodes.add(dst)
        if src == dst:
            return
        self.edges.setdefault(src, {}).setdefault(dst, evidence)

    def succ(self, n):
        return sorted(self.edges.get(n, {}))

    def sccs(self):
        """Strongly connected components with more than one node (Tarjan's
        algorithm, iterative)."""
        index, low, on, stack, out = {}, {}, set(), [], []
        counter = [0]
        for start in sorted(self.nodes):
            if start in index:
                continue
            work = [(start, iter(self.succ(start)))]
            index[start] = low[start] = counter[0]
            counter[0] += 1
            stack.append(start)
            on.add(start)
            while work:
                v, it = work[-1]
                advanced = False
                for w in it:
                    if w not in index:
                        index[w] = low[w] = counter[0]
                        counter[0] += 1
                        stack.append(w)
                        on.add(w)
                        work.append((w, iter(self.succ(w))))
                        advanced = True
                        break
                    if w in on:
                        low[v] = min(low[v], index[w])
                if advanced:
                    continue
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
        return sorted(out)

    def cycle_in(self, comp):
        """One shortest cycle through the first node of a component."""
        members = set(comp)
        start = comp[0]
        prev = {start: None}
        queue = [start]
        while queue:
            nxt = []
            for v in queue:
                for w in self.succ(v):
                    if w not in members:
                        continue
                    if w == start:
                        path = [v]
                        while prev[path[-1]] is not None:
                            path.append(prev[path[-1]])
                        path.reverse()
                        return path + [start]
                    if w not in prev:
                        prev[w] = v
                        nxt.append(w)
            queue = nxt
        return [start]


def sublayer_of(node):
    """(rank, name) of a server/ module's sub-layer; None for a module of
    another folder or one in no sub-layer."""
    return SUBLAYER_OF.get(node)


def one_sublayer(comp):
    """Whether every module of comp is in the same server/ sub-layer."""
    subs = {sublayer_of(n) for n in comp}
    return len(subs) == 1 and None not in subs


def report(kind, graph, problems):
    for comp in graph.sccs():
        if one_sublayer(comp):
            continue
        cyc = graph.cycle_in(comp)
        lines = ["%s cycle among %d modules: %s" % (kind, len(comp), ", ".join(comp)),
                 "  for example: " + " -> ".join(cyc)]
        for a, b in zip(cyc, cyc[1:]):
            lines.append("    %s -> %s  (%s)" % (a, b, graph.edges[a][b]))
        lines.append("  every edge inside it:")
        for a in comp:
            for b, ev in sorted(graph.edges.get(a, {}).items()):
                if b in comp:
                    lines.append("    %s -> %s  (%s)" % (a, b, ev))
        problems.append("\n".join(lines))
    for src in sorted(graph.edges):
        for dst, ev in sorted(graph.edges[src].items()):
            if layer_of(dst) in FORBIDDEN.get(layer_of(src), ()):
                problems.append("%s forbidden edge: %s -> %s  (%s): %s/ must not "
                                "depend on %s" % (kind, src, dst, ev, layer_of(src),
                                                  layer_of(dst) if dst == LIBUV
                                                  else layer_of(dst) + "/"))
    for src in sorted(graph.edges):
        a = sublayer_of(src)
        for dst, ev in sorted(graph.edges[src].items()):
            b = sublayer_of(dst)
            if a is not None and b is not None and b[0] > a[0]:
                problems.append("%s upward edge: %s (%s) -> %s (%s)  (%s): a "
                                "server/ sub-layer uses only itself and those "
                                "below" % (kind, src, a[1], dst, b[1], ev))


def unplaced(tree, problems):
    for node in sorted(set(tree.node_of.values())):
        if layer_of(node) == "server" and sublayer_of(node) is None:
            problems.append("%s is in no server/ sub-layer: add it to "
                            "SUBLAYERS in scripts/check_layers.py" % node)


def include_graph(tree, problems, notes):
    g = Graph()
    for f in tree.files:
        src = tree.node_of[f]
        g.nodes.add(src)
        with open(os.path.join(tree.root, f), encoding="utf-8", errors="replace") as fh:
            text = strip_comments(fh.read())
        for lineno, line in enumerate(text.split("\n"), 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            kind, name = m.groups()
            where = "%s:%d #include %s%s%s" % (f, lineno, kind, name, '"' if kind == '"' else ">")
            if name == "uv.h" or name.startswith("uv/"):
                g.add(src, LIBUV, where)
                continue
            if kind == "<":
                continue
            hits = tree.resolve(f, name)
            if not hits:
                notes.append("note: %s: not a file of ours, taken as external" % where)
                continue
            if len(hits) > 1:
                problems.append("ambiguous include: %s could be any of %s; which one "
                                "is built depends on the include order"
                                % (where, ", ".join(hits)))
            g.add(src, tree.node_of[hits[0]], where)
    return g


def objects_of(builddir, layers):
    """(object path, source path relative to the root) for each object file
    of the layer folders' targets."""
    out = []
    for layer in layers:
        cmf = os.path.join(builddir, layer, "CMakeFiles")
        if not os.path.isdir(cmf):
            continue
        for tdir in sorted(os.listdir(cmf)):
            if not tdir.endswith(".dir"):
                continue
            base = os.path.join(cmf, tdir)
            for dirpath, dirnames, filenames in os.walk(base):
                dirnames.sort()
                for f in sorted(filenames):
                    if f.endswith((".c.o", ".c.obj")):
                        obj = os.path.join(dirpath, f)
                        rel = os.path.relpath(obj, base).replace(os.sep, "/")
                        # CMake writes a source outside the folder's
                        # CMakeLists.txt under "__" for each "..".
                        rel = "/".join(".." if p == "__" else p
                                       for p in rel.split("/"))
                        src = os.path.normpath(layer + "/" + rel[: rel.rindex(".c.") + 2])
                        out.append((obj, src.replace(os.sep, "/")))
    return out


def nm_symbols(nm, obj):
    """(defined, undefined) global symbol names of one object file."""
    res = subprocess.run([nm, "-P", obj], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True)
    if res.returncode != 0:
        raise RuntimeError("%s -P %s failed: %s" % (nm, obj, res.stderr.strip()))
    defined, undefined = set(), set()
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, typ = parts[0], parts[1]
        if typ == "U":
            undefined.add(name)
        elif typ.isupper():
            defined.add(name)
    return defined, undefined


def link_graph(tree, builddir, nm, problems, notes):
    objs = objects_of(builddir, tree.layers)
    if not objs:
        raise RuntimeError("no object files under %s/{%s}/CMakeFiles/*.dir: build "
                           "first" % (builddir, ",".join(tree.layers)))
    owner = {}  # symbol -> node
    uses = []
    for obj, src in objs:
        if src not in tree.fileset:
            # Left behind by an earlier build of a file since moved or
            # deleted: CMake does not remove it.
            notes.append("note: %s skipped: %s is not in the tree" % (obj, src))
            continue
        node = tree.node_of[src]
        defined, undefined = nm_symbols(nm, obj)
        for s in defined:
            prev = owner.setdefault(s, node)
            if prev != node:
                notes.append("note: %s is defined in both %s and %s" % (s, prev, node))
        uses.append((node, src, undefined))
    g = Graph()
    for node, src, undefined in uses:
        g.nodes.add(node)
        for s in sorted(undefined):
            if s in owner:
                g.add(node, owner[s], "%s uses %s" % (src, s))
            elif s.startswith("uv_"):
                g.add(node, LIBUV, "%s uses %s" % (src, s))
    return g, len(objs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help="the source tree (default: this script's repository)")
    ap.add_argument("--objects", metavar="BUILDDIR",
                    help="also check the link graph of a build directory's objects")
    ap.add_argument("--nm", default=os.environ.get("NM", "nm"), help="nm to run")
    ap.add_argument("--graph", action="store_true", help="print the module graphs")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="also print notes (external quoted includes, duplicate symbols)")
    args = ap.parse_args(argv)

    tree = Tree(args.root)
    if not tree.files:
        print("check_layers: no sources under %s/{%s}" % (args.root, ",".join(LAYERS)),
              file=sys.stderr)
        return 2
    problems, notes = [], []
    unplaced(tree, problems)
    graphs = [("include", include_graph(tree, problems, notes))]
    nobj = 0
    if args.objects:
        if shutil.which(args.nm) is None:
            print("check_layers: %s not found" % args.nm, file=sys.stderr)
            return 2
        try:
            lg, nobj = link_graph(tree, args.objects, args.nm, problems, notes)
        except RuntimeError as e:
            print("check_layers: %s" % e, file=sys.stderr)
            return 2
        graphs.append(("link", lg))
    for kind, g in graphs:
        report(kind, g, problems)
        if args.graph:
            print("%s graph:" % kind)
            for a in sorted(g.nodes):
                print("  %s -> %s" % (a, ", ".join(g.succ(a)) or "(nothing)"))
    if args.verbose:
        for n in notes:
            print(n)
    summary = "check_layers: %d files in %s; %d modules" % (
        len(tree.files), ", ".join(l + "/" for l in tree.layers), len(set(tree.node_of.values())))
    if args.objects:
        summary += "; %d object files in %s" % (nobj, args.objects)
    print(summary)
    if problems:
        for p in problems:
            print("FAIL " + p)
        print("check_layers: %d problem(s)" % len(problems))
        return 1
    print("check_layers: OK (no cycle, no forbidden edge, no upward edge)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
