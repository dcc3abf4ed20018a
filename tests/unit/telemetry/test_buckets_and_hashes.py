"""Time buckets, the salted hash, settings and the mod catalogue (pure)."""

import hashlib
import uuid
from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from indexium_contracts import registry, telemetry
from indexium_platform.settings import SettingsError, load
from indexium_telemetry.catalogue import ModCatalogue
from indexium_telemetry.protocol import ModEntry
from indexium_telemetry.salt import salt_key, seconds_left, server_hash
from indexium_telemetry.settings import Settings


def test_utc_day_is_the_utc_calendar_day_whatever_the_offset():
    assert telemetry.utc_day(datetime(2025, 3, 14, 23, 59, 59, 999999, tzinfo=UTC)) == date(2025, 3, 14)
    assert telemetry.utc_day(datetime(2025, 3, 15, tzinfo=UTC)) == date(2025, 3, 15)
    # 01:30 in UTC+2 is 23:30 UTC the day before.
    assert telemetry.utc_day(datetime(2025, 3, 15, 1, 30, tzinfo=timezone(timedelta(hours=2)))) == date(2025, 3, 14)
    with pytest.raises(ValueError):
        telemetry.utc_day(datetime(2025, 3, 15))


def test_day_bounds_are_half_open_utc_midnights():
    start, end = telemetry.day_bounds(date(2025, 3, 14))
    assert start == datetime(2025, 3, 14, tzinfo=UTC) and end - start == timedelta(days=1)
    assert telemetry.utc_day(start) == date(2025, 3, 14) and telemetry.utc_day(end) == date(2025, 3, 15)


def test_server_hash_is_sha256_of_the_uuid_text_and_the_salt():
    u, salt = uuid.UUID("0f8fad5b-d9cb-469f-a165-70867728950e"), bytes(range(32))
    assert server_hash(u, salt) == hashlib.sha256(b"0f8fad5b-d9cb-469f-a165-70867728950e" + salt).digest()
    assert server_hash(u, salt) != server_hash(u, bytes(32))
    assert len(server_hash(u, salt)) == 32


def test_salt_keys_and_ttl_end_with_the_day():
    assert salt_key(date(2025, 3, 14)) == "2025-03-14"
    assert seconds_left(datetime(2025, 3, 14, 23, 0, tzinfo=UTC), date(2025, 3, 14)) == 3600
    assert seconds_left(datetime(2025, 3, 14, 23, 59, 59, 900000, tzinfo=UTC), date(2025, 3, 14)) == 1.0


def test_contract_round_trip_and_registry():
    ev = telemetry.PingAccepted(ping_id=uuid.uuid4(), received_at="2025-03-14T12:00:00+00:00",
                                server_hash=bytes(32), mods=[telemetry.ModUse(uuid.uuid4(), "1.0")],
                                game_version="1.20.1", loader="fabric", java_version="21", os="linux",
                                arch="x86_64", core_count=4)
    assert telemetry.decoder.decode(telemetry.encoder.encode(ev)) == ev
    assert telemetry.STREAM in registry.STREAMS and telemetry.WRITER in registry.CONSUMERS
    assert set(telemetry.BUCKETS) <= set(registry.BUCKETS)
    from nats.js import api
    assert all(b.config(replicas=1).storage == api.StorageType.MEMORY for b in telemetry.BUCKETS)


def test_settings_roles_and_limits():
    assert load(Settings, {}).roles == ("http", "writer", "aggregator")
    assert load(Settings, {"INDEXIUM_TELEMETRY_ROLES": "writer"}).has("writer")
    defaults = load(Settings, {})
    assert (defaults.new_servers_per_prefix_hour, defaults.qualifying_span_s, defaults.trusted_proxies) == (
        32, 1500.0, ())
    assert load(Settings, {"INDEXIUM_TELEMETRY_TRUSTED_PROXIES": "10.0.0.0/8,2001:db8::/32"}).trusted_proxies == (
        "10.0.0.0/8", "2001:db8::/32")
    for env in ({"INDEXIUM_TELEMETRY_ROLES": "http,cron"}, {"INDEXIUM_TELEMETRY_RATE_LIMIT_SECONDS": "7200"},
                {"INDEXIUM_TELEMETRY_MAX_BODY_BYTES": "10"}, {"INDEXIUM_TELEMETRY_WRITER_BATCH": "0"},
                {"INDEXIUM_TELEMETRY_NEW_SERVERS_PER_PREFIX_HOUR": "0"},
                {"INDEXIUM_TELEMETRY_TRUSTED_PROXIES": "10.0.0.0/8,not-a-cidr"},
                {"INDEXIUM_TELEMETRY_QUALIFYING_SPAN_SECONDS": "0"},
                {"INDEXIUM_TELEMETRY_QUALIFYING_SPAN_SECONDS": "86400"}):
        with pytest.raises(SettingsError):
            load(Settings, env)


async def test_catalogue_resolves_slugs_and_ids_and_counts_unknown():
    cat = ModCatalogue()
    a, b = uuid.uuid4(), uuid.uuid4()

    assert not cat.loaded
    assert cat.replace([{"id": a, "slug": "sodium"}, {"id": b, "slug": "jei"}],
                       [{"manifest_id": "sodium", "id": a}, {"manifest_id": "JourneyMap", "id": b}]) == 2
    assert cat.loaded
    mods, unknown = cat.resolve_all([ModEntry(slug="sodium", version="1"), ModEntry(mod_id=b),
                                     ModEntry(slug="nope"), ModEntry(mod_id=uuid.uuid4()),
                                     ModEntry(mod_id=a, version="2")])
    assert mods == [(a, "1"), (b, None)] and unknown == 2
    mods, unknown = cat.resolve_all([ModEntry(manifest_id="journeymap", version="5"),
                                     ModEntry(manifest_id="sodium"), ModEntry(manifest_id="minecraft")])
    assert mods == [(b, "5"), (a, None)] and unknown == 1
