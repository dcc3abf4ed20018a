"""free_port never hands one port out twice in a process, whatever the kernel offers again."""

import socket

from indexium_devstack.embedded import free_port


def test_no_port_is_handed_out_twice():
    # 2,000 picks out of the ~28,000 ephemeral ports: offered at random, some would repeat.
    ports = [free_port() for _ in range(2000)]
    assert len(set(ports)) == len(ports)


def test_a_handed_out_port_is_free_when_handed_out():
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
