"""The README (issue 35): read at onboarding and backfill, conditional on the stored ETag (an
unchanged README is one 200 then 304s at the fake GitHub, which bills no quota for a 304),
read again on a push to the default branch and on "Check again", rendered and sanitized,
and its plain text in mods.readme_text (what search reads), announced as mod_changed.v1."""

from __future__ import annotations

import nats

from indexium_contracts import ingest, versions
from indexium_devstack import jars

README_ROUTE = "GET /repos/{owner}/{repo}/readme"
README = """# Harvest Almanac

![logo](docs/logo.png)

Crops grow by the **almanac's** seasons. See [setup](docs/SETUP.md).

<img src="x" onerror="alert(1)"> <script>alert(2)</script>
"""


def readme_statuses(gh) -> list[int]:
    return [status for route, status in gh.api_statuses if route == README_ROUTE]


def push_payload(gh, repo, inst, *, modified=()) -> dict:
    return {"ref": "refs/heads/main", "before": "a" * 40, "after": "b" * 40, "repository": gh.repo_json(repo),
            "installation": {"id": inst.id},
            "commits": [{"id": "b" * 40, "added": [], "modified": list(modified), "removed": []}]}


async def test_readme_read_once_then_304s_and_again_when_pushed(gh, stack, db, eventually, nats_url):
    repo = gh.add_repo("fieldnotes/harvest-almanac", description="Crops")
    gh.set_file(repo, "README.md", README)
    gh.add_release(repo, "v1.0.0", [("almanac-1.0.0.jar", jars.fabric_jar("almanac", "1.0.0", "Harvest Almanac"))])
    inst = gh.add_installation([repo])
    nc = await nats.connect(nats_url)
    announced: list[versions.ModChanged] = []

    async def on_event(msg):
        event = versions.decoder.decode(msg.data)
        if isinstance(event, versions.ModChanged) and event.cause in ("readme", "push", "backfill", "catch_up"):
            announced.append(event)

    await nc.subscribe(versions.MOD_CHANGED, cb=on_event)
    try:
        await stack.send("installation", gh.installation_payload(inst, "created"))
        assert await eventually(lambda: db.fetchval(
            "SELECT backfill_state = 'done' FROM github_repositories WHERE github_repo_id = $1", repo.id))
        assert await eventually(lambda: db.fetchval("SELECT listed FROM mods WHERE github_repo_id = $1", repo.id))
        # onboarding read it (200), backfill asked again with the ETag (304): one billed request
        assert await eventually(lambda: len(readme_statuses(gh)) >= 2)
        assert readme_statuses(gh) == [200, 304]
        row = await db.fetchrow("SELECT * FROM repository_readmes WHERE github_repo_id = $1", repo.id)
        assert row["etag"] and row["path"] == "README.md" and row["branch"] == "main"
        assert row["raw_text"] == README
        html = row["html"]
        assert "<h2>Harvest Almanac</h2>" in html
        assert 'src="https://raw.githubusercontent.com/fieldnotes/harvest-almanac/main/docs/logo.png"' in html
        assert 'href="https://github.com/fieldnotes/harvest-almanac/blob/main/docs/SETUP.md"' in html
        assert "onerror" not in html and "<script" not in html
        # the mod row was written by the release indexer after the README was read: it took the text
        text = await db.fetchval("SELECT readme_text FROM mods WHERE github_repo_id = $1", repo.id)
        assert text.startswith("Harvest Almanac logo Crops grow by the almanac's seasons.")

        # a push that did not change the README: one more 304
        await stack.send("push", push_payload(gh, repo, inst, modified=["src/Main.java"]), delivery_id="push-1")
        assert await eventually(lambda: len(readme_statuses(gh)) >= 3)
        assert readme_statuses(gh) == [200, 304, 304]

        # a push that changed it: a 200, the new text reaches mods.readme_text, and the mod is announced
        gh.set_file(repo, "README.md", "# Harvest Almanac\n\nNow with quokkas.")
        await stack.send("push", push_payload(gh, repo, inst, modified=["README.md"]), delivery_id="push-2")
        assert await eventually(lambda: db.fetchval(
            "SELECT readme_text = 'Harvest Almanac Now with quokkas.' FROM mods WHERE github_repo_id = $1", repo.id))
        assert readme_statuses(gh) == [200, 304, 304, 200]
        assert await eventually(lambda: any(e.cause == "push" for e in announced))
        assert await db.fetchval("SELECT outcome FROM webhook_deliveries WHERE delivery_id = 'push-2'") == "applied"

        # "Check again" asks too (and backfill after it): 304s
        await _catch_up(nc, repo, inst)
        assert await eventually(lambda: len(readme_statuses(gh)) >= 5, timeout=20)
        assert readme_statuses(gh)[4:] == [304] * len(readme_statuses(gh)[4:])
    finally:
        await nc.drain()


async def _catch_up(nc, repo, inst) -> None:
    """What the dashboard's "Check again" publishes (indexium_api.site.dashboard)."""
    from datetime import UTC, datetime

    event = ingest.CatchUpRequested(delivery_id=f"catch-up:{repo.id}:test",
                                    received_at=datetime.now(UTC).isoformat().replace("+00:00", "Z"),
                                    github_repo_id=repo.id, installation_id=inst.id, requested_by="test")
    js = nc.jetstream()
    await js.publish(ingest.CATCH_UP, ingest.encoder.encode(event))


async def test_a_repository_without_a_readme_stores_none(gh, stack, db, eventually):
    repo = gh.add_repo("fieldnotes/bare")
    gh.add_release(repo, "v1.0.0", [("bare-1.0.0.jar", jars.fabric_jar("bare", "1.0.0", "Bare"))])
    inst = gh.add_installation([repo])
    await stack.send("installation", gh.installation_payload(inst, "created"))
    row = await eventually(lambda: db.fetchrow("SELECT * FROM repository_readmes WHERE github_repo_id = $1", repo.id))
    assert row["path"] == "" and row["html"] == "" and row["etag"] is None
    assert await eventually(lambda: db.fetchval("SELECT listed FROM mods WHERE github_repo_id = $1", repo.id))
    assert await db.fetchval("SELECT readme_text FROM mods WHERE github_repo_id = $1", repo.id) == ""
