"""Migration 0025_project_identity on rows stored before it: every project keeps its id, public
id and slug and gets the identity key its next release's files carry, so that release's first mod
goes on in it and a second mod of the release becomes a project of its own. The key rules in SQL
(the migration's) and in Python (``indexium_jar.identity``, every key written since) agree."""

from __future__ import annotations

import hashlib
import itertools
import json
import os

import aiohttp
import asyncpg
import msgspec
import pytest

from indexium_contracts import github

from indexium_db import migrate
from indexium_db.pool import create_pool
from indexium_db.queries import github as github_q, telemetry as telemetry_q
from indexium_devstack import jars
from indexium_indexer.github import sync
from indexium_indexer.release.job import ReleaseIndexer
from indexium_jar import identity
from indexium_jar.http.remote import DownloadPolicy

from .conftest import Releases

_names = itertools.count(1)


@pytest.fixture
async def before_0025(pg_server):
    """A database migrated up to (not including) 0025, with ``schema_migrations`` as the runner keeps it."""
    name = f"indexium_ident{os.getpid()}_{next(_names)}"
    admin = await asyncpg.connect(pg_server.admin_dsn)
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
    await admin.execute(f'CREATE DATABASE "{name}"')
    db = await asyncpg.connect(pg_server.dsn(name))
    try:
        await db.execute("CREATE TABLE schema_migrations (version text PRIMARY KEY,"
                         " applied_at timestamptz NOT NULL DEFAULT now())")
        for version, sql in migrate.available():
            if version >= "0025":
                break
            await db.execute(sql)
            await db.execute("INSERT INTO schema_migrations (version) VALUES ($1)", version)
        yield db, pg_server.dsn(name)
    finally:
        await db.close()
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def _project(db, repo_id: int, slug: str, manifest_id: str, files: list[tuple[str, str | None, dict | None]],
                   project_type: str = "mod", owner: int | None = None) -> dict:
    """A project as the release job wrote it before 0025: one version, these files
    (filename, primary manifest id or None, pack record or None), each id claimed (0015)."""
    if owner is not None:
        await db.execute("INSERT INTO authors (github_id, login) VALUES ($1, 'mono') ON CONFLICT DO NOTHING", owner)
    mod = await db.fetchrow(
        "INSERT INTO mods (github_repo_id, repo_full_name, slug, manifest_id, name, project_type, author_github_id)"
        " VALUES ($1, 'mono/monorepo', $2, $3, $3::text, $4, $5) RETURNING id, public_id, team_id, slug", repo_id,
        slug, manifest_id, project_type, owner)
    for _, mid, _ in files:
        if mid:
            await db.execute("INSERT INTO mod_id_claims (mod_id, loader, manifest_mod_id, state, asset_created_at)"
                             " VALUES ($1, 'fabric', lower($2), 'holder', now() - interval '1 day')", mod["id"], mid)
    vid = await db.fetchval(
        "INSERT INTO mod_versions (mod_id, version_number, github_release_id, tag_name, published_at, status)"
        " VALUES ($1, 'v1.0.0', 1, 'v1.0.0', now() - interval '1 day', 'public') RETURNING id", mod["id"])
    for n, (filename, mid, pack) in enumerate(files):
        manifests = f'[{{"loader": "fabric", "mod_id": "{mid}", "version": "1.0.0"}}]' if mid else "[]"
        await db.execute(
            "INSERT INTO version_files (version_id, github_asset_id, filename, url, size, manifests, is_primary,"
            " pack, project_type) VALUES ($1, $2, $3, 'https://github.com/x', 1, $4::jsonb, $5, $6::jsonb, $7)",
            vid, repo_id * 100 + n, filename, manifests, n == 0, None if pack is None else json.dumps(pack),
            None if pack is None else project_type)
    return dict(mod)


