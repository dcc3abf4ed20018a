"""The Java telemetry client (services/telemetry/client-java) against real telemetry service processes
on a real JetStream and PostgreSQL: the harness runs the mod's real entry points on stub loaders."""

from __future__ import annotations

import asyncio
import re
import uuid

import aiohttp
import pytest
from aiohttp import web

from indexium_devstack.embedded import free_port
from indexium_devstack.procs import BY_NAME, ServiceProcess

from .javaclient import build, run_harness, write_config
from .test_two_processes import until

# What the stub loaders report: the game, the loader itself, three indexed mods (one of them
# twice, as a jar-in-jar copy would be), one unindexed mod and one id the protocol cannot carry.
INSTALLED = ["minecraft@1.20.1", "fabricloader@0.15.11", "sodium@0.5.8+mc1.20.1", "jei@15.2.0.27",
             "create", "sodium@0.5.8+mc1.20.1", "not-indexed@1.0", "bad id@1"]
COUNTED = {"sodium", "jei", "create"}


@pytest.fixture(scope="module")
def jar():
    return build()


@pytest.fixture
async def service(nats_url, database_url, mods, tmp_path):
    procs = []

    async def start(**env: str) -> ServiceProcess:
        proc = ServiceProcess(BY_NAME["telemetry"], port=free_port(), log_path=tmp_path / f"t{len(procs)}.log",
                              env={"NATS_URL": nats_url, "DATABASE_URL": database_url,
                                   "INDEXIUM_LOG_FORMAT": "json", "INDEXIUM_TELEMETRY_ROLES": "http,writer",
                                   "INDEXIUM_TELEMETRY_WRITER_WAIT_SECONDS": "0.2", **env}).start()
        procs.append(proc)
        await asyncio.to_thread(proc.wait_ready)
        return proc

    yield start
    for proc in procs:
        proc.stop(10)


async def metric(proc: ServiceProcess, name: str) -> float:
    async with aiohttp.ClientSession() as http:
        text = await (await http.get(f"{proc.url}/metrics")).text()
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def test_the_jar_carries_no_loader_or_stub_classes(jar):
    import zipfile
    names = zipfile.ZipFile(jar).namelist()
    assert {"fabric.mod.json", "META-INF/mods.toml", "META-INF/neoforge.mods.toml"} <= set(names)
    classes = [n for n in names if n.endswith(".class")]
    assert classes and all(n.startswith("dev/indexium/telemetry/") for n in classes), classes


@pytest.mark.parametrize("loader", ["fabric", "quilt", "forge", "neoforge"])
async def test_one_ping_arrives_is_accepted_and_counts_every_listed_mod_once(jar, service, db, mods, tmp_path,
                                                                              loader):
    proc = await service()
    server = write_config(tmp_path, endpoint=proc.url)
    (tmp_path / "server.properties").write_text("motd=hi\nonline-mode=false\n")
    run = await asyncio.to_thread(run_harness, tmp_path, loader, INSTALLED, run_ms=1600, interval_ms=1000)
    run.assert_harmless()
    assert await metric(proc, 'indexium_telemetry_pings_total{outcome="accepted"}') == 1
    assert await metric(proc, 'indexium_telemetry_pings_total{outcome="invalid"}') == 0
    assert await metric(proc, "indexium_telemetry_counted_mods_total") == len(COUNTED)
    # not-indexed, fabricloader and minecraft are unknown; "bad id" never left the client.
    assert await metric(proc, "indexium_telemetry_unknown_mods_total") == 3
    await until(lambda: db.fetchval("SELECT count(*) = 1 FROM mod_telemetry_pings"), timeout=20.0)
    row = await db.fetchrow("SELECT * FROM mod_telemetry_pings")
    by_id = {v: k for k, v in mods.items()}
    assert sorted(by_id[m] for m in row["mod_ids"]) == sorted(COUNTED)
    versions = dict(zip((by_id[m] for m in row["mod_ids"]), row["mod_versions"]))
    assert versions == {"sodium": "0.5.8+mc1.20.1", "jei": "15.2.0.27", "create": None}
    assert (row["game_version"], row["loader"], row["os"], row["arch"]) == ("1.20.1", loader, "linux", "x86_64")
    assert row["java_version"].isdigit() and row["core_count"] >= 1
    assert (row["player_count"], row["online_mode"]) == (
        (None if loader == "quilt" else 4), False)
    assert str(server) not in (tmp_path / "t0.log").read_text()


