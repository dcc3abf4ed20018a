"""What a GitHub call can fail with. Callers branch on the type, never on message text."""

from __future__ import annotations


class GitHubError(Exception):
    """GitHub answered with an error we do not handle by waiting or retrying."""

    def __init__(self, status: int, message: str, *, op: str = "other"):
        super().__init__(f"GitHub {op}: HTTP {status}: {message}")
        self.status, self.message, self.op = status, message, op

    @property
    def retryable(self) -> bool:
        return self.status == 0 or self.status >= 500


class NotFound(GitHubError):
    """404: the resource does not exist, or the token may not see it."""


class Unauthorized(GitHubError):
    """401 even with a freshly minted credential: the App's key or id is wrong."""


class InstallationUnavailable(GitHubError):
    """No token can be minted: the installation is suspended (403) or gone (404)."""


class RateLimited(GitHubError):
    """Waiting for the quota would take longer than the caller allows; try again at ``retry_at``."""

    def __init__(self, retry_at: float, wait_s: float, *, op: str = "other", reason: str = "primary"):
        super().__init__(429, f"{reason} rate limit; would wait {wait_s:.0f} s", op=op)
        self.retry_at, self.wait_s, self.reason = retry_at, wait_s, reason

    @property
    def retryable(self) -> bool:
        return True
