#!/usr/bin/env python3
"""Tests of scripts/check_layers.py: small fake trees in a temporary
directory, clean and with one planted violation each; the check must pass
on the clean tree and fail on every violation.

    python3 tests/test_check_layers.py
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "scripts", "check_layers.py")

# A tree that keeps every rule: pairs of x.c/x.h that include each other's
# header, a private x_int.h, a layer above including the layers below, and
# commented-out or quoted include lines that must not count.
CLEAN = {
    "filter/cf.h": "#include <stddef.h>\nint cf_add(int);\n",
    "filter/cf.c": '#include "cf.h"\n#include <xxhash.h>\nint cf_add(int x) { return x; }\n',
    "protocol/resp.h": "int resp_parse(const char *);\n",
    "protocol/resp.c": '#include "resp.h"\n#include <hiredis/read.h>\n'
                       "int resp_parse(const char *s) { return s != 0; }\n",
    "commands/cfcmd.h": '#include "cf.h"\nint cfcmd_run(void);\n',
    "commands/cfcmd.c": '#include "cfcmd.h"\n#include "resp.h"\n'
                        "/* #include \"conn.h\" would be wrong here */\n"
                        "// #include <uv.h>\n"
                        "/* an old way:\n#include <uv.h>\n#include \"conn.h\"\n*/\n"
                        "static const char *s = \"#include <uv.h>\";\n"
                        "static const char *q = \"a\"; /* then\n#include <uv.h>\n*/\n"
                        "int cfcmd_run(void) { return cf_add(1); }\n",
    "server/util.h": "int util_one(void);\n",
    "server/util.c": '#include "util.h"\nint util_one(void) { return 1; }\n',
    "server/conn.h": "#include <uv.h>\n#include \"util.h\"\nint conn_start(void);\n",
    "server/conn.c": '#include "conn.h"\n#include "conn_int.h"\n'
                     "int conn_start(void) { return util_one(); }\n",
    "server/conn_int.h": '#include "conn.h"\n',
    "server/main.c": '#include "conn.h"\n#include "cfcmd.h"\n#include "resp.h"\n'
                     "int main(void) { return conn_start() + cfcmd_run(); }\n",
}


def run(root, *extra):
    res = subprocess.run([sys.executable, SCRIPT, "--root", root] + list(extra),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True)
    return res.returncode, res.stdout


class Tree:
    def __init__(self, files):
        self.dir = tempfile.mkdtemp(prefix="check_layers.")
        for rel, text in files.items():
            self.write(rel, text)

    def write(self, rel, text):
        path = os.path.join(self.dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def append(self, rel, text):
        with open(os.path.join(self.dir, rel), "a") as f:
            f.write(text)

    def cleanup(self):
        shutil.rmtree(self.dir)


class IncludeLevel(unittest.TestCase):
    def setUp(self):
        self.tree = Tree(CLEAN)

    def tearDown(self):
        self.tree.cleanup()

    def check_fails(self, *expect):
        rc, out = run(self.tree.dir)
        self.assertEqual(rc, 1, out)
        for e in expect:
            self.assertIn(e, out)
        return out

    def test_clean_tree_passes(self):
        rc, out = run(self.tree.dir)
        self.assertEqual(rc, 0, out)
        self.assertIn("OK", out)

    def test_cycle_between_two_server_files(self):
        self.tree.append("server/util.c", '#include "conn.h"\n')
        out = self.check_fails("include cycle", "server/conn", "server/util",
                               'server/util.c:3 #include "conn.h"')
        self.assertNotIn("forbidden", out)

    def test_cycle_through_a_private_header(self):
        # conn_int.h is part of conn; util including it closes a cycle.
        self.tree.append("server/util.h", '#include "conn_int.h"\n')
        self.check_fails("include cycle", "server/conn", "server/util")

    def test_a_cycle_inside_one_sublayer_passes(self):
        # conn and cmd are both core: they may call each other.
        self.tree.write("server/cmd.h", '#include "conn.h"\nint cmd_run(void);\n')
        self.tree.write("server/cmd.c", '#include "cmd.h"\n')
        self.tree.append("server/conn.c", '#include "cmd.h"\n')
        rc, out = run(self.tree.dir)
        self.assertEqual(rc, 0, out)

    def test_a_lower_sublayer_includes_a_higher_one(self):
        # util (base) including cmd.h (core) makes no cycle, but goes up.
        self.tree.write("server/cmd.h", "int cmd_run(void);\n")
        self.tree.append("server/util.c", '#include "cmd.h"\n')
        out = self.check_fails("include upward edge: server/util (base) -> "
                               "server/cmd (core)",
                               'server/util.c:3 #include "cmd.h"')
        self.assertNotIn("cycle", out)

    def test_a_server_module_in_no_sublayer(self):
        self.tree.write("server/newthing.c", '#include "util.h"\n')
        self.check_fails("server/newthing is in no server/ sub-layer")

    def test_filter_includes_a_server_header(self):
        self.tree.append("filter/cf.c", '#include "util.h"\n')
        self.check_fails("forbidden edge: filter/cf -> server/util",
                         'filter/cf.c:4 #include "util.h"')

    def test_filter_includes_protocol(self):
        self.tree.append("filter/cf.h", '#include "resp.h"\n')
        self.check_fails("forbidden edge: filter/cf -> protocol/resp")

    def test_filter_includes_libuv(self):
        self.tree.append("filter/cf.c", "#include <uv.h>\n")
        self.check_fails("forbidden edge: filter/cf -> libuv")

    def test_protocol_includes_filter(self):
        self.tree.append("protocol/resp.c", '#include "cf.h"\n')
        self.check_fails("forbidden edge: protocol/resp -> filter/cf")

    def test_protocol_includes_server(self):
        self.tree.append("protocol/resp.h", '#include "conn.h"\n')
        self.check_fails("forbidden edge: protocol/resp -> server/conn")

    def test_protocol_includes_libuv(self):
        self.tree.append("protocol/resp.c", "#  include   <uv.h>\n")
        self.check_fails("forbidden edge: protocol/resp -> libuv")

    def test_commands_includes_libuv(self):
        self.tree.append("commands/cfcmd.c", "#include <uv.h>\n")
        self.check_fails("forbidden edge: commands/cfcmd -> libuv")

    def test_commands_includes_a_server_header(self):
        self.tree.append("commands/cfcmd.h", '#include "util.h"\n')
        self.check_fails("forbidden edge: commands/cfcmd -> server/util")

    def test_commands_includes_a_server_header_by_path(self):
        self.tree.append("commands/cfcmd.c", '#include "../server/util.h"\n')
        self.check_fails("forbidden edge: commands/cfcmd -> server/util")

    def test_module_includes_server(self):
        self.tree.write("module/mod.c", '#include "cfcmd.h"\n#include "conn.h"\n')
        self.check_fails("forbidden edge: module/mod -> server/conn")

    def test_tools_include_a_server_header(self):
        self.tree.write("tools/load.c", '#include "conn.h"\n')
        self.check_fails("forbidden edge: tools/load -> server/conn")

    def test_a_header_two_folders_could_give(self):
        self.tree.write("commands/util.h", "int other(void);\n")
        self.tree.append("protocol/resp.c", '#include "util.h"\n')
        self.check_fails("ambiguous include")

    def test_no_sources_is_a_usage_error(self):
        empty = tempfile.mkdtemp(prefix="check_layers.")
        try:
            rc, out = run(empty)
        finally:
            shutil.rmtree(empty)
        self.assertEqual(rc, 2, out)


CC = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")


class LinkLevel(unittest.TestCase):
    """Objects laid out as CMake writes them: BUILD/<folder>/CMakeFiles/
    <target>.dir/<file>.c.o. The sources include nothing of each other, so
    only the link-level graph can see their edges."""

    def setUp(self):
        self.assertIsNotNone(CC, "no C compiler to build the test objects")
        self.tree = Tree({})

    def tearDown(self):
        self.tree.cleanup()

    def build(self, files):
        for rel, text in files.items():
            self.tree.write(rel, text)
            folder, name = rel.split("/")
            objdir = os.path.join(self.tree.dir, "build", folder, "CMakeFiles", folder + ".dir")
            os.makedirs(objdir, exist_ok=True)
            subprocess.run([CC, "-c", "-o", os.path.join(objdir, name + ".o"),
                            os.path.join(self.tree.dir, rel)], check=True)
        return run(self.tree.dir, "--objects", os.path.join(self.tree.dir, "build"))

    def test_calls_one_way_pass(self):
        rc, out = self.build({
            "server/conn.c": "int util_b(void);\nint conn_a(void) { return util_b(); }\n",
            "server/util.c": "int util_b(void) { return 2; }\n",
            "filter/f.c": "int f(void) { return 3; }\n",
            "commands/c.c": "int f(void);\nint c(void) { return f(); }\n",
        })
        self.assertEqual(rc, 0, out)
        self.assertIn("4 object files", out)

    def test_calls_both_ways_fail(self):
        rc, out = self.build({
            "server/conn.c": "int util_b(void);\nint conn_a(void) { return util_b(); }\n",
            "server/util.c": "int conn_a(void);\nint util_b(void) { return conn_a(); }\n",
        })
        self.assertEqual(rc, 1, out)
        self.assertIn("link cycle", out)
        self.assertIn("server/conn.c uses util_b", out)
        self.assertIn("server/util.c uses conn_a", out)

    def test_calls_both_ways_inside_a_sublayer_pass(self):
        rc, out = self.build({
            "server/conn.c": "int cmd_b(void);\nint conn_a(void) { return cmd_b(); }\n",
            "server/cmd.c": "int conn_a(void);\nint cmd_b(void) { return conn_a(); }\n",
        })
        self.assertEqual(rc, 0, out)

    def test_a_lower_sublayer_calling_up_fails(self):
        # No cycle: only the direction is wrong.
        rc, out = self.build({
            "server/main.c": "int main(void) { return 0; }\nint main_x(void) { return 1; }\n",
            "server/conn.c": "int main_x(void);\nint conn_a(void) { return main_x(); }\n",
        })
        self.assertEqual(rc, 1, out)
        self.assertIn("link upward edge: server/conn (core) -> server/main (root)", out)
        self.assertIn("server/conn.c uses main_x", out)
        self.assertNotIn("link cycle", out)

    def test_a_global_variable_counts(self):
        rc, out = self.build({
            "server/conn.c": "extern int nb;\nint na = 1;\nint conn_a(void) { return nb; }\n",
            "server/util.c": "extern int na;\nint nb = 2;\nint util_b(void) { return na; }\n",
        })
        self.assertEqual(rc, 1, out)
        self.assertIn("link cycle", out)

    def test_commands_calling_the_server_fail(self):
        rc, out = self.build({
            "server/util.c": "int s(void) { return 1; }\n",
            "commands/c.c": "int s(void);\nint c(void) { return s(); }\n",
        })
        self.assertEqual(rc, 1, out)
        self.assertIn("link forbidden edge: commands/c -> server/util", out)

    def test_protocol_calling_libuv_fails(self):
        rc, out = self.build({
            "protocol/p.c": "int uv_run(void *, int);\nint p(void) { return uv_run(0, 0); }\n",
        })
        self.assertEqual(rc, 1, out)
        self.assertIn("link forbidden edge: protocol/p -> libuv", out)

    def test_objects_of_deleted_sources_are_ignored(self):
        self.build({
            "server/conn.c": "int util_b(void);\nint conn_a(void) { return util_b(); }\n",
            "server/util.c": "int conn_a(void);\nint util_b(void) { return conn_a(); }\n",
        })
        os.remove(os.path.join(self.tree.dir, "server", "util.c"))
        rc, out = run(self.tree.dir, "--objects", os.path.join(self.tree.dir, "build"))
        self.assertEqual(rc, 0, out)

    def test_no_objects_is_a_usage_error(self):
        self.tree.write("server/a.c", "int a(void) { return 1; }\n")
        os.makedirs(os.path.join(self.tree.dir, "build"))
        rc, out = run(self.tree.dir, "--objects", os.path.join(self.tree.dir, "build"))
        self.assertEqual(rc, 2, out)


class RealTree(unittest.TestCase):
    def test_runs_on_the_project(self):
        rc, out = run(os.path.dirname(HERE))
        self.assertIn(rc, (0, 1), out)
        self.assertIn("filter/", out)
        self.assertNotIn("Traceback", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
