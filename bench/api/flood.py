"""A flood from one client address: N keep-alive connections, each asking for a new random page
as soon as the last answer arrived (what the issue's probe did with 96 workers).

Run as its own process (so it does not share an event loop with what it measures):

    python bench/api/flood.py HOST PORT SECONDS CONNECTIONS SOURCE_ADDRESS [PATH_PREFIX]

Every request is ``GET {PATH_PREFIX}<random word>`` (default ``/?q=``: a site search page no one
asked for before) from SOURCE_ADDRESS (127.0.0.2 is another client than 127.0.0.1 on Linux's
loopback). A connection the server closes is opened again. Prints one JSON line: requests
answered, by status, per second, and connections reopened. Parsing is the minimum (status
line, Content-Length) so the flood stays cheap.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time

from load import next_response  # (bench/api/load.py: the script's folder is on sys.path)


class Conn(asyncio.Protocol):
    def __init__(self, make_request, stats: dict, stop: asyncio.Event, closed: asyncio.Future):
        self.make_request, self.stats, self.stop, self.closed = make_request, stats, stop, closed
        self.buf = b""
        self.transport = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        transport.write(self.make_request())

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while (response := next_response(self.buf)) is not None:
            head, total = response
            status = head[9:12].decode()
            self.stats["status"][status] = self.stats["status"].get(status, 0) + 1
            self.buf = self.buf[total:]
            if self.stop.is_set() or b"connection: close" in head:
                self.transport.close()
                return
            self.transport.write(self.make_request())

    def connection_lost(self, exc) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def worker(host: str, port: int, source: str, make_request, stats: dict, stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        closed = loop.create_future()
        try:
            await loop.create_connection(lambda: Conn(make_request, stats, stop, closed), host, port,
                                         local_addr=(source, 0))
        except OSError:
            stats["connect_errors"] += 1
            await asyncio.sleep(0.01)
            continue
        await closed
        stats["reopened"] += 1


async def main(host: str, port: int, seconds: float, connections: int, source: str, prefix: str) -> dict:
    rng = random.Random()
    letters = "abcdefghijklmnopqrstuvwxyz"

    def make_request() -> bytes:
        word = "".join(rng.choice(letters) for _ in range(rng.randint(4, 9)))
        return (f"GET {prefix}{word} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/html\r\n\r\n").encode()

    stats = {"status": {}, "reopened": 0, "connect_errors": 0}
    stop = asyncio.Event()
    started = time.perf_counter()
    tasks = [asyncio.create_task(worker(host, port, source, make_request, stats, stop)) for _ in range(connections)]
    await asyncio.sleep(seconds)
    stop.set()
    elapsed = time.perf_counter() - started
    await asyncio.wait(tasks, timeout=5)
    answered = sum(stats["status"].values())
    return {**stats, "answered": answered, "per_s": answered / elapsed, "reopened": stats["reopened"] - connections}


if __name__ == "__main__":
    host, port, seconds, conns, source = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    prefix = sys.argv[6] if len(sys.argv) > 6 else "/?q="
    print(json.dumps(asyncio.run(main(host, port, seconds, conns, source, prefix))))
