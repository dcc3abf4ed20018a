"""make run's memory setting for one machine: the embedded NATS's soft Go memory limit,
overridable from the environment (docs/operations.md, "One machine: memory")."""

from pathlib import Path

import pytest

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

