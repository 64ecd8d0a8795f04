"""Certificates for the TLS tests, made at run time with the `openssl`
command (nothing secret lives in the repository).

make_certs(dir) writes, all with P-256 keys:
  ca.crt / ca.key            the CA the server trusts for client certificates
  server.crt / server.key    signed by ca, for localhost and 127.0.0.1
  client.crt / client.key    signed by ca
  expired.crt / expired.key  signed by ca, already expired
  other-ca.crt               a CA nobody trusts
  other.crt / other.key      a client signed by other-ca
  server2.crt / server2.key  signed by other-ca (certificate rotation)
  server-enc.key             server.key encrypted with KEY_PASS
and returns a dict of those names to their paths.
"""

import os
import subprocess

KEY_PASS = "key pass phrase"


def _run(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _key(cwd, name):
    _run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-out", name, cwd=cwd)


def _ca(cwd, name, cn):
    _key(cwd, name + ".key")
    _run("req", "-x509", "-new", "-key", name + ".key", "-out", name + ".crt",
         "-days", "30", "-subj", "/CN=" + cn, cwd=cwd)


def _signed(cwd, name, ca, cn, days="30", server=False):
    _key(cwd, name + ".key")
    _run("req", "-new", "-key", name + ".key", "-out", name + ".csr",
         "-subj", "/CN=" + cn, cwd=cwd)
    ext = os.path.join(cwd, name + ".ext")
    with open(ext, "w") as f:
        if server:
            f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        f.write("extendedKeyUsage=serverAuth,clientAuth\n")
    _run("x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt",
         "-CAkey", ca + ".key", "-CAcreateserial", "-out", name + ".crt",
         "-days", days, "-extfile", ext, cwd=cwd)


def make_certs(d):
    os.makedirs(d, exist_ok=True)
    _ca(d, "ca", "cuckood test CA")
    _ca(d, "other-ca", "untrusted test CA")
    _signed(d, "server", "ca", "localhost", server=True)
    _signed(d, "client", "ca", "client")
    _signed(d, "expired", "ca", "expired client", days="-1")
    _signed(d, "other", "other-ca", "stranger")
    _signed(d, "server2", "other-ca", "localhost", server=True)
    _run("pkey", "-in", "server.key", "-out", "server-enc.key",
         "-aes256", "-passout", "pass:" + KEY_PASS, cwd=d)
    names = ["ca.crt", "ca.key", "server.crt", "server.key", "client.crt",
             "client.key", "expired.crt", "expired.key", "other-ca.crt",
             "other.crt", "other.key", "server2.crt", "server2.key",
             "server-enc.key"]
    return {n: os.path.join(d, n) for n in names}


def server_args(certs, auth="yes"):
    """The daemon's TLS directives for certs (tls-port is the caller's)."""
    return ["--tls-cert-file", certs["server.crt"],
            "--tls-key-file", certs["server.key"],
            "--tls-ca-cert-file", certs["ca.crt"],
            "--tls-auth-clients", auth]


if __name__ == "__main__":
    # python3 tls_certs.py DIR: for the node suites and the TLS benchmark.
    import sys
    make_certs(sys.argv[1])
