"""The set-up scripts' decisions, run with fake tools on a restricted PATH:
deps.sh without root and without sudo, node.sh choosing a Node >= 20.
Nothing is installed: the fakes stand in for what would be.
"""

import os
import shutil
import stat
import subprocess

import pytest

from support.proc import ROOT

BASH = shutil.which("bash")


def fake(bindir, name, body):
    path = os.path.join(str(bindir), name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def tools(bindir, *names):
    """Links the real tools a script needs into bindir."""
    for n in names:
        real = shutil.which(n)
        assert real is not None, "%s not installed" % n
        os.symlink(real, os.path.join(str(bindir), n))


def run(script, path, env_extra=None):
    env = {"PATH": str(path), "HOME": os.environ.get("HOME", "/")}
    env.update(env_extra or {})
    return subprocess.run([BASH, os.path.join(ROOT, "scripts", script)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=env, timeout=60)


def test_deps_without_root_or_sudo(tmp_path):
    fake(tmp_path, "id", "echo 1000")
    fake(tmp_path, "dpkg-query", "exit 1")  # nothing installed
    tools(tmp_path, "grep")
    r = run("deps.sh", tmp_path)
    assert r.returncode != 0
    assert b"run as root or install sudo" in r.stderr
    assert b"command not found" not in r.stderr


def test_deps_without_root_uses_sudo(tmp_path):
    log = tmp_path / "sudo.log"
    fake(tmp_path, "id", "echo 1000")
    fake(tmp_path, "dpkg-query", "exit 1")
    fake(tmp_path, "sudo", 'echo "$@" >> %s' % log)
    tools(tmp_path, "grep")
    r = run("deps.sh", tmp_path)
    assert r.returncode == 0, r.stderr
    calls = log.read_text().splitlines()
    assert calls[0] == "apt-get update -qq"
    assert calls[1].startswith("apt-get install") and "libuv1-dev" in calls[1]


NODE_TOOLS = ("sed", "uname", "dirname", "mkdir")


def test_node_new_enough_is_used_as_is(tmp_path):
    node = fake(tmp_path, "node", "echo v20.11.1")
    fake(tmp_path, "npm", "echo npm must not run >&2; exit 1")
    tools(tmp_path, *NODE_TOOLS)
    r = run("node.sh", tmp_path, {"NODE_DIR": str(tmp_path / "n20")})
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().strip() == node
    assert not (tmp_path / "n20").exists()


@pytest.mark.parametrize("version", ["v18.20.4", None])
def test_node_too_old_or_missing_installs_20(tmp_path, version):
    if version:
        fake(tmp_path, "node", "echo %s" % version)
    # A fake npm that "installs" the package as npm would lay it out.
    fake(tmp_path, "npm", r'''
[ "$1" = install ] && [ "$2" = --prefix ] || exit 2
echo "$@" > "$3/npm.args"
for a; do case "$a" in node-linux-*@20) pkg=${a%@20};; esac; done
mkdir -p "$3/node_modules/$pkg/bin"
printf '#!/bin/sh\necho v20.20.2\n' > "$3/node_modules/$pkg/bin/node"
chmod +x "$3/node_modules/$pkg/bin/node"''')
    tools(tmp_path, *(NODE_TOOLS + ("chmod", "printf")))
    if os.uname().machine not in ("x86_64", "aarch64"):
        pytest.skip("no Node package for this machine")
    arch = "x64" if os.uname().machine == "x86_64" else "arm64"
    n20 = tmp_path / "n20"
    r = run("node.sh", tmp_path, {"NODE_DIR": str(n20)})
    assert r.returncode == 0, r.stderr
    want = n20 / "node_modules" / ("node-linux-" + arch) / "bin" / "node"
    assert r.stdout.decode().strip() == str(want)
    assert ("node-linux-%s@20" % arch) in (n20 / "npm.args").read_text()
    # Installed once: the next run uses it without npm.
    os.unlink(str(tmp_path / "npm"))
    r = run("node.sh", tmp_path, {"NODE_DIR": str(n20)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().strip() == str(want)


def test_node_too_old_without_npm_says_so(tmp_path):
    fake(tmp_path, "node", "echo v18.20.4")
    tools(tmp_path, *NODE_TOOLS)
    r = run("node.sh", tmp_path, {"NODE_DIR": str(tmp_path / "n20")})
    assert r.returncode != 0
    assert b"npm is needed" in r.stderr
