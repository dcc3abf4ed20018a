"""GitHub App client shared by every Indexium caller of the GitHub REST API.

* :mod:`.auth` — the App's RS256 JWT and cached installation access tokens;
* :mod:`.ratelimit` — what GitHub's rate-limit headers say, and how long to wait;
* :mod:`.client` — :class:`GitHubClient`: one per process, honours primary and
  secondary limits (waits, never hammers), conditional requests with an ETag cache
  (a 304 spends no quota), ``Link`` pagination, quota as a metric.
"""

from .auth import AppConfig, app_jwt, load_private_key
from .client import GitHubClient, Response
from .errors import GitHubError, InstallationUnavailable, NotFound, RateLimited, Unauthorized
from .links import next_link, parse_links
from .metrics import ClientMetrics

__all__ = [
    "AppConfig",
    "ClientMetrics",
    "GitHubClient",
    "GitHubError",
    "InstallationUnavailable",
    "NotFound",
    "RateLimited",
    "Response",
    "Unauthorized",
    "app_jwt",
    "load_private_key",
    "next_link",
    "parse_links",
]
