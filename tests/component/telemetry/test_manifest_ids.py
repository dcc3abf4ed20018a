"""Pings name mods by the id their loader reports; the service finds the Indexium mod behind it."""

from __future__ import annotations

import uuid

import asyncpg
from aiohttp.test_utils import TestClient, TestServer

from indexium_devstack import telemetry_samples as samples
from indexium_db.queries import samples as samples_q
from indexium_telemetry.app import create_app

from .conftest import make_settings, stream_events
from indexium_contracts import telemetry

URL = "/api/v1/analytics/submit"


def record(loader: str, mod_id: str) -> dict:
    return {"loader": loader, "manifest_path": "fabric.mod.json", "mod_id": mod_id, "version": "1.0"}


async def test_manifest_ids_resolve_to_the_mod_even_with_a_suffixed_slug(nats_url, database_url, mods, clock):
    conn = await asyncpg.connect(database_url)
    try:
        # "foo" was taken as a slug by an older mod with another manifest id; this mod got "foo-owner".
        older = await samples_q.seed_mod(conn, "foo", "FooLegacy", n=1)
        suffixed = await samples_q.seed_mod(conn, "foo-owner", "foo", n=2)
        # A multi-loader jar: its Forge manifest names the mod differently from its Fabric one.
        multi = await samples_q.seed_mod(conn, "multi", "multi", n=3)
        await samples_q.seed_file(conn, multi, [record("fabric", "multi"), record("forge", "multi_forge")])
        # A newcomer republishing jars with sodium's id does not take sodium's servers.
        thief = await samples_q.seed_mod(conn, "sodium-copy", "sodium", n=4)
        await samples_q.seed_file(conn, thief, [record("fabric", "sodium")])
        # Ids only found in a hidden release are not claimed.
        await samples_q.seed_file(conn, multi, [record("fabric", "multi_old")], tag="v0", hidden=True)
    finally:
        await conn.close()

    app = create_app(make_settings(nats_url, database_url), clock=clock)
    async with TestClient(TestServer(app)) as client:
        resp = await client.post(URL, data=samples.encode(samples.ping(uuid.uuid4(), mods=[
            {"manifest_id": "foo", "version": "2.0"}, {"manifest_id": "multi_forge"},
            {"manifest_id": "sodium", "version": "0.5.8"}, {"manifest_id": "FooLegacy"},
            {"manifest_id": "multi"}, {"manifest_id": "multi_old"}, {"manifest_id": "minecraft"},
            {"slug": "jei"}])), headers={"Content-Type": "application/json"})
        assert resp.status == 202, await resp.text()
        body = await resp.json()
    # multi counted once although named twice; multi_old and minecraft unknown.
    assert (body["counted"], body["unknown"]) == (5, 2)
    [msg] = await stream_events(nats_url)
    event = telemetry.decoder.decode(msg.data)
    assert [(m.mod_id, m.version) for m in event.mods] == [
        (suffixed, "2.0"), (multi, None), (mods["sodium"], "0.5.8"), (older, None), (mods["jei"], None)]
    assert thief not in {m.mod_id for m in event.mods}


async def test_a_real_jvm_ping_is_accepted_and_normalized(client, nats_url):
    body = samples.ping(uuid.uuid4(), protocol=..., os="Windows 11", arch="amd64", loader="NeoForge",
                        java_version="1.8.0_372", mods=[{"manifest_id": "sodium"}])
    resp = await client.post(URL, data=samples.encode(body), headers={"Content-Type": "application/json"})
    assert resp.status == 202, await resp.text()
    [msg] = await stream_events(nats_url)
    event = telemetry.decoder.decode(msg.data)
    assert (event.os, event.arch, event.loader, event.java_version) == ("windows", "x86_64", "neoforge", "8")
