"""Fault injection: queued failures, per-asset CDN modes, redirects elsewhere, latency."""

from __future__ import annotations

from dataclasses import dataclass, field

# Per-asset CDN behaviours (``FakeGitHub.set_mode``).
MODES = {
    "normal",  # honour Range, 200/206/416 like the real CDN
    "no_range",  # ignore Range: always 200 with the full body, no Accept-Ranges
    "404",  # asset gone: download URL, asset API redirect and CDN all answer 404
    "expire_once",  # first CDN hit answers 403 as if the signed URL had expired
    "expired",  # every CDN hit answers 403 (signature expired)
    "truncate",  # full Content-Length announced, half the body sent, connection dropped
}

WHERES = {"cdn", "download", "api"}


@dataclass
class QueuedFailure:
    status: int
    remaining: int
    retry_after: int | float | None = None
    asset_id: int | None = None  # None = any asset / any request on that host
    where: str = "cdn"
    body: str | None = None


@dataclass
class Faults:
    queued: list[QueuedFailure] = field(default_factory=list)
    modes: dict[int, str] = field(default_factory=dict)
    redirects: dict[int, str] = field(default_factory=dict)
    latency: dict[str, float] = field(default_factory=lambda: {"cdn": 0.0, "download": 0.0, "api": 0.0})
    asset_latency: dict[int, float] = field(default_factory=dict)

    def take(self, where: str, asset_id: int | None) -> QueuedFailure | None:
        """Pop one queued failure matching this request (asset-specific ones first)."""
        for specific in (True, False):
            for f in self.queued:
                if f.where != where or f.remaining <= 0:
                    continue
                if specific and (f.asset_id is None or f.asset_id != asset_id):
                    continue
                if not specific and f.asset_id is not None:
                    continue
                f.remaining -= 1
                self.queued = [q for q in self.queued if q.remaining > 0]
                return f
        return None

    def mode(self, asset_id: int) -> str:
        return self.modes.get(asset_id, "normal")

    def delay(self, where: str, asset_id: int | None = None) -> float:
        d = self.latency.get(where, 0.0)
        if asset_id is not None:
            d += self.asset_latency.get(asset_id, 0.0)
        return d

    def reset(self) -> None:
        self.queued.clear()
        self.modes.clear()
        self.redirects.clear()
        self.asset_latency.clear()
        for k in self.latency:
            self.latency[k] = 0.0
