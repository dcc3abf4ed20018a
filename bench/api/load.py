"""A small, cheap HTTP/1.1 load generator: N keep-alive connections, one request in flight each.

Run as its own process (so it does not share an event loop with what it measures):

    python bench/api/load.py HOST PORT PATH SECONDS CONNECTIONS [SERVER_PID]

Prints one JSON line: requests completed per second in the measured window, how many
answers were not 200, and, given the server's pid, the server's CPU time per request
(user + system, from /proc) — which, unlike requests/s, does not depend on what else
the machine's cores are doing. Parsing is the minimum (status line + Content-Length) so the client
stays much cheaper than any server it drives.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time


def next_response(buf: bytes) -> tuple[bytes, int] | None:
    """The first complete HTTP/1.1 response in ``buf``: its lower-cased head and its whole length
    (framed by Content-Length, none read as 0), or None while it is still arriving."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    head = buf[:end].lower()
    at = head.find(b"content-length:")
    eol = head.find(b"\r\n", at)
    length = int(head[at + 15: eol if eol > 0 else None]) if at >= 0 else 0
    total = end + 4 + length
    return (head, total) if len(buf) >= total else None


class Conn(asyncio.Protocol):
    def __init__(self, request: bytes, stats: dict, stop: asyncio.Event):
        self.request, self.stats, self.stop = request, stats, stop
        self.buf = b""
        self.transport = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while (response := next_response(self.buf)) is not None:
            head, total = response
            if not head.startswith(b"http/1.1 200"):
                self.stats["bad"] += 1
            self.buf = self.buf[total:]
            if self.stats["measuring"]:
                self.stats["done"] += 1
            if self.stop.is_set():
                self.transport.close()
                return
            self.transport.write(self.request)


def cpu_seconds(pid: int | None) -> float:
    if not pid:
        return 0.0
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


async def main(host: str, port: int, path: str, seconds: float, connections: int, pid: int | None = None) -> dict:
    request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: application/json\r\n\r\n".encode()
    stats = {"done": 0, "bad": 0, "measuring": False}
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for _ in range(connections):
        await loop.create_connection(lambda: Conn(request, stats, stop), host, port)
    await asyncio.sleep(1.0)  # warm-up
    stats["measuring"] = True
    started, cpu_started = time.perf_counter(), cpu_seconds(pid)
    await asyncio.sleep(seconds)
    stats["measuring"] = False
    elapsed, cpu = time.perf_counter() - started, cpu_seconds(pid) - cpu_started
    stop.set()
    await asyncio.sleep(0.2)
    done = max(stats["done"], 1)
    return {"rps": stats["done"] / elapsed, "non_200": stats["bad"], "cpu_us_per_request": cpu / done * 1e6}


if __name__ == "__main__":
    host, port, path, seconds, conns = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
    pid = int(sys.argv[6]) if len(sys.argv) > 6 else None
    print(json.dumps(asyncio.run(main(host, port, path, seconds, conns, pid))))
