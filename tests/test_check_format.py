#!/usr/bin/env python3
"""Tests of scripts/check_format.sh on small trees in a temporary
directory: it passes on a formatted tree, fails naming the file on a
misformatted one, and --fix makes the tree pass again.

    python3 tests/test_check_format.py
"""

import os
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCRIPT = os.path.join(ROOT, "scripts", "check_format.sh")

FORMATTED = """\
#include <stdio.h>

int add(int a, int b)
{
    return a + b;
}
"""

# The same function as someone might type it: two-space indent, brace on
# the same line, a statement after the if on one line.
MISFORMATTED = """\
#include <stdio.h>

int add(int a, int b) {
  if (a) return a + b;
  return b;
}
"""


def run(root, *extra):
    res = subprocess.run(["bash", SCRIPT] + list(extra) + [root],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True)
    return res.returncode, res.stdout


class CheckFormat(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="check_format.")
        shutil.copy(os.path.join(ROOT, ".clang-format"), self.dir)
        self.write("filter/ok.c", FORMATTED)
        self.write("server/ok.h", "int add(int a, int b);\n")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, rel, text):
        path = os.path.join(self.dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def test_formatted_tree_passes(self):
        rc, out = run(self.dir)
        self.assertEqual(rc, 0, out)
        self.assertIn("2 files formatted", out)

    def test_misformatted_file_fails_and_is_named(self):
        self.write("server/bad.c", MISFORMATTED)
        rc, out = run(self.dir)
        self.assertEqual(rc, 1, out)
        self.assertIn("not formatted: server/bad.c", out)
        self.assertNotIn("not formatted: filter/ok.c", out)

    def test_build_trees_are_not_checked(self):
        self.write("build-x/gen.c", MISFORMATTED)
        self.write("tests/node_modules/x.c", MISFORMATTED)
        rc, out = run(self.dir)
        self.assertEqual(rc, 0, out)

    def test_fix_formats_the_tree(self):
        self.write("tests/bad.h", MISFORMATTED)
        rc, _ = run(self.dir, "--fix")
        self.assertEqual(rc, 0)
        rc, out = run(self.dir)
        self.assertEqual(rc, 0, out)

    def test_no_sources_is_a_usage_error(self):
        empty = tempfile.mkdtemp(prefix="check_format.")
        try:
            shutil.copy(os.path.join(ROOT, ".clang-format"), empty)
            rc, _ = run(empty)
            self.assertEqual(rc, 2)
        finally:
            shutil.rmtree(empty)


if __name__ == "__main__":
    unittest.main()
