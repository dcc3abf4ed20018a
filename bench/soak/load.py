"""The soak's load: signed release webhooks, the API's mix and telemetry pings, each at a fixed
rate (open loop) from one aiohttp client, with at most ``--concurrency`` requests in flight.

A tick that finds every slot busy is not sent and is counted as ``skipped``: the achieved rate
is printed beside the asked one, so a machine that cannot bear the load says so.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import aiohttp

from indexium_devstack import telemetry_samples
from indexium_devstack.fakegithub import webhook_headers

# route -> the statuses that are its normal answers
EXPECTED = {
    "webhook": {202},
    "webhook redelivered": {202},
    "api hit": {200},
    "api search": {200},
    "api by-hash": {200},
    "api update-check": {200},
    "telemetry": {202},
    "telemetry repeat": {202},
}
# Answers provoked on purpose: a server pinging twice within 15 minutes gets 429.
ON_PURPOSE = {"telemetry repeat": {429}}
ROLE_OF = {"webhook": "ingest", "webhook redelivered": "ingest", "telemetry": "telemetry",
           "telemetry repeat": "telemetry"}
API_MIX = (("api hit", 40), ("api search", 30), ("api by-hash", 15), ("api update-check", 15))


def role_of(route: str) -> str:
    return ROLE_OF.get(route, "api")


@dataclass
class ReleaseRef:
    release_id: int
    repo_id: int
    asset_id: int
    tag: str
    body: bytes
    delivery_id: str = ""
    attempts: int = 0
    accepted: bool = False
    status: str = ""


@dataclass
class Recorder:
    started: float
    window_s: float
    latencies: dict = field(default_factory=lambda: defaultdict(list))  # (route, window) -> [ms]
    statuses: Counter = field(default_factory=Counter)  # (route, status) -> n
    failures: list = field(default_factory=list)  # (t, route, status)
    skipped: Counter = field(default_factory=Counter)  # route -> ticks with no free slot

    def record(self, route: str, status, ms: float, t: float) -> None:
        self.statuses[(route, status)] += 1
        if status in EXPECTED[route]:
            window = min(5, max(0, int((t - self.started) // self.window_s)))  # six windows
            self.latencies[(route, window)].append(ms)
        elif status not in ON_PURPOSE.get(route, ()):
            self.failures.append((t, route, status))


class Load:
    def __init__(self, *, urls: dict[str, str], secret: str, rates: dict[str, float], concurrency: int,
                 names: list[str], hashes: list[tuple[str, str]], slugs: list[str], releases,
                 recorder: Recorder, seed: int = 38, clients: int = 2000, redeliver_share: float = 0.05,
                 repeat_share: float = 0.02):
        self.urls, self.secret, self.rates = urls, secret, rates
        self.slots = concurrency
        self.inflight = 0
        self.names, self.hashes, self.slugs = names, hashes, slugs
        self.releases = releases  # async () -> ReleaseRef | None (None: none ready yet)
        self.rec = recorder
        self.rng = random.Random(seed)
        self.redeliver_share, self.repeat_share = redeliver_share, repeat_share
        self.sent: dict[str, ReleaseRef] = {}  # delivery id -> release
        self.seen_servers: list[str] = []
        self.stop = asyncio.Event()
        self.http: aiohttp.ClientSession | None = None
        self._tasks: set[asyncio.Task] = set()
        # Launchers and servers stand behind this one client, which plays their load balancer:
        # each request names one of ``clients`` addresses in X-Forwarded-For (the roles trust
        # 127.0.0.1 for it), so the per-client limits apply per launcher, as in production.
        self.clients = [f"{self.rng.randint(1, 223)}.{self.rng.randint(0, 255)}.{self.rng.randint(0, 255)}."
                        f"{self.rng.randint(1, 254)}" for _ in range(clients)]
        self.hot = [f"/api/v1/mods?q={n.split()[-1].lower()}" for n in self.rng.sample(names, min(20, len(names)))]

    # ---- pacing --------------------------------------------------------------------------
    async def _pace(self, name: str, rate: float, fire) -> None:
        if rate <= 0:
            return
        loop = asyncio.get_running_loop()
        interval, due = 1.0 / rate, loop.time()
        while not self.stop.is_set():
            now = loop.time()
            if due > now:
                await asyncio.sleep(max(due - now, 0.002))
                continue
            due += interval
            if self.inflight >= self.slots:
                self.rec.skipped[name] += 1
                continue
            self._spawn(fire())

    def _spawn(self, coro) -> None:
        self.inflight += 1
        task = asyncio.create_task(coro)
        self._tasks.add(task)

        def done(t: asyncio.Task) -> None:
            self.inflight -= 1
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                print(f"load: {t.exception()!r}", flush=True)

        task.add_done_callback(done)

    async def _request(self, route: str, method: str, url: str, **kw) -> tuple[object, bytes]:
        loop = asyncio.get_running_loop()
        if not route.startswith("webhook"):
            kw["headers"] = {**kw.get("headers", {}), "X-Forwarded-For": self.rng.choice(self.clients)}
        t0 = time.perf_counter()
        try:
            async with self.http.request(method, url, **kw) as resp:
                body = await resp.read()
                status = resp.status
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
            status, body = type(exc).__name__, b""
        self.rec.record(route, status, (time.perf_counter() - t0) * 1000, loop.time())
        return status, body

    # ---- webhooks ------------------------------------------------------------------------
    async def webhook(self) -> None:
        rel = await self.releases()
        if rel is None:
            self.rec.skipped["webhook (no release ready)"] += 1
            return
        rel.delivery_id = str(uuid.uuid4())
        self.sent[rel.delivery_id] = rel
        await self._deliver(rel, "webhook")

    def _later(self, delay: float, coro_fn) -> None:
        """Run ``coro_fn()`` in ``delay`` seconds (holding no slot meanwhile), unless stopped."""
        def fire() -> None:
            if not self.stop.is_set():
                self._spawn(coro_fn())
        asyncio.get_running_loop().call_later(delay, fire)

    async def _deliver(self, rel: ReleaseRef, route: str) -> None:
        rel.attempts += 1
        headers = webhook_headers("release", rel.body, self.secret, rel.delivery_id, hook_id=38)
        status, body = await self._request(route, "POST", self.urls["ingest"] + "/webhooks/github",
                                           data=rel.body, headers=headers)
        if route != "webhook":
            return
        if status == 202:
            rel.accepted = True
            rel.status = body.decode(errors="replace")
            if self.rng.random() < self.redeliver_share:
                # The same delivery again, as GitHub's "Redeliver" does: it must be stored once.
                self._later(self.rng.uniform(0.5, 20), lambda: self._deliver(rel, "webhook redelivered"))
        elif rel.attempts < 30:
            # GitHub marks the delivery failed; its redelivery (the App's reconciler, or a
            # person) sends the same delivery id again later.
            self._later(3.0, lambda: self._deliver(rel, "webhook"))

    # ---- the API -------------------------------------------------------------------------
    async def api(self) -> None:
        kinds, weights = zip(*API_MIX)
        kind = self.rng.choices(kinds, weights)[0]
        base = self.urls["api"]
        if kind == "api hit":
            await self._request(kind, "GET", base + self.rng.choice(self.hot))
        elif kind == "api search":
            name = self.rng.choice(self.names)
            q = name if self.rng.random() < 0.5 else name[: max(3, len(name) - self.rng.randint(1, 5))]
            params = {"q": q, "offset": str(self.rng.choice((0, 0, 20)))}
            await self._request(kind, "GET", base + "/api/v1/mods", params=params)
        elif kind == "api by-hash":
            await self._request(kind, "GET", base + f"/api/v1/versions/by-hash/{self.rng.choice(self.hashes)[0]}")
        else:
            h, gv = self.rng.choice(self.hashes)
            await self._request(kind, "POST", base + "/api/v1/versions/update-check", json={
                "hashes": [h], "loaders": ["fabric", "forge", "neoforge", "quilt"], "game_versions": [gv]})

    # ---- telemetry -----------------------------------------------------------------------
    async def telemetry(self) -> None:
        route = "telemetry"
        if self.seen_servers and self.rng.random() < self.repeat_share:
            server, route = self.rng.choice(self.seen_servers), "telemetry repeat"
        else:
            server = str(uuid.uuid4())
            if len(self.seen_servers) < 10_000:
                self.seen_servers.append(server)
        mods = [{"slug": s, "version": "1.0.0"} for s in self.rng.sample(self.slugs, min(len(self.slugs), 12))]
        body = telemetry_samples.encode(telemetry_samples.ping(server, mods=mods))
        await self._request(route, "POST", self.urls["telemetry"] + "/api/v1/analytics/submit", data=body,
                            headers={"Content-Type": "application/json"})

    # ---- running -------------------------------------------------------------------------
    async def run(self, seconds: float, session: aiohttp.ClientSession) -> None:
        self.http = session
        pacers = [asyncio.create_task(self._pace(n, self.rates[n], f)) for n, f in
                  (("webhook", self.webhook), ("api", self.api), ("telemetry", self.telemetry))]
        try:
            await asyncio.wait_for(self.stop.wait(), seconds)
        except asyncio.TimeoutError:
            pass
        self.stop.set()
        for p in pacers:
            p.cancel()
        await asyncio.gather(*pacers, return_exceptions=True)
        # Requests in flight finish (a webhook being retried gives up at once: stop is set).
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=30)
