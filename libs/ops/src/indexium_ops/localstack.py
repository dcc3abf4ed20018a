"""The local stack's addresses, for an operator command run beside ``make run``.

``make run`` (``indexium_devstack.stack``) writes ``.run/state.json``: its PostgreSQL and NATS
URLs, its own pid and whether it is running. With no ``DATABASE_URL`` given, the operator CLI
takes the URLs from there, looked for in the current directory and its parents (a command run
from a subfolder of the checkout finds it too). The devstack is not installed in the image, so
the format is read here, not imported: the devstack's test writes one and this module reads it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

STATE = Path(".run") / "state.json"


class NotRunning(Exception):
    """A state file was found, but the stack that wrote it is not running (the message says so)."""


def find(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        candidate = folder / STATE
        if candidate.is_file():
            return candidate
    return None


def urls(state_file: Path) -> dict[str, str]:
    """``DATABASE_URL`` and ``NATS_URL`` of the running stack that wrote ``state_file``."""
    try:
        state = json.loads(state_file.read_text())
        database_url, nats_url = state["database_url"], state["nats_url"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise NotRunning(f"{state_file} is unreadable ({type(exc).__name__}); is `make run` starting?") from None
    pid = state.get("pid")
    if state.get("running") is False or (isinstance(pid, int) and not _alive(pid)):
        raise NotRunning(f"the local stack of {state_file} is not running; start it with `make run` "
                         "(or set DATABASE_URL and NATS_URL)")
    return {"DATABASE_URL": database_url, "NATS_URL": nats_url}


def environment(environ: Mapping[str, str], cwd: Path) -> Mapping[str, str]:
    """``environ``, or, when it names no database, with the running local stack's URLs (a
    ``NATS_URL`` given still wins). Neither: ``environ`` as it is (the settings' defaults)."""
    if "DATABASE_URL" in environ:
        return environ
    state_file = find(cwd)
    if state_file is None:
        return environ
    return {**urls(state_file), **environ}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True
