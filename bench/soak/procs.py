"""What the soak reads of the stack's processes: RSS, PSS and CPU from /proc, by role.

A role's process changes pid when the supervisor restarts it (a ``kill -9``), so CPU is
accumulated per pid across samples: a killed process's CPU since the last sample is the
only part missed (the samples are a second apart).
"""

from __future__ import annotations

import os
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    """Direct children of a process (PostgreSQL's backends and workers)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(entry.name))
    return out


def cpu_seconds(pid: int) -> float | None:
    """user + system CPU of one process so far, or None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICK


def memory_mb(pid: int) -> tuple[float, float, float]:
    """(private RSS, shared-memory RSS, PSS) of one process in MB. RSS = private + shared: the
    shared part (PostgreSQL's shared buffers) is in every backend's RSS and is counted once per
    role by ``Roles.memory``; PSS divides every shared page among the processes mapping it."""
    status: dict[str, int] = {}
    pss = 0.0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile", "RssShmem"):
                status[key] = int(value.split()[0])
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            key, _, value = line.partition(":")
            if key == "Pss":
                pss = int(value.split()[0]) / 1024
    except OSError:
        return 0.0, 0.0, 0.0
    return ((status.get("RssAnon", 0) + status.get("RssFile", 0)) / 1024, status.get("RssShmem", 0) / 1024, pss)


class Roles:
    """``name -> [pids]`` as of now: the services' current processes with their children (the
    search-snapshot scheduler's writes), NATS, and PostgreSQL's postmaster with every child
    (backends come and go)."""

    def __init__(self, stack):
        self.stack = stack

    def pids(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for proc in self.stack.services:
            if proc.alive():  # (with its children: the search snapshot's writes, the API's prefetch)
                out[proc.spec.name] = [proc.proc.pid, *children(proc.proc.pid)]
        if self.stack.nats is not None and self.stack.nats.proc is not None:
            out["nats"] = [self.stack.nats.proc.pid]
        if self.stack.pg is not None and self.stack.pg.proc is not None:
            root = self.stack.pg.proc.pid
            out["postgres"] = [root, *children(root)]
        return out

    def memory(self) -> dict[str, tuple[float, float, float]]:
        """MB per role: (RSS with shared memory counted once, PSS, RSS summed naively over the
        role's processes). For a one-process role the first and the last are its VmRSS."""
        out = {}
        for name, pids in self.pids().items():
            rows = [memory_mb(p) for p in pids]
            private = sum(r[0] for r in rows)
            shared = max((r[1] for r in rows), default=0.0)
            out[name] = (private + shared, sum(r[2] for r in rows), private + sum(r[1] for r in rows))
        return out


class CpuMeter:
    """CPU seconds per role since ``start()``, across restarts (summed over every pid seen)."""

    def __init__(self, roles: Roles):
        self.roles = roles
        self._base: dict[int, float] = {}
        self._last: dict[int, tuple[str, float]] = {}

    def start(self) -> None:
        self._base.clear()
        self._last.clear()
        self.sample(base=True)

    def sample(self, base: bool = False) -> None:
        for name, pids in self.roles.pids().items():
            for pid in pids:
                cpu = cpu_seconds(pid)
                if cpu is None:
                    continue
                if base:
                    self._base[pid] = cpu
                else:
                    self._base.setdefault(pid, 0.0)  # born since start: all of its CPU counts
                self._last[pid] = (name, cpu)

    def totals(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for pid, (name, cpu) in self._last.items():
            out[name] = out.get(name, 0.0) + cpu - self._base.get(pid, 0.0)
        return out
