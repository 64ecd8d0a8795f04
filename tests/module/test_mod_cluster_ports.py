"""The module cluster fixture (support.proc.module_cluster) starts even
when the port pair it first picks is taken meanwhile, as when other test
runs start clusters at the same time: a node that cannot listen tries a
new pair instead of the same one again."""

import socket

from support.proc import cleanup_all, cluster_port, module_cluster


def holder(port):
    """A socket listening on port (and never answering)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(1)
    return s


def picks(*first):
    """A pick_port that answers first's ports in turn, then free pairs;
    it records what it answered."""
    out = []

    def pick():
        p = first[len(out)] if len(out) < len(first) else cluster_port()
        out.append(p)
        return p
    pick.answered = out
    return pick


def test_cluster_starts_when_its_first_ports_are_taken():
    taken = cluster_port()
    bus_taken = cluster_port()
    held = [holder(taken), holder(bus_taken + 10000)]
    pick = picks(taken, bus_taken)
    try:
        nodes = module_cluster(3, pick_port=pick)
        try:
            ports = [n.port for n in nodes]
            assert taken not in ports and bus_taken not in ports
            # Both taken pairs were tried, then new ones: 3 nodes, 5 picks.
            assert pick.answered[:2] == [taken, bus_taken]
            assert len(pick.answered) == 5
            c = nodes[0].client()
            assert c.execute_command("CLUSTER", "INFO").count(
                b"cluster_state:ok") == 1
        finally:
            cleanup_all(nodes)
    finally:
        for s in held:
            s.close()
