"""EmbeddedPostgres.start when its port is taken by another process before postgres binds it."""

import socket

import pytest

from indexium_devstack.embedded import EmbeddedPostgres


def _listen(port: int) -> socket.socket:
    s = socket.socket()
    s.bind(("127.0.0.1", port))
    s.listen()
    return s


def test_a_port_taken_before_the_first_start_is_swapped_for_another(pg_root):
    pg = EmbeddedPostgres(pg_root / "pg", durable=False, log_file=pg_root / "pg.log")
    taken = pg.port
    # Something else listens there: the wait must not mistake it for postgres.
    with _listen(taken):
        pg.start()
        try:
            assert pg.port != taken
            assert pg.psql("SELECT 41 + 1", tuples=True).strip() == "42"
        finally:
            pg.stop()


def test_a_port_the_caller_chose_is_never_swapped_and_the_error_says_why(pg_root):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with _listen(port):
        pg = EmbeddedPostgres(pg_root / "pg", port, durable=False, log_file=pg_root / "pg.log")
        with pytest.raises(RuntimeError) as e:
            pg.start()
    said = str(e.value)
    assert f"port {port}" in said
    assert "Address already in use" in said  # postgres's own words, from its log
    assert "LISTEN" in said and "users:" in said, said  # who holds the port (ss -p)
