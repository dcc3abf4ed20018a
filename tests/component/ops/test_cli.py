"""The operator CLI: beside `make run` it uses the local stack, a server it cannot reach is one
line, every (sub-)command says what it does, and the README lists exactly its commands."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from indexium_devstack.embedded import free_port
from indexium_devstack.stack import LocalStack
from indexium_ops.cli import build_parser, main

REPO = Path(__file__).resolve().parents[3]


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _every_command(parser=None, path=()):
    parser = parser or build_parser()
    for name, child in _subcommands(parser).items():
        yield (*path, name), child
        yield from _every_command(child, (*path, name))


def test_every_command_and_action_has_a_help_that_says_what_it_does(capsys):
    commands = list(_every_command())
    assert len(commands) >= 15
    for path, parser in commands:
        assert parser.description and len(parser.description) > 15, f"{' '.join(path)} says nothing of itself"
        with pytest.raises(SystemExit) as done:
            main([*path, "--help"])
        assert done.value.code == 0
        assert " ".join(parser.description.split()[:4]) in " ".join(capsys.readouterr().out.split())


def test_the_readme_lists_exactly_the_clis_commands_and_actions():
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Operator commands", 1)[1].split("\n## ", 1)[0]
    listed = {}
    for command, actions in re.findall(r"^- `([a-z-]+)((?: [|a-z -]+)?)`", section, re.M):
        listed[command] = sorted(a for a in actions.replace("|", " ").split())
    in_cli = {name: sorted(_subcommands(parser)) for name, parser in _subcommands(build_parser()).items()}
    assert listed == in_cli


def _local_stack(root: Path, database_url: str, nats_url: str) -> LocalStack:
    """The state file as `make run` writes it (its own code), without starting anything."""
    stack = LocalStack(root / ".run")
    stack.root.mkdir(parents=True)
    stack.env = {"NATS_URL": nats_url, "DATABASE_URL": database_url}
    return stack


async def test_beside_a_running_local_stack_it_uses_its_database(database_url, tmp_path, monkeypatch, capsys):
    _local_stack(tmp_path, database_url, "nats://127.0.0.1:1").write_state()
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # from a subfolder of the checkout too
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("NATS_URL", raising=False)
    with pytest.raises(SystemExit) as done:
        await asyncio.to_thread(main, ["quarantine", "list"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip().endswith("0 version(s) held")


def _cli(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "NATS_URL")}
    return subprocess.run([sys.executable, "-m", "indexium_ops", *args], cwd=cwd, env={**environ, **env},
                          capture_output=True, text=True, timeout=60)


def test_a_stopped_stack_or_a_server_that_does_not_answer_is_one_line(tmp_path):
    stopped = _local_stack(tmp_path / "a", "postgresql://x@127.0.0.1:1/indexium", "nats://127.0.0.1:1")
    stopped.write_state(running=False)  # what `make run` leaves once stopped
    gone = _local_stack(tmp_path / "b", "postgresql://x@127.0.0.1:1/indexium", "nats://127.0.0.1:1")
    gone.write_state()
    state = gone.root / "state.json"
    state.write_text(state.read_text().replace(f'"pid": {os.getpid()}', '"pid": 999999999'))  # killed -9
    port = free_port()
    cases = [
        (_cli("quarantine", "list", cwd=stopped.root.parent), "is not running; start it with `make run`"),
        (_cli("dead-letters", "list", cwd=gone.root.parent), "is not running; start it with `make run`"),
        (_cli("quarantine", "list", cwd=tmp_path, DATABASE_URL=f"postgresql://u:secret@127.0.0.1:{port}/indexium"),
         f"cannot reach PostgreSQL at 127.0.0.1:{port}/indexium: connection refused"),
    ]
    for done, says in cases:
        assert done.returncode == 1 and done.stdout == "", done.stderr
        assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and "secret" not in done.stderr


async def test_a_nats_that_does_not_answer_is_one_line(database_url, tmp_path):
    port = free_port()
    done = _cli("setup", cwd=tmp_path, DATABASE_URL=database_url, NATS_URL=f"nats://127.0.0.1:{port}")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"indexium_ops: cannot reach NATS at 127.0.0.1:{port}: connection refused "
        "(set DATABASE_URL and NATS_URL, or run it beside `make run`)")
