"""free_port never hands one port out twice in a process, whatever the kernel offers again;
port_is_free says taken only while something listens."""

import socket

from indexium_devstack.embedded import free_port, port_is_free


def test_no_port_is_handed_out_twice():
    # 2,000 picks out of the ~28,000 ephemeral ports: offered at random, some would repeat.
    ports = [free_port() for _ in range(2000)]
    assert len(set(ports)) == len(ports)


def test_a_handed_out_port_is_free_when_handed_out():
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_a_port_is_taken_while_listened_on_and_free_again_despite_time_wait():
    # A server that accepted a connection and closed its side first leaves the port's
    # connection in TIME_WAIT (a minute): the next `make run` must still find the port free,
    # as its server (SO_REUSEADDR) could bind it.
    port = free_port()
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen()
    client = socket.create_connection(("127.0.0.1", port))
    conn, _ = server.accept()
    assert not port_is_free(port)  # listened on
    conn.close()  # the server's side closes first: its end goes to TIME_WAIT
    client.recv(1)
    client.close()
    server.close()
    with socket.socket() as plain:  # (what the probe did before: refused while TIME_WAIT lasts)
        try:
            plain.bind(("127.0.0.1", port))
            time_wait = False
        except OSError:
            time_wait = True
    assert time_wait, "the kernel left no TIME_WAIT on the port: this test checks nothing here"
    assert port_is_free(port)
