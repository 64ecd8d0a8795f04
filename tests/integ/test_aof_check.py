"""cuckood --check-aof [--fix] FILE on one file of commands: a whole file
is valid; a torn last command or a MULTI without its EXEC is reported with
the offset of the whole prefix and, with --fix, cut off (as
redis-check-aof); damage in the middle is named by its offset; a missing
file is an error. The file is left as it was without --fix."""

import pytest

from support.proc import run_binary, sanitizer_report, use_module, \
    use_redis_server

pytestmark = pytest.mark.skipif(
    use_redis_server() or use_module(), reason="cuckood's own option")


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


A = resp("CF.ADD", "a", "x")
B = resp("CF.ADD", "b", "y")


def check(path, *opts):
    p = run_binary("--check-aof", *opts, path)
    out = p.stdout.decode(errors="replace") + p.stderr.decode(
        errors="replace")
    assert sanitizer_report(out) is None, out
    return p.returncode, out


def test_valid(tmp_path):
    f = tmp_path / "f.aof"
    f.write_bytes(A + resp("SELECT", 3) + B)
    rc, out = check(f)
    assert rc == 0, out
    assert "RESP AOF %s is valid" % f in out
    assert "ok_up_to=%d, diff=0" % (len(A) * 2 + len(resp("SELECT", 3))) \
        in out


@pytest.mark.parametrize("tail", [B[:9], resp("MULTI") + B])
def test_torn_tail_reported_then_fixed(tmp_path, tail):
    f = tmp_path / "f.aof"
    f.write_bytes(A + tail)
    rc, out = check(f)
    assert rc == 1, out
    assert "offset %d" % len(A) in out
    assert "is not valid. Use the --fix option" in out
    assert f.read_bytes() == A + tail
    rc, out = check(f, "--fix")
    assert rc == 0, out
    assert "Successfully truncated AOF" in out
    assert f.read_bytes() == A
    rc, out = check(f)
    assert rc == 0, out


def test_damage_in_the_middle_named(tmp_path):
    f = tmp_path / "f.aof"
    data = A + b"*3\r\n$6\r\nCF.ADD\r\n$x\r\n" + B
    f.write_bytes(data)
    rc, out = check(f)
    assert rc == 1, out
    assert "offset %d" % len(A) in out and "Protocol error" in out, out
    assert f.read_bytes() == data


def test_missing_file_and_usage(tmp_path):
    rc, out = check(tmp_path / "none.aof")
    assert rc == 1 and "No such file" in out, out
    p = run_binary("--check-aof")
    assert p.returncode == 1
    assert b"Usage: cuckood --check-aof" in p.stderr
