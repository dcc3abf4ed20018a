"""make run's memory settings for one machine: the embedded NATS's soft Go memory limit and the
API's smaller PostgreSQL pool, each overridable from the environment (docs/operations.md,
"One machine: memory")."""

from pathlib import Path

import pytest

from indexium_devstack import stack as stack_mod
from indexium_devstack.embedded import EmbeddedNats


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode(errors="replace").partition("=")[::2] for item in raw if b"=" in item)


@pytest.mark.parametrize(("limit", "outside", "expected"), [
    ("128MiB", None, "128MiB"),  # the stack's limit reaches the server
    ("128MiB", "300MiB", "300MiB"),  # an operator's own GOMEMLIMIT wins
    (None, None, None),  # no limit asked: Go's default
])
def test_the_nats_server_runs_under_the_memory_limit_asked(tmp_path, monkeypatch, limit, outside, expected):
    if outside is None:
        monkeypatch.delenv("GOMEMLIMIT", raising=False)
    else:
        monkeypatch.setenv("GOMEMLIMIT", outside)
    server = EmbeddedNats(tmp_path / "nats", memory_limit=limit).start()
    try:
        assert _environ(server.proc.pid).get("GOMEMLIMIT") == expected
    finally:
        server.stop()


def test_the_stack_gives_the_api_a_small_pool_unless_told_otherwise(tmp_path, monkeypatch):
    monkeypatch.setenv("NATS_URL", "nats://127.0.0.1:1")  # no servers started: the env alone
    monkeypatch.setenv("DATABASE_URL", "postgresql://postgres@127.0.0.1:1/x")
    monkeypatch.delenv("INDEXIUM_API_DB_POOL_SIZE", raising=False)
    local = stack_mod.LocalStack(tmp_path)
    local.start_infrastructure()
    assert local.env["INDEXIUM_API_DB_POOL_SIZE"] == "6"
    monkeypatch.setenv("INDEXIUM_API_DB_POOL_SIZE", "20")
    local = stack_mod.LocalStack(tmp_path)
    local.start_infrastructure()
    assert "INDEXIUM_API_DB_POOL_SIZE" not in local.env  # the environment's own reaches the roles
