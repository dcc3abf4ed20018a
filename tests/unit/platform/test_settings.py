import msgspec
import pytest

from indexium_platform.settings import Common, SettingsError, load


class Example(Common, frozen=True, kw_only=True):
    port: int = msgspec.field(default=8080, name="PORT")
    secrets: tuple[str, ...] = msgspec.field(name="INDEXIUM_WEBHOOK_SECRET")
    flag: bool = msgspec.field(default=False, name="FLAG")


def test_every_bad_variable_is_named_at_once():
    with pytest.raises(SettingsError) as err:
        load(Example, {"PORT": "eighty", "FLAG": "maybe"})
    text = str(err.value)
    assert "PORT" in text and "FLAG" in text and "INDEXIUM_WEBHOOK_SECRET: required" in text


def test_values_are_converted():
    s = load(Example, {"PORT": "81", "INDEXIUM_WEBHOOK_SECRET": "old, new", "FLAG": "yes",
                       "NATS_URL": "nats://x:1"})
    assert (s.port, s.secrets, s.flag, s.nats_url) == (81, ("old", "new"), True, "nats://x:1")
    assert s.database_url.startswith("postgresql://")


def test_cross_field_checks_stop_start_up():
    with pytest.raises(SettingsError, match="INDEXIUM_LOG_FORMAT"):
        load(Example, {"INDEXIUM_WEBHOOK_SECRET": "s", "INDEXIUM_LOG_FORMAT": "xml"})
