"""The GitHub App side of ``FakeGitHub``: its key, installations and installation tokens,
and the token checks the routes make."""

from __future__ import annotations

from collections.abc import Iterable

from aiohttp import web

from .models import Installation, Repo, Token, User


class Installations:
    """Mixin of ``FakeGitHub``; uses its ``app`` (``AppRegistry``), ``state``, ``now`` and
    ``_as_repo``."""

    def generate_app_key(self, app_id: int | None = None, bits: int = 2048) -> tuple[int, str]:
        """Create (or replace) the App's RSA key; returns ``(app_id, private_key_pem)``."""
        return self.app.generate_key(app_id, bits)

    @property
    def app_id(self) -> int:
        return self.app.app_id

    @property
    def token_lifetime(self) -> float:
        return self.app.token_lifetime

    @token_lifetime.setter
    def token_lifetime(self, seconds: float) -> None:
        self.app.token_lifetime = seconds

    def add_installation(
        self,
        repos: Iterable[Repo | str] = (),
        *,
        account: User | str | None = None,
        installation_id: int | None = None,
        permissions: dict[str, str] | None = None,
        repository_selection: str = "selected",
        events: Iterable[str] = ("release", "repository"),
    ) -> Installation:
        repos = [self._as_repo(r) for r in repos]
        if account is None:
            account = repos[0].owner if repos else self.state.user("modder")
        elif isinstance(account, str):
            account = self.state.user(account)
        inst = Installation(
            id=installation_id if installation_id is not None else self.state.next_installation_id(),
            account=account,
            repos=repos,
            repository_selection=repository_selection,
            created_at=self.now(),
            events=list(events),
        )
        if permissions is not None:
            inst.permissions = dict(permissions)
        self.state.installations[inst.id] = inst
        return inst

    def issue_token(self, installation: Installation | int, lifetime: float | None = None) -> str:
        """Mint an installation token directly (what POST .../access_tokens returns)."""
        iid = installation if isinstance(installation, int) else installation.id
        return self.app.mint_token(iid, lifetime).token

    def expire_tokens(self) -> None:
        for tok in self.state.tokens.values():
            tok.expires_at = self.now() - 1

    @property
    def tokens(self) -> dict[str, Token]:
        return self.state.tokens

    # ---- auth helpers used by routes --------------------------------------------------------
    def _token_has_repo(self, token: Token | None, repo: Repo) -> bool:
        """Whether an installation token grants access to the repository itself."""
        if token is None:
            return False
        inst = self.state.installations.get(token.installation_id)
        if inst is None or repo not in inst.repos:
            return False
        return token.repository_ids is None or repo.id in token.repository_ids

    def _token_sees(self, token: Token | None, repo: Repo) -> bool:
        return not repo.private or self._token_has_repo(token, repo)

    def _can_see(self, request: web.Request, repo: Repo) -> bool:
        try:
            token = self.app.token_from_header(request.headers.get("Authorization"))
        except Exception:
            return False
        return self._token_has_repo(token, repo)