async def test_a_second_ping_inside_the_window_gets_429_and_is_retried_after_retry_after(jar, service, tmp_path):
    # A 3 s window and a client asking every 0.5 s: a client ignoring Retry-After would send ~11.
    proc = await service(INDEXIUM_TELEMETRY_RATE_LIMIT_SECONDS="3")
    write_config(tmp_path, endpoint=proc.url)
    run = await asyncio.to_thread(run_harness, tmp_path, "fabric", INSTALLED, run_ms=6000, interval_ms=500)
    run.assert_harmless()
    accepted = await metric(proc, 'indexium_telemetry_pings_total{outcome="accepted"}')
    limited = await metric(proc, 'indexium_telemetry_pings_total{outcome="rate_limited"}')
    # 0.5 s accepted; 1.0 s 429 (Retry-After 3); 4.0 s accepted (retried later); 4.5 s 429; then
    # waiting. NATS expires the window's key to the second, so one more 429 (Retry-After 1) may
    # come first; a client ignoring Retry-After would have got about nine.
    assert accepted == 2, run.stdout
    assert 1 <= limited <= 3, run.stdout
    waits = [int(m) for m in re.findall(r"rate limited; next ping in (\d+) s", run.stdout)]
    assert waits and all(1 <= w <= 3 for w in waits), run.stdout


async def test_enabled_false_sends_nothing(jar, service, tmp_path):
    proc = await service()
    write_config(tmp_path, endpoint=proc.url, enabled=False)
    run = await asyncio.to_thread(run_harness, tmp_path, "forge", INSTALLED, run_ms=1500, interval_ms=100)
    run.assert_harmless()
    assert await metric(proc, 'indexium_telemetry_pings_total{outcome="accepted"}') == 0
    assert "analytics/submit" not in (tmp_path / "t0.log").read_text()


async def test_a_forge_client_sends_nothing(jar, service, tmp_path):
    proc = await service()
    write_config(tmp_path, endpoint=proc.url)
    run = await asyncio.to_thread(run_harness, tmp_path, "forge", INSTALLED, run_ms=1500, interval_ms=100,
                                  dist="CLIENT")
    run.assert_harmless()
    assert "analytics/submit" not in (tmp_path / "t0.log").read_text()


async def test_first_start_writes_the_config_and_waits_minutes(jar, tmp_path):
    # Default schedule (no test interval): nothing is sent within the first minutes.
    run = await asyncio.to_thread(run_harness, tmp_path, "neoforge", INSTALLED, run_ms=1500, interval_ms=None)
    run.assert_harmless()
    text = (tmp_path / "config" / "indexium-telemetry.properties").read_text()
    props = dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))
    assert props["enabled"] == "true" and uuid.UUID(props["server-uuid"]).version == 4
    assert props["endpoint"].startswith("https://")
    comments = " ".join(line for line in text.splitlines() if line.startswith("#"))
    for said in ("every installed mod", "Minecraft version", "no address", "enabled=false", "docs/telemetry.md#privacy"):
        assert said in comments, said
    assert run.logs == []
    # A second start keeps the server's id.
    again = await asyncio.to_thread(run_harness, tmp_path, "neoforge", INSTALLED, run_ms=300, interval_ms=None)
    again.assert_harmless()
    assert (tmp_path / "config" / "indexium-telemetry.properties").read_text() == text


async def test_a_service_that_is_down_or_answers_500_never_surfaces(jar, tmp_path):
    seen = []

    async def broken(request: web.Request) -> web.Response:
        seen.append(await request.read())
        return web.Response(status=500, text="boom")

    app = web.Application()
    app.router.add_post("/api/v1/analytics/submit", broken)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        down, failing = tmp_path / "down", tmp_path / "failing"
        write_config(down, endpoint=f"http://127.0.0.1:{free_port()}")  # nothing listens there
        write_config(failing, endpoint=f"http://127.0.0.1:{port}")
        runs = await asyncio.gather(
            asyncio.to_thread(run_harness, down, "fabric", INSTALLED, run_ms=1200, interval_ms=300),
            asyncio.to_thread(run_harness, failing, "neoforge", INSTALLED, run_ms=1200, interval_ms=300))
    finally:
        await runner.cleanup()
    for run in runs:
        run.assert_harmless()
    # One debug line per failed attempt, nothing louder.
    assert runs[0].logs and all("ping failed: java.net.ConnectException" in line for line in runs[0].logs)
    assert runs[1].logs and all("ping answered 500" in line for line in runs[1].logs)
    assert all(" FINE " in line for run in runs for line in run.logs)
    assert 1 <= len(seen) <= 5 and len(runs[1].logs) == len(seen)
