"""Property-based contract test from the served /openapi.json (schemathesis) against a real API
process on a real, seeded PostgreSQL: no 5xx for any generated input, and every response
(status, headers, content type, body) conforms to the document.

Kept small for CI: a bounded number of generated examples per operation.
"""

from __future__ import annotations

import json
import os

import asyncpg
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance

from indexium_api.openapi import document as openapi
from indexium_api.app import create_app
from indexium_api.settings import Settings
from indexium_db.pool import connect
from indexium_db.queries import mods as mods_q, versions as versions_q
from indexium_devstack.embedded import free_port
from indexium_devstack.procs import BY_NAME, ServiceProcess
from indexium_platform.settings import load

MAX_EXAMPLES = int(os.environ.get("INDEXIUM_CONTRACT_EXAMPLES", "15"))
# What the app serves (analytics adds its paths when that module is present).
DOCUMENT = json.loads(create_app(load(Settings, {}))[openapi.DOCUMENT].body)
OPERATIONS = [(m.upper(), p) for p, item in DOCUMENT["paths"].items() for m in item]
SEEDED = {"slug": "sodium", "version_number": "0.5.3", "hash": "0" * 40, "id": "sodium", "version": "0.5.3"}
# A hash of the right length for a different algorithm is a 400 the document cannot express
# (it names the parameter, as promised), so "valid data is accepted" does not hold there.
CROSS_FIELD_RULES = {"/api/v1/versions/by-hash/{hash}", "/api/v1/versions/by-hashes", "/api/v1/versions/update-check",
                     "/v2/version_file/{hash}", "/v2/version_file/{hash}/download", "/v2/version_file/{hash}/update",
                     "/v2/version_files", "/v2/version_files/update", "/v2/version_files/update_many",
                     # JSON inside a query string (ids, loaders, facets): its grammar is the route's
                     # own and a generated string is rarely one; every answer must still conform.
                     "/v2/search", "/v2/projects", "/v2/versions", "/v2/project/{id}/version",
                     # The loader version given must satisfy every mod's requirement (a 400 naming it),
                     # and a loader with no known release list needs one: rules across the pack's mods.
                     "/api/v1/packs/export"}


async def _seed(conn: asyncpg.Connection) -> None:
    """The documented examples exist: mod 'sodium', version '0.5.3', a file with sha1 '000...0'."""
    await mods_q.upsert_author(conn, 1, "caffeine")
    card = mods_q.Card(name="Sodium", summary="Fast rendering", description="Fast.", authors=["Jelly"],
                     licenses=["LGPL-3.0"], links={"sources": "https://example.org"}, environment="client")
    mod = await mods_q.create(conn, github_repo_id=1, repo_full_name="caffeine/sodium", owner_id=1,
                            owner_login="caffeine", manifest_id="sodium", default_branch="main",
                            categories=["optimization"], card=card)
    vid = await versions_q.upsert_version(
        conn, mod_id=mod["id"], version_number="0.5.3", github_release_id=1, tag_name="0.5.3", name="0.5.3",
        changelog="", version_type="release", published_at=None, status="public", game_versions=["1.20.1"],
        loaders=["fabric"])
    (fid,) = await versions_q.replace_files(conn, vid, [versions_q.FileRow(
        github_asset_id=1, filename="sodium.jar", url="https://x/sodium.jar", size=10, content_type=None,
        github_digest=None, sidecar_url=None, loaders=["fabric"], game_versions=["1.20.1"], manifests=[],
        is_primary=True, download_count=3)])
    await conn.execute("UPDATE version_files SET sha1 = $2, sha256 = $3, sha512 = $4 WHERE id = $1",
                       fid, "0" * 40, "0" * 64, "0" * 128)
    await mods_q.upsert_icon(conn, mod["id"], "image/png", b"\x89PNG\r\n\x1a\n", '"icon"')
    await mods_q.refresh_rollup(conn, mod["id"])


@pytest.fixture(scope="module")
async def contract_db(cloned_database):
    async with cloned_database(f"indexium_contract_{os.getpid()}", replace=True) as dsn:
        conn = await connect(dsn)
        await _seed(conn)
        await conn.close()
        yield dsn


@pytest.fixture(scope="module")
def live_api(contract_db, tmp_path_factory):
    env = {"DATABASE_URL": contract_db, "NATS_URL": f"nats://127.0.0.1:{free_port()}",
           "INDEXIUM_API_RATE_LIMIT_PER_MINUTE": "0", "INDEXIUM_LOG_LEVEL": "warning"}
    proc = ServiceProcess(BY_NAME["api"], port=free_port(), env=env,
                          log_path=tmp_path_factory.mktemp("api") / "api.log").start()
    try:
        proc.wait_ready(60)
        yield proc.url
    finally:
        code = proc.stop(30)
        log = proc.log_path.read_text()
        assert "unhandled_error" not in log, log[-4000:]
        assert code == 0


@pytest.fixture(scope="module")
def operations(live_api) -> dict:
    """The document as the running server serves it, by (METHOD, path)."""
    loaded = schemathesis.openapi.from_url(f"{live_api}/openapi.json")
    return {(op.method.upper(), op.path): op for op in (r.ok() for r in loaded.get_all_operations())}


def test_the_served_document_is_the_one_under_test(operations):
    assert set(operations) == set(OPERATIONS)


@pytest.mark.parametrize("mode", ["positive", "negative", "seeded"])
@pytest.mark.parametrize("method, path", OPERATIONS)
def test_every_response_conforms(operations, live_api, method, path, mode):
    operation = operations[(method, path)]
    if mode == "negative" and not operation.path_parameters and not operation.query and not operation.body:
        pytest.skip("nothing to make invalid")
    # "seeded" pins path parameters to rows that exist, so 200 answers are checked as well.
    pinned = {k: v for k, v in SEEDED.items() if "{" + k + "}" in path} if mode == "seeded" else None
    if mode == "seeded" and not pinned and method == "GET":
        pytest.skip("no path parameters to pin")
    strategy = operation.as_strategy(
        GenerationMode.NEGATIVE if mode == "negative" else GenerationMode.POSITIVE, path_parameters=pinned)
    excluded = [positive_data_acceptance] if path in CROSS_FIELD_RULES else []

    @given(case=strategy)
    @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    def check(case):
        case.call_and_validate(base_url=live_api, excluded_checks=excluded)

    check()