async def test_existing_projects_keep_their_ids_and_slugs_and_a_later_release_splits_off_the_second_mod(
        before_0025, gh):
    db, dsn = before_0025
    repo = gh.add_repo("mono", "monorepo")
    # Before 0025 one release of two mods was one project, named after the first jar.
    mono = await _project(db, repo.id, "mono_alpha", "mono_alpha",
                          [("mono_alpha-1.0.0.jar", "mono_alpha", None), ("mono_beta-1.0.0.jar", "mono_beta", None)],
                          owner=repo.owner.id)
    forge_only = await _project(db, 7001, "gadget", "Gadget_Forge", [("gadget.jar", "Gadget_Forge", None)])
    pack = await _project(db, 7002, "crisp-textures", "crisp-textures",
                          [("Crisp-1.2.zip", None, {"project_type": "resourcepack", "loaders": ["minecraft"],
                                                    "manifest_path": "pack.mcmeta"})], project_type="resourcepack")
    bare = await db.fetchrow("INSERT INTO mods (github_repo_id, repo_full_name, slug, manifest_id, name)"
                             " VALUES (7003, 'x/bare', 'bare', 'Bare.Mod', 'Bare') RETURNING id, public_id, slug")
    before = {r["id"]: tuple(r) for r in await db.fetch("SELECT id, public_id, team_id, slug FROM mods")}

    assert (await migrate.migrate(db))[0] == "0025_project_identity"  # and any later ones
    after = {r["id"]: tuple(r) for r in await db.fetch("SELECT id, public_id, team_id, slug FROM mods")}
    assert after == before  # no id, public id or slug changed
    keys = {r["id"]: r["identity"] for r in await db.fetch("SELECT id, identity FROM mods")}
    assert keys == {mono["id"]: "mono_alpha", forge_only["id"]: "gadget", pack["id"]: "resourcepack:crisp",
                    bare["id"]: "bare.mod"}

    # The next release of the repository: its first mod goes on in the project, its second is its own.
    pool = await create_pool(dsn, max_size=2)
    try:
        async with aiohttp.ClientSession() as session:
            policy = DownloadPolicy(allowed_hosts=frozenset({gh.github_host, gh.cdn_host}))
            releases = Releases(gh, ReleaseIndexer(pool, session, policy, publish_before_scan=True))
            await releases.handle(gh.add_release(repo, "v1.1.0", [
                ("mono_alpha-1.1.0.jar", jars.fabric_jar("mono_alpha", "1.1.0", "Mono Alpha")),
                ("mono_beta-1.1.0.jar", jars.fabric_jar("mono_beta", "1.1.0", "Mono Beta"))]))
    finally:
        await pool.close()
    rows = await db.fetch("""SELECT m.id, m.slug, array_agg(v.version_number ORDER BY v.created_at) AS versions
                             FROM mods m JOIN mod_versions v ON v.mod_id = m.id
                             WHERE m.github_repo_id = $1 GROUP BY m.id, m.slug ORDER BY m.slug""", repo.id)
    assert [(r["slug"], r["versions"]) for r in rows] == [("mono_alpha", ["v1.0.0", "v1.1.0"]),
                                                          ("mono_beta", ["v1.1.0"])]
    assert rows[0]["id"] == mono["id"]
    # The id mono_beta, held by the project that carried its jar, is now its own project's (the
    # other shares it, as the same owner's projects do): dependencies and telemetry name it.
    beta = rows[1]["id"]
    claims = {(r["mod_id"], r["manifest_mod_id"]): (r["state"], r["holder_mod_id"]) for r in await db.fetch(
        "SELECT mod_id, manifest_mod_id, state, holder_mod_id FROM mod_id_claims")}
    assert claims[(beta, "mono_beta")] == ("holder", None)
    assert claims[(mono["id"], "mono_beta")] == ("same_owner", beta)
    assert claims[(mono["id"], "mono_alpha")] == ("holder", None)
    assert await db.fetchval("SELECT status FROM mod_versions WHERE mod_id = $1", beta) == "public"
    assert await db.fetchval("SELECT indexium_project_for('mono_beta', 'fabric')") == beta
    assert await db.fetchval("SELECT indexium_project_for('mono_alpha', 'fabric')") == mono["id"]
    # The telemetry catalogue: a ping naming mono_beta counts for mono_beta's project.
    catalogue = {r["manifest_id"]: r["id"] for r in await telemetry_q.manifest_ids(db)}
    assert (catalogue["mono_beta"], catalogue["mono_alpha"]) == (beta, mono["id"])


@pytest.mark.parametrize("manifest_id", ["mymod", "MyMod-Forge", "mymod_neoforge", "my.mod.fabric", "a-forge",
                                         "forge", "x_quilt", "Ünïcode-Paper", " spaced ", "mono_alpha", "mod-fabricated"])
async def test_the_migrations_mod_key_is_the_python_rule(db, manifest_id):
    assert await db.fetchval("SELECT indexium_mod_key($1)", manifest_id) == identity.mod_key(manifest_id)


@pytest.mark.parametrize("file_name", ["Crisp-1.2.zip", "Complementary_v4.6.zip", "pack-mc1.20-1.0.zip", "1.0.zip",
                                       "FastPack-1.0.0.mrpack", "lamps-rp.zip", "Dark UI r3.ZIP", "nover.zip",
                                       "dir/inner-2.zip", "-1.zip"])
