#!/usr/bin/env python3
"""The container image: its size, and the time from starting it to the
first PONG, beside a reference measured in the same run.

    python3 bench/bench_image.py [--image cuckood:latest]
        [--ref-image IMAGE] [--runs 9]

Size: the engine's `image inspect` Size (what `podman images` shows),
and with --ref-image the same for another image, as a ratio.

Time to first PONG: the clock starts just before the container is
started and stops when a client polling every millisecond first reads
+PONG to a PING. With an engine that can start containers the image is run
as `run -d -p 127.0.0.1:P:6379` and polled from the host. Where it cannot
(tests/image/image.py says why), the image's own filesystem is run the
way the image test runs it (PID 1 of new PID and mount namespaces, the
root read-only, /data writable, as uid 10001), in a network namespace
that a poller made first, so that polling starts before the server does.
The reference: the host's redis-server started the same way (`--port P
--save ""`), in the same run. Median and range of --runs runs each.
Target: the image <= 20 MB and its first PONG <= 100 ms.
"""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "image"))
import image as img  # noqa: E402

# Polls 127.0.0.1:PORT in its own network namespace: waits for "go" on
# stdin, then prints CLOCK_MONOTONIC at the first PONG.
POLLER = r'''
import socket, sys, time
port = int(sys.argv[1])
sys.stdout.write("ready\n"); sys.stdout.flush()
sys.stdin.readline()
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=1)
        s.sendall(b"PING\r\n")
        if s.recv(64).startswith(b"+PONG"):
            print(time.monotonic()); break
    except OSError:
        time.sleep(0.001)
else:
    print("timeout")
'''


def in_netns(start_argv, port):
    """Seconds from starting start_argv (a function of the poller's pid)
    to the first PONG, both in the poller's new network namespace."""
    poller = subprocess.Popen(
        ["unshare", "--net", "--", sys.executable, "-c", POLLER, str(port)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert poller.stdout.readline() == b"ready\n"
    # lo up in the new namespace, before the clock starts.
    subprocess.run(["nsenter", "--target", str(poller.pid), "--net", "--",
                    "ip", "link", "set", "lo", "up"], check=True)
    t0 = time.monotonic()
    proc = subprocess.Popen(start_argv(poller.pid), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, cwd="/")
    poller.stdin.write(b"go\n")
    poller.stdin.flush()
    out = poller.stdout.readline().decode().strip()
    poller.wait()
    return t0, out, proc


def image_start(image, data, rootdir):
    uid, gid = image.ids()

    def argv(poller_pid):
        # As the image test's NamespaceContainer, in the poller's network.
        return (["nsenter", "--net=/proc/%d/ns/net" % poller_pid, "--",
                 "unshare", "--mount", "--propagation", "private", "--",
                 "sh", "-ec", img.SETUP, "sh", image.root(), rootdir, data,
                 image.volumes[0],
                 "unshare", "--pid", "--fork", "--kill-child", "--mount-proc",
                 "--root", rootdir, "--wd", image.workdir,
                 "--setuid", str(uid), "--setgid", str(gid), "--"] +
                image.argv())
    return argv


def run_image_ns(image):
    data = tempfile.mkdtemp(prefix="bench-image-data-")
    os.chown(data, *image.ids())
    rootdir = tempfile.mkdtemp(prefix="bench-image-root-")
    try:
        t0, out, proc = in_netns(image_start(image, data, rootdir),
                                 image.ports[0])
        # nsenter, unshare and sh exec one another: proc is the last
        # unshare, and its child the container's PID 1 (--kill-child does
        # not reach it: the kernel drops it at --setuid). The mounts were
        # made in their own mount namespace and go with them.
        path = "/proc/%d/task/%d/children" % (proc.pid, proc.pid)
        with open(path) as f:
            for pid in f.read().split():
                os.kill(int(pid), 9)
        proc.wait()
        assert out != "timeout", "no PONG from the image"
        return float(out) - t0
    finally:
        shutil.rmtree(rootdir, ignore_errors=True)
        shutil.rmtree(data, ignore_errors=True)


def run_image_engine(image):
    data = tempfile.mkdtemp(prefix="bench-image-data-")
    os.chown(data, *image.ids())
    port = img.free_port()
    name = "cuckood-bench-%d" % os.getpid()
    t0 = time.monotonic()
    subprocess.run([image.engine, "run", "-d", "--rm", "--name", name,
                    "-v", "%s:%s" % (data, image.volumes[0]), "-p",
                    "127.0.0.1:%d:%d" % (port, image.ports[0]), image.ref],
                   check=True, stdout=subprocess.DEVNULL)
    try:
        while time.monotonic() - t0 < 20:
            try:
                with socket.create_connection(("127.0.0.1", port), 1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return time.monotonic() - t0
            except OSError:
                time.sleep(0.001)
        raise AssertionError("no PONG from the image")
    finally:
        subprocess.run([image.engine, "rm", "-f", name],
                       stdout=subprocess.DEVNULL)
        shutil.rmtree(data, ignore_errors=True)


def run_redis():
    port = 6379
    d = tempfile.mkdtemp(prefix="bench-image-redis-")
    try:
        t0, out, proc = in_netns(lambda pid: [
            "nsenter", "--net=/proc/%d/ns/net" % pid, "--", "redis-server",
            "--port", str(port), "--save", "", "--dir", d], port)
        proc.kill()
        proc.wait()
        assert out != "timeout", "no PONG from redis-server"
        return float(out) - t0
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image", default=img.IMAGE)
    ap.add_argument("--ref-image", default=None)
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    engine = img.pick_engine()
    image = img.Image(engine, args.image)
    mode, why = img.pick_mode(image)
    mb = 1000 * 1000
    print("image %s: %.1f MB (%s's size); run mode %s (%s); load average %s"
          % (image.ref, image.size / mb, engine, mode, why,
             " ".join(open("/proc/loadavg").read().split()[:3])))
    if args.ref_image:
        ref = img.Image(engine, args.ref_image)
        print("reference image %s: %.1f MB; ratio %.3fx" % (
            ref.ref, ref.size / mb, image.size / ref.size))
        ref.release()
    ours, theirs = [], []
    for _ in range(args.runs):
        ours.append(run_image_engine(image) if mode == "engine"
                    else run_image_ns(image))
        theirs.append(run_redis())
    image.release()

    def show(xs):
        return "median %.1f ms (%.1f-%.1f)" % (
            statistics.median(xs) * 1e3, min(xs) * 1e3, max(xs) * 1e3)
    print("first PONG: image %s; host redis-server %s; ratio %.2fx" % (
        show(ours), show(theirs),
        statistics.median(ours) / statistics.median(theirs)))
    for what, ok, text in [
            ("size", image.size <= 20 * mb, "%.1f MB <= 20 MB" %
             (image.size / mb)),
            ("first-pong", statistics.median(ours) <= 0.1,
             "%.1f ms <= 100 ms" % (statistics.median(ours) * 1e3))]:
        print("target image %s %s %s" % (what, text,
                                         "met" if ok else "MISSED"))


if __name__ == "__main__":
    main()
