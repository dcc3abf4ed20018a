"""PostgreSQL outages, the operator's dead-letter replay, and the Minecraft version refresh."""

from __future__ import annotations

import asyncio
import json
import time
from importlib import resources

import asyncpg
import pytest

from indexium_db import migrate
from indexium_devstack import jars
from indexium_devstack.embedded import EmbeddedPostgres
from indexium_ops import cli

from .conftest import OUTAGE_RETRY_S


def mod_release(gh, name: str = "sturdy", minecraft: str = ">=1.20"):
    repo = gh.add_repo("team", name)
    return gh.add_release(repo, "1.0.0", [(f"{name}-1.0.0.jar", jars.fabric_jar(name, "1.0.0", minecraft=minecraft))])


async def start_postgres(make, tries: int = 3) -> EmbeddedPostgres:
    """Start, retrying: on a busy machine another process may take a free port first."""
    for attempt in range(tries):
        pg = make(attempt)
        try:
            return await asyncio.to_thread(pg.start)
        except (RuntimeError, TimeoutError):
            if attempt == tries - 1:
                raise
            await asyncio.sleep(0.5)


async def test_postgres_unavailable_spends_no_attempt_and_the_job_is_indexed_when_it_returns(gh, make_indexer, pg_root):
    pg = await start_postgres(lambda i: EmbeddedPostgres(pg_root / f"pg{i}", durable=False))
    try:
        await asyncio.to_thread(pg.create_database, "indexium")
        conn = await asyncpg.connect(pg.dsn("indexium"))
        await migrate.migrate(conn)
        await conn.close()
        # one attempt only: had the outage spent one, the job would be dead-lettered
        indexer = await make_indexer(pg.dsn("indexium"), INDEXIUM_INDEXER_MAX_RETRIES="0")
        await asyncio.to_thread(pg.stop)
        delivery = await indexer.publish(mod_release(gh))
        deadline = time.monotonic() + 20
        while await indexer.metric("indexium_indexer_jobs_total", outcome="outage") < 3:
            assert time.monotonic() < deadline, "the job never met the outage"
            await asyncio.sleep(OUTAGE_RETRY_S)
        await start_postgres(lambda i: pg)  # same port and data: the indexer's pool reconnects
        assert await indexer.outcome(delivery, timeout=20) == "indexed"
        assert await indexer.dead_letters() == []
        assert await indexer.fetchval("SELECT count(*) FROM mod_versions") == 1
        assert await indexer.metric("indexium_indexer_jobs_total", outcome="retry") == 0
    finally:
        await asyncio.to_thread(pg.stop)


async def test_dead_letters_are_listed_and_replayed_through_the_normal_path(
        gh, indexer, nats_url, database_url, monkeypatch, capsys):
    rel = mod_release(gh)
    gh.set_mode(rel.assets[0], "404")  # deleted for a while, say
    delivery = await indexer.publish(rel)
    assert await indexer.outcome(delivery) == "dead_lettered"
    gh.set_mode(rel.assets[0], "normal")
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("NATS_URL", nats_url)

    await asyncio.to_thread(cli.main, ["dead-letters", "list"])
    out = capsys.readouterr().out
    assert "asset_not_found" in out and "1 open dead letter(s)" in out
    (dl,) = await indexer.dead_letters()

    await asyncio.to_thread(cli.main, ["dead-letters", "replay", str(dl["id"])])
    assert f"{dl['id']}: replayed" in capsys.readouterr().out
    deadline = time.monotonic() + 15
    while await indexer.fetchval("SELECT count(*) FROM mod_versions") == 0:
        assert time.monotonic() < deadline, "the replayed job was not indexed"
        await asyncio.sleep(0.05)
    assert await indexer.outcome(delivery) == "indexed"  # the same delivery, now indexed
    await asyncio.to_thread(cli.main, ["dead-letters", "list"])
    assert "0 open dead letter(s)" in capsys.readouterr().out


async def test_minecraft_versions_refresh_is_used_by_the_indexer_and_the_rollup(
        gh, make_indexer, nats_url, database_url, monkeypatch, capsys, tmp_path):
    snapshot = json.loads((resources.files("indexium_jar") / "data" / "minecraft_versions.json").read_text("utf-8"))
    newer = {"id": "26.2", "type": "release", "url": "https://piston-meta.mojang.com/x.json",
             "time": "2026-06-16T10:00:00+00:00", "releaseTime": "2026-06-16T10:00:00+00:00"}
    manifest = {"latest": {"release": "26.2"}, "versions": [newer, *snapshot["versions"]]}
    path = tmp_path / "version_manifest_v2.json"
    path.write_text(json.dumps(manifest))
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("NATS_URL", nats_url)
    await asyncio.to_thread(cli.main, ["minecraft-versions", "refresh", "--file", str(path)])
    assert f"{len(snapshot['versions']) + 1} Minecraft versions stored (newest release 26.2, 1 new)" in (
        capsys.readouterr().out)

    # a list that would lose stored versions is refused unless forced
    path.write_text(json.dumps({"versions": [newer]}))
    with pytest.raises(SystemExit, match="lacks"):
        await asyncio.to_thread(cli.main, ["minecraft-versions", "refresh", "--file", str(path)])

    indexer = await make_indexer(database_url)  # reads the table when it starts
    delivery = await indexer.publish(mod_release(gh, minecraft=">=26.1"))
    assert await indexer.outcome(delivery) == "indexed"
    file_versions = await indexer.fetchval("SELECT game_versions FROM version_files")
    assert file_versions == ["26.2", "26w14a", "26.1"]  # 26.2 from the refreshed table, newest first
    assert await indexer.fetchval("SELECT game_versions FROM mods") == file_versions
