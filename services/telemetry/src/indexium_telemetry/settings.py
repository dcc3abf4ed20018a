"""Telemetry settings, decoded once at start-up."""

import msgspec

from indexium_platform.settings import Common


class Settings(Common, frozen=True, kw_only=True):
    port: int = msgspec.field(default=8082, name="PORT")
