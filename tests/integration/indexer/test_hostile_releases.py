"""Signed releases with hostile fields, on real JetStream and PostgreSQL: each is either indexed
(text that is only shown loses its NUL characters) or a permanent, named dead letter on the
first attempt with a reason its author can read — never a crash retried as internal_error."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

from indexium_contracts import github, ingest
from indexium_contracts.ingest import ReleaseReceived
from indexium_devstack import jars
from indexium_ops import cli


async def publish_payload(indexer, payload: dict, delivery_id: str) -> str:
    body = json.dumps(payload).encode()
    event = ReleaseReceived(delivery_id=delivery_id, received_at=datetime.now(UTC).isoformat(),
                            webhook=github.decode_webhook("release", body))
    await indexer.js.publish(ingest.RELEASE, ingest.encoder.encode(event), headers={"Nats-Msg-Id": delivery_id})
    return delivery_id


def payload_of(gh, name: str, tag: str = "1.0.0") -> dict:
    repo = gh.add_repo("team", name)
    release = gh.add_release(repo, tag, [(f"{name}-{tag}.jar", jars.fabric_jar(name, "1.0.0"))])
    return gh.release_payload(release)


async def test_an_asset_url_with_a_backslash_is_a_named_dead_letter_at_once(gh, indexer):
    payload = payload_of(gh, "slashed")
    asset = payload["release"]["assets"][0]
    # A backslash in the authority: "https://evil.example\@127.0.0.1:port/..." (no URL parser agrees
    # on where its host is; yarl refuses it with a ValueError).
    asset["browser_download_url"] = asset["browser_download_url"].replace("://", "://evil.example\\@", 1)
    delivery = await publish_payload(indexer, payload, "d-backslash")
    assert await indexer.outcome(delivery) == "dead_lettered"
    (dl,) = await indexer.dead_letters()
    assert (dl["category"], dl["attempts"]) == ("bad_asset_url", 1)
    assert "slashed-1.0.0.jar" in dl["error"] and "download URL" in dl["error"]
    assert await indexer.fetchval("SELECT count(*) FROM job_attempts") == 0


async def test_nul_in_shown_text_is_stripped_and_the_release_indexed(gh, indexer):
    payload = payload_of(gh, "nully")
    payload["release"]["name"] = "Nully\u0000 1.0"
    payload["release"]["body"] = "Fixes\u0000 a crash.\u0000"
    delivery = await publish_payload(indexer, payload, "d-nul")
    assert await indexer.outcome(delivery) == "indexed"
    row = await indexer.fetch("SELECT name, changelog FROM mod_versions")
    assert [tuple(r) for r in row] == [("Nully 1.0", "Fixes a crash.")]
    assert await indexer.dead_letters() == []


async def test_a_tag_too_long_is_refused_with_a_readable_reason(gh, indexer, nats_url, database_url,
                                                                 monkeypatch, capsys):
    payload = payload_of(gh, "longtag")
    payload["release"]["tag_name"] = "v" + "1" * 5004
    delivery = await publish_payload(indexer, payload, "d-longtag")
    assert await indexer.outcome(delivery) == "dead_lettered"
    (dl,) = await indexer.dead_letters()
    assert (dl["category"], dl["attempts"]) == ("bad_tag", 1)
    assert "5005 characters" in dl["error"] and "128" in dl["error"]
    assert await indexer.fetchval("SELECT count(*) FROM mod_versions") == 0
    (skip,) = await indexer.fetch("SELECT asset_name, code, reason FROM release_asset_skips")
    assert (skip["asset_name"], skip["code"]) == ("longtag-1.0.0.jar", "bad_tag")  # the author's dashboard
    assert skip["reason"] == dl["error"]
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("NATS_URL", nats_url)
    await asyncio.to_thread(cli.main, ["dead-letters", "list"])
    out = capsys.readouterr().out
    assert "bad_tag" in out and "The release tag is 5005 characters long" in out


async def test_a_tag_with_nul_is_refused_with_a_readable_reason(gh, indexer):
    payload = payload_of(gh, "nultag")
    payload["release"]["tag_name"] = "1.0\u00000"
    delivery = await publish_payload(indexer, payload, "d-nultag")
    assert await indexer.outcome(delivery) == "dead_lettered"
    (dl,) = await indexer.dead_letters()
    assert (dl["category"], dl["attempts"]) == ("bad_tag", 1)
    assert "control characters" in dl["error"]


async def test_nul_in_the_jar_manifest_is_stripped_from_the_card_and_the_release_indexed(gh, indexer):
    repo = gh.add_repo("team", "nulcard")
    jar = jars.fabric_jar("nulcard", "1.0.0", name="Nul\u0000 Card", description="Shown\u0000 text.",
                          authors=("Some\u0000one",))
    delivery = await indexer.publish(gh.add_release(repo, "1.0.0", [("nulcard-1.0.0.jar", jar)]))
    assert await indexer.outcome(delivery) == "indexed"
    row = await indexer.fetch("SELECT name, description, authors FROM mods")
    assert [tuple(r) for r in row] == [("Nul Card", "Shown text.", ["Someone"])]
    assert await indexer.dead_letters() == []


async def test_a_value_postgresql_refuses_is_a_permanent_dead_letter_not_a_retried_crash(gh, indexer):
    # An asset name with NUL passes every check before the database (the URL is fine).
    payload = payload_of(gh, "nulname")
    payload["release"]["assets"][0]["name"] = "nulname\u0000-1.0.0.jar"
    delivery = await publish_payload(indexer, payload, "d-nulname")
    assert await indexer.outcome(delivery) == "dead_lettered"
    (dl,) = await indexer.dead_letters()
    assert (dl["category"], dl["attempts"]) == ("unstorable_release", 1)
    assert "cannot be stored" in dl["error"]
    assert await indexer.fetchval("SELECT count(*) FROM mod_versions") == 0
