"""GitHub App authentication: the App's RS256 JWT and cached installation access tokens.

The JWT is signed with pyjwt (cryptography underneath); we never hand-roll crypto.
GitHub wants ``iat`` a little in the past (clock drift) and ``exp`` at most 10 minutes
after ``iat``; we backdate 60 s and live 9 minutes, and reuse one JWT for a minute.
Installation tokens live one hour; they are reused until ``TOKEN_MARGIN_S`` before
expiry and dropped at once when GitHub answers 401 (revoked, or our clock is off).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import jwt

JWT_BACKDATE_S = 60
JWT_LIFETIME_S = 540
JWT_REUSE_S = 60
TOKEN_MARGIN_S = 300  # refresh a token this long before GitHub says it expires


@dataclass(frozen=True)
class AppConfig:
    app_id: int
    private_key: str = field(repr=False)  # PEM
    api_url: str = "https://api.github.com"


def load_private_key(value: str | None, path: str | None) -> str | None:
    """The PEM from INDEXIUM_GITHUB_APP_PRIVATE_KEY or the file named by ..._PATH (not both).

    Environment values often carry the newlines as literal ``\\n``; those are restored.
    Raises ValueError naming the variable when the key is unusable.
    """
    if value and path:
        raise ValueError("set INDEXIUM_GITHUB_APP_PRIVATE_KEY or INDEXIUM_GITHUB_APP_PRIVATE_KEY_PATH, not both")
    if path:
        try:
            value = Path(path).read_text("utf-8")
        except OSError as exc:
            raise ValueError(f"INDEXIUM_GITHUB_APP_PRIVATE_KEY_PATH: cannot read {path}: {exc.strerror}") from None
        name = "INDEXIUM_GITHUB_APP_PRIVATE_KEY_PATH"
    else:
        name = "INDEXIUM_GITHUB_APP_PRIVATE_KEY"
    if not value:
        return None
    pem = value.replace("\\n", "\n").strip() + "\n"
    try:
        jwt.encode({"iss": "0"}, pem, algorithm="RS256")
    except Exception:  # the message of a key parse error may quote key material: keep it out
        raise ValueError(f"{name}: not an RSA private key in PEM format") from None
    return pem


def app_jwt(app_id: int | str, private_key: str, now: float) -> str:
    issued = int(now) - JWT_BACKDATE_S
    claims = {"iat": issued, "exp": issued + JWT_BACKDATE_S + JWT_LIFETIME_S, "iss": str(app_id)}
    return jwt.encode(claims, private_key, algorithm="RS256")


def parse_expiry(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


class AppJwt:
    """One JWT reused for ``JWT_REUSE_S`` (signing costs a millisecond of CPU)."""

    def __init__(self, config: AppConfig, clock: Callable[[], float]):
        self._config, self._clock = config, clock
        self._value: str | None = None
        self._made_at = 0.0

    def get(self) -> str:
        now = self._clock()
        if self._value is None or now - self._made_at > JWT_REUSE_S or now < self._made_at:
            self._value = app_jwt(self._config.app_id, self._config.private_key, now)
            self._made_at = now
        return self._value

    def drop(self) -> None:
        self._value = None


Mint = Callable[[int], Awaitable[tuple[str, float]]]  # installation id -> (token, expires_at)


class InstallationTokens:
    """Installation id -> token, minted once per hour per installation, even under concurrency."""

    def __init__(self, mint: Mint, clock: Callable[[], float], margin_s: float = TOKEN_MARGIN_S):
        self._mint, self._clock, self._margin = mint, clock, margin_s
        self._tokens: dict[int, tuple[str, float]] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self.minted = 0

    async def get(self, installation_id: int) -> str:
        cached = self._fresh(installation_id)
        if cached:
            return cached
        lock = self._locks.setdefault(installation_id, asyncio.Lock())
        async with lock:
            cached = self._fresh(installation_id)
            if cached:
                return cached
            token, expires_at = await self._mint(installation_id)
            self._tokens[installation_id] = (token, expires_at)
            self.minted += 1
            return token

    def _fresh(self, installation_id: int) -> str | None:
        entry = self._tokens.get(installation_id)
        if entry and entry[1] - self._margin > self._clock():
            return entry[0]
        return None

    def invalidate(self, installation_id: int, token: str | None = None) -> None:
        entry = self._tokens.get(installation_id)
        if entry and (token is None or entry[0] == token):
            del self._tokens[installation_id]
