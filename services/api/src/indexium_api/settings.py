"""API settings, decoded once at start-up."""

import msgspec

from indexium_platform.settings import Common


class Settings(Common, frozen=True, kw_only=True):
    port: int = msgspec.field(default=8080, name="PORT")
    # A read replica for every query when set; DATABASE_URL otherwise.
    database_read_url: str | None = msgspec.field(default=None, name="DATABASE_READ_URL")
    max_limit: int = msgspec.field(default=100, name="INDEXIUM_API_MAX_LIMIT")
    default_limit: int = msgspec.field(default=20, name="INDEXIUM_API_DEFAULT_LIMIT")

    @property
    def read_url(self) -> str:
        return self.database_read_url or self.database_url
