"""The module's cf-* load arguments against the daemon's directives of the
same names: one rule for a configured error rate (any encoding the core may
choose for it, semi-sorted ones included), the same filters made from it,
and the same words when a value is refused."""

import re

import pytest

from support.proc import Daemon, run_binary


def info(r, key):
    reply = r.execute_command("CF.INFO", key)
    return dict(zip(reply[0::2], reply[1::2]))


def daemon_info(args, key):
    d = Daemon(*args)
    try:
        d.start()
        r = d.client()
        r.execute_command("CF.ADD", key, "a")
        return info(r, key)
    finally:
        d.cleanup()


# 1e-4 at bucket size 4: plain 16-bit fingerprints give 8/65535 = 1.2e-4,
# so only 17-bit semi-sorted ones meet it; 0.001: 13-bit semi-sorted.
@pytest.mark.parametrize("rate,bits", [("0.0001", 17), ("0.001", 13)])
def test_rate_only_semisorted_meets_loads(servers, rate, bits):
    r = servers(module_args=["cf-error-rate", rate]).client()
    r.execute_command("CF.ADD", "f", "a")
    mod = info(r, "f")
    assert mod[b"Encoding"] == b"semi-sorted"
    assert mod[b"Fingerprint bits"] == bits
    assert float(mod[b"Error rate"]) <= float(rate)
    dae = daemon_info(["--cf-error-rate", rate], "f")
    # Size counts the host's allocator's rounding, and Redis prints a
    # double with 17 digits where the daemon prints the shortest form; the
    # rest is the filter.
    del mod[b"Size"], dae[b"Size"]
    for d in (mod, dae):
        d[b"Error rate"] = float(d[b"Error rate"])
    assert mod == dae
    # A CF.RESERVE whose bucket size cannot meet the configured rate falls
    # back to the plain width the rate stands for, as in the daemon.
    r.execute_command("CF.RESERVE", "g", 1000, "BUCKETSIZE", 8)
    g = info(r, "g")
    assert g[b"Encoding"] == b"plain"
    assert g[b"Fingerprint bits"] == 16


def daemon_refusal(args):
    """The reason the daemon gives for refusing args at start-up."""
    p = run_binary("--port", "0", *args)
    assert p.returncode != 0
    out = (p.stdout + p.stderr).decode(errors="replace")
    m = re.search(r"command line: '[^']*': (.*)", out)
    assert m, out
    return m.group(1).strip()


@pytest.mark.parametrize("args", [
    ["cf-error-rate", "0.00005"],
    ["cf-bucket-size", "2", "cf-error-rate", "5e-5"],
    ["cf-error-rate", "0.001", "cf-bucket-size", "255"],
    ["cf-error-rate", "1"],
    ["cf-error-rate", "0.1x"],
    ["cf-bucket-size", "256"],
    ["cf-initial-size", "4"],
])
def test_bad_rate_refused_with_the_daemons_words(servers, args):
    why = daemon_refusal(["--" + a if i % 2 == 0 else a
                          for i, a in enumerate(args)])
    s = servers(module_args=args, start=False)
    rc = s.fail_to_start()
    assert rc is not None and rc != 0
    log = s.log_text()
    m = re.search(r"cuckoo: bad module argument (cf-[a-z-]+): (.*)", log)
    assert m, log
    assert m.group(2).strip() == why
