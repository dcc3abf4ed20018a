"""A private network on this machine for partition tests: one Linux bridge, one network
namespace per node (a veth pair each), addresses from a 10.x.y.0/24 that nothing else on the
machine uses. The root namespace holds the bridge's .1, so processes started normally (the
services, the test) reach every node; nodes can be cut off from each other while the host
still reaches them. Nothing is routed off the machine (no forwarding, no default route).

Needs root and iproute2 (``ip``). Names carry the creating pid, so a run killed before it
could clean up is swept by the next one (``sweep_stale``).
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import itertools
import os
import random
import shutil
import signal
import subprocess
from pathlib import Path

from .embedded import EmbeddedNatsCluster

PREFIX = "ixf"  # namespaces ixf-<pid>-<n>-n<i>; bridges ixb<pid hex>x<n hex>; veths ixv...
_LOCK = Path("/tmp/indexium-netns.lock")
_counter = itertools.count()


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {r.stderr.strip()}")
    return r


def unavailable_reason() -> str | None:
    """Why this machine cannot build a private network of namespaces, or None when it can."""
    if shutil.which("ip") is None:
        return "the ip command (iproute2) is not installed"
    if os.geteuid() != 0:
        return "network namespaces need root"
    probe = f"{PREFIX}-{os.getpid()}-probe"
    bridge, veth = f"ixb{os.getpid():x}p", f"ixv{os.getpid():x}p"
    try:
        for args in (("netns", "add", probe), ("link", "add", bridge, "type", "bridge"),
                     ("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", probe)):
            r = _ip(*args, check=False)
            if r.returncode != 0:
                return f"'ip {' '.join(args)}' failed: {r.stderr.strip()}"
        return None
    finally:
        _ip("link", "del", veth, check=False)
        _ip("link", "del", bridge, check=False)
        _ip("netns", "del", probe, check=False)


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def _kill_inside(ns: str) -> None:
    pids = _ip("netns", "pids", ns, check=False).stdout.split()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)


def sweep_stale() -> None:
    """Remove namespaces and bridges left by runs whose process is gone."""
    for line in _ip("netns", "list", check=False).stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        parts = name.split("-")
        if len(parts) >= 2 and parts[0] == PREFIX and parts[1].isdigit() and not _alive(int(parts[1])):
            _kill_inside(name)
            _ip("netns", "del", name, check=False)
    for line in _ip("-o", "link", "show", "type", "bridge", check=False).stdout.splitlines():
        name = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        if name.startswith("ixb") and "x" in name[3:]:
            with contextlib.suppress(ValueError):
                if not _alive(int(name[3:].split("x")[0], 16)):
                    _ip("link", "del", name, check=False)


def _taken_networks() -> list[ipaddress.IPv4Network]:
    out = []
    text = _ip("-4", "-o", "addr", "show", check=False).stdout + _ip("-4", "route", "show", "table", "all",
                                                                      check=False).stdout
    for word in text.split():
        with contextlib.suppress(ValueError):
            if word[0].isdigit() and "." in word:
                out.append(ipaddress.ip_network(word, strict=False))
    return out


class PrivateNetwork:
    def __init__(self, size: int):
        pid, n = os.getpid(), next(_counter)
        self.size = size
        self.bridge = f"ixb{pid:x}x{n:x}"
        self.namespaces = [f"{PREFIX}-{pid}-{n}-n{i}" for i in range(size)]
        self._veths = [f"ixv{pid:x}x{n:x}{i}" for i in range(size)]
        self.subnet: ipaddress.IPv4Network | None = None
        self.addresses: list[str] = []
        self._cuts: set[tuple[int, int]] = set()

    def create(self) -> "PrivateNetwork":
        sweep_stale()
        try:
            # One run at a time picks its /24 and claims it on the bridge.
            with open(_LOCK, "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                self.subnet = self._free_subnet()
                _ip("link", "add", self.bridge, "type", "bridge")
                _ip("addr", "add", f"{self.subnet[1]}/24", "dev", self.bridge)
            _ip("link", "set", self.bridge, "up")
            for i, (ns, veth) in enumerate(zip(self.namespaces, self._veths)):
                address = str(self.subnet[10 + i])
                _ip("netns", "add", ns)
                _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
                _ip("link", "set", veth, "master", self.bridge, "up")
                _ip("-n", ns, "addr", "add", f"{address}/24", "dev", "eth0")
                _ip("-n", ns, "link", "set", "eth0", "up")
                _ip("-n", ns, "link", "set", "lo", "up")
                self.addresses.append(address)
        except BaseException:
            self.destroy()
            raise
        return self

    @staticmethod
    def _free_subnet() -> ipaddress.IPv4Network:
        taken = _taken_networks()
        candidates = [ipaddress.ip_network(f"10.{a}.{b}.0/24") for a in range(200, 255) for b in range(256)]
        random.shuffle(candidates)
        for net in candidates:
            if not any(net.overlaps(t) for t in taken):
                return net
        raise RuntimeError("no free 10.x.y.0/24 for a private network")

    def command(self, i: int, argv: list[str]) -> list[str]:
        """``argv`` run inside node ``i``'s namespace."""
        return ["ip", "netns", "exec", self.namespaces[i], *argv]

    def cut(self, i: int) -> None:
        """Node ``i`` and every other node can no longer reach each other (packets silently
        dropped both ways, as with a failed switch port); the host still reaches all of them."""
        for j in range(self.size):
            pair = (min(i, j), max(i, j))  # cut(0) then cut(1) must not add the 0-1 routes twice
            if j != i and pair not in self._cuts:
                _ip("-n", self.namespaces[i], "route", "add", "blackhole", f"{self.addresses[j]}/32")
                _ip("-n", self.namespaces[j], "route", "add", "blackhole", f"{self.addresses[i]}/32")
                self._cuts.add(pair)

    def heal(self) -> None:
        for i, j in sorted(self._cuts):
            _ip("-n", self.namespaces[i], "route", "del", "blackhole", f"{self.addresses[j]}/32", check=False)
            _ip("-n", self.namespaces[j], "route", "del", "blackhole", f"{self.addresses[i]}/32", check=False)
        self._cuts.clear()

    def destroy(self) -> None:
        """Idempotent; safe after a partial create."""
        for ns in self.namespaces:
            _kill_inside(ns)
            _ip("netns", "del", ns, check=False)
        _ip("link", "del", self.bridge, check=False)  # veths went with their namespaces


class PartitionableNatsCluster(EmbeddedNatsCluster):
    """A JetStream cluster whose nodes each live in their own namespace of a PrivateNetwork:
    ``EmbeddedNatsCluster``'s nodes, each at its namespace's address, run inside it."""

    CLIENT_PORT, CLUSTER_PORT = 4222, 6222  # each node has its own address: no clash possible

    def __init__(self, root: Path, net: PrivateNetwork, *, name: str = "indexium"):
        super().__init__(root, name=name, hosts=net.addresses, client_ports=[self.CLIENT_PORT] * net.size,
                         cluster_ports=[self.CLUSTER_PORT] * net.size, wrap=net.command)
        self.net = net
