"""Fault injection and rate limits of ``FakeGitHub``: what tests turn on to see the
indexer cope with a failing or throttling GitHub."""

from __future__ import annotations

from .faults import MODES, WHERES, QueuedFailure
from .models import Asset


class FaultControls:
    """Mixin of ``FakeGitHub``; drives its ``faults`` (``Faults``) and ``limiter``."""

    def fail_next(
        self,
        asset: Asset | int | None = None,
        status: int = 503,
        count: int = 3,
        retry_after: int | float | None = None,
        *,
        where: str = "cdn",
        body: str | None = None,
    ) -> None:
        """The next ``count`` matching requests answer ``status`` (with ``Retry-After`` if
        given). ``asset=None`` matches any. ``where``: 'cdn' (default), 'download' (the
        github-host redirector / asset API octet-stream) or 'api' (every API route)."""
        if where not in WHERES:
            raise ValueError(f"where must be one of {sorted(WHERES)}")
        aid = asset if isinstance(asset, int) or asset is None else asset.id
        self.faults.queued.append(QueuedFailure(status, count, retry_after, aid, where, body))

    def set_mode(self, asset: Asset | int, mode: str) -> None:
        """Per-asset CDN behaviour: normal, no_range, 404, expire_once, expired, truncate."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {sorted(MODES)}")
        aid = asset if isinstance(asset, int) else asset.id
        if mode == "normal":
            self.faults.modes.pop(aid, None)
        else:
            self.faults.modes[aid] = mode

    def redirect_asset_to(self, asset: Asset | int, url: str | None) -> None:
        """Make the asset's download redirect go to ``url`` (``None`` restores the CDN)."""
        aid = asset if isinstance(asset, int) else asset.id
        if url is None:
            self.faults.redirects.pop(aid, None)
        else:
            self.faults.redirects[aid] = url

    def set_latency(
        self, seconds: float, *, asset: Asset | int | None = None, where: str = "all"
    ) -> None:
        """Artificial delay before answering: per asset (CDN + redirector) or per host part."""
        if asset is not None:
            aid = asset if isinstance(asset, int) else asset.id
            self.faults.asset_latency[aid] = seconds
            return
        targets = WHERES if where == "all" else {where}
        for w in targets:
            self.faults.latency[w] = seconds

    def reset_faults(self) -> None:
        self.faults.reset()
        self.limiter.secondary_pending = 0


class RateLimitControls:
    """Mixin of ``FakeGitHub``; drives its ``limiter`` (``RateLimiter``)."""

    def set_rate_limit(
        self,
        limit: int,
        remaining: int | None = None,
        reset_in_seconds: float = 3600.0,
        *,
        status: int | None = None,
    ) -> None:
        """Set the ``core`` bucket; when exhausted, API calls answer ``status`` (403 default,
        or 429) until the reset time, then the bucket refills."""
        self.limiter.set(limit, remaining, reset_in_seconds, status=status)

    def secondary_limit_next(self, n: int = 1, retry_after: int = 60, status: int = 403) -> None:
        """The next ``n`` API calls hit a secondary rate limit (``Retry-After`` seconds)."""
        self.limiter.secondary_pending = n
        self.limiter.secondary_retry_after = retry_after
        self.limiter.secondary_status = status