async def test_the_migrations_pack_key_is_the_python_rule(db, file_name):
    assert await db.fetchval("SELECT indexium_pack_key('resourcepack', NULL, $1)", file_name) == \
        identity.pack_key("resourcepack", None, file_name)
    assert await db.fetchval("SELECT indexium_pack_key('modpack', $1, 'x.mrpack')", "  My   Pack ") == \
        identity.pack_key("modpack", "  My   Pack ", "x.mrpack")


async def test_a_release_indexed_into_one_project_is_sent_again_and_its_second_mod_moves_to_its_own(before_0025, gh):
    db, dsn = before_0025
    repo = gh.add_repo("mono", "monorepo")
    alpha = jars.fabric_jar("mono_alpha", "1.0.0", "Mono Alpha")
    beta = jars.fabric_jar("mono_beta", "1.0.0", "Mono Beta")
    # The second mod's jar first: its project is written before the first's version lets go of it.
    rel = gh.add_release(repo, "v1.0.0", [("mono_beta-1.0.0.jar", beta), ("mono_alpha-1.0.0.jar", alpha)])
    await github_q.upsert_installation(db, 61, state="active", account_id=repo.owner.id, account_login="mono",
                                       account_type="User")
    await github_q.upsert_repository(db, github_repo_id=repo.id, installation_id=61, full_name="mono/monorepo",
                                     default_branch="main", description=None, homepage=None, topics=[],
                                     private=False, archived=False)
    # The release as the release job wrote it before 0025: one project, both jars (their bytes its own).
    await db.execute("INSERT INTO authors (github_id, login) VALUES ($1, 'mono')", repo.owner.id)
    mono = await db.fetchval("INSERT INTO mods (github_repo_id, repo_full_name, slug, manifest_id, name,"
                             " author_github_id) VALUES ($1, 'mono/monorepo', 'mono_alpha', 'mono_alpha', 'Mono Alpha',"
                             " $2) RETURNING id", repo.id, repo.owner.id)
    version = await db.fetchval("INSERT INTO mod_versions (mod_id, version_number, github_release_id, tag_name, status)"
                                " VALUES ($1, 'v1.0.0', $2, 'v1.0.0', 'public') RETURNING id", mono, rel.id)
    for asset, data, mid in zip(rel.assets, (beta, alpha), ("mono_beta", "mono_alpha")):
        await db.execute(
            "INSERT INTO version_files (version_id, github_asset_id, filename, url, size, github_digest, manifests,"
            " is_primary, asset_created_at) VALUES ($1, $2, $3, 'https://github.com/x', $4, $5, $6::jsonb, $7,"
            " to_timestamp(floor($8)))",
            version, asset.id, asset.name, len(data), "sha256:" + hashlib.sha256(data).hexdigest(),
            json.dumps([{"loader": "fabric", "mod_id": mid, "version": "1.0.0"}]), mid == "mono_alpha", asset.created_at)
    await migrate.migrate(db)

    # The GitHub role's reconciliation sends the release again (a fingerprint no release has) ...
    release = msgspec.convert(gh.release_json(rel), github.Release)
    assert [r.id for r in sync.to_send([release], await github_q.sent_releases(db, repo.id),
                                       await github_q.indexed_releases(db, repo.id))] == [rel.id]
    # ... and the release job puts the second mod's jar in its own project.
    pool = await create_pool(dsn, max_size=2)
    try:
        async with aiohttp.ClientSession() as session:
            policy = DownloadPolicy(allowed_hosts=frozenset({gh.github_host, gh.cdn_host}))
            releases = Releases(gh, ReleaseIndexer(pool, session, policy, publish_before_scan=True))
            await releases.handle(rel, "edited")
    finally:
        await pool.close()
    rows = await db.fetch("""SELECT m.id, m.slug, v.id AS vid, v.status, array_agg(f.filename ORDER BY f.filename) AS files
                             FROM mods m JOIN mod_versions v ON v.mod_id = m.id JOIN version_files f ON f.version_id = v.id
                             GROUP BY m.id, m.slug, v.id, v.status ORDER BY m.slug""")
    assert [(r["slug"], r["status"], r["files"]) for r in rows] == [
        ("mono_alpha", "public", ["mono_alpha-1.0.0.jar"]), ("mono_beta", "public", ["mono_beta-1.0.0.jar"])]
    assert (rows[0]["id"], rows[0]["vid"]) == (mono, version)  # the project and its version keep their ids
    owners = {r["sha256"]: r["mod_id"] for r in await db.fetch("SELECT sha256, mod_id FROM content_owners")}
    assert owners == {hashlib.sha256(alpha).hexdigest(): mono, hashlib.sha256(beta).hexdigest(): rows[1]["id"]}
