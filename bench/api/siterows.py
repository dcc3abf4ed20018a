"""Web-site rows of the API bench: a mod page served from cache against the JSON card.

Target: ``GET /mods/{slug}`` (HTML, from the API's cache) at >= 0.5x the cache-hit
requests/s of ``GET /api/v1/mods/{slug}`` (the JSON card), same process, same load. Given the
catalogue's DSN, the measured mod first gets a README as the GitHub role stores one (issue 35:
a ~12 KB Markdown README with headings, a table, badges, images and code, rendered and
sanitized by indexium_content.markdown), so the page carries it and its own CSP.

Called from ``run.py`` (``await siterows.rows(api_url, port, pid, seconds, connections, timing.alternating)``),
or alone on a smaller catalogue, which is enough for a cache-hit ratio:

    python bench/api/siterows.py [--mods 2000] [--seconds 5] [--connections 32]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

import aiohttp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

TARGET = 0.5


def bench_readme(name: str) -> str:
    """A README the size and shape of a popular mod's (~12 KB of Markdown)."""
    parts = [f"# {name}\n", '<p align="center"><img src="docs/banner.png" alt="banner" width="600"></p>\n',
             "[![CurseForge](https://img.shields.io/badge/curseforge-1M-orange)](https://example.org/cf) "
             "[![Discord](https://img.shields.io/discord/1?label=discord)](https://discord.gg/x)\n"]
    for i in range(1, 9):
        parts.append(f"## Section {i}\n\n" + ("Lanterns, **glowing** blocks and _redstone_ logic for every "
                                             "biome; see [the wiki](docs/wiki.md#section) for details. ") * 6)
        parts.append("\n\n| Loader | Minecraft | Status |\n|---|---|:-:|\n" +
                     "".join(f"| fabric | 1.20.{j} | yes |\n" for j in range(6)))
        parts.append("\n- [x] client\n- [x] server\n- [ ] config screen\n\n```java\nLanterns.register(\"oak\");\n```\n")
        parts.append(f"![screenshot {i}](docs/shot{i}.png)\n")
    return "\n".join(parts)


async def store_readme(dsn: str, slug: str) -> int:
    """The measured mod's README, rendered and stored as the GitHub role stores it; its HTML size."""
    import asyncpg  # noqa: PLC0415

    from indexium_content import markdown  # noqa: PLC0415
    from indexium_db.queries import readmes as readmes_q  # noqa: PLC0415

    conn = await asyncpg.connect(dsn)
    try:
        row = await conn.fetchrow("SELECT github_repo_id, repo_full_name, name FROM mods WHERE slug = $1", slug)
        owner, _, repo = row["repo_full_name"].partition("/")
        text = bench_readme(row["name"])
        rendered = markdown.render(text, markdown.Repository(owner, repo or slug, "main", "README.md"))
        await readmes_q.store(conn, row["github_repo_id"], etag='"bench"', path="README.md", branch="main",
                              raw_text=text, html=rendered.html, plain_text=rendered.text,
                              truncated=rendered.truncated, renderer=markdown.RENDERER)
        return len(rendered.html)
    finally:
        await conn.close()


async def rows(api: str, port: int, pid: int, seconds: float, connections: int, alternating,
               dsn: str | None = None) -> list[str]:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{api}/api/v1/mods", params={"limit": "1", "sort": "downloads"}) as resp:
            slug = (await resp.json())["hits"][0]["slug"]
        readme = await store_readme(dsn, slug) if dsn else None
        card, page = f"/api/v1/mods/{slug}", f"/mods/{slug}"
        sizes = {}
        for path in (card, page):  # warm both entries: every measured request is a HIT
            for _ in range(2):
                async with http.get(api + path) as resp:
                    assert resp.status == 200, (path, resp.status)
                    body = await resp.read()
                    sizes[path] = len(body)
                    cache = resp.headers.get("X-Cache")
            if readme and path == page:
                assert b'class="readme markdown"' in body, "the page was cached before its README was stored"
            assert cache == "HIT", (path, cache)
    (card_rps, card_cpu), (page_rps, page_cpu) = await alternating(
        2, seconds, connections, (port, pid, card), (port, pid, page))
    return [
        f"\nmod page from cache vs the JSON card ({connections} connections, {seconds:.0f} s each, best of 2 "
        f"in turns{f'; the page with a README of {readme} bytes of HTML' if readme else ''}):",
        f"  GET {card:<36} {card_rps:8.0f} req/s   {card_cpu:6.0f} µs CPU/request   ({sizes[card]} bytes)",
        f"  GET {page:<36} {page_rps:8.0f} req/s   {page_cpu:6.0f} µs CPU/request   ({sizes[page]} bytes)   "
        f"ratio {page_rps / card_rps:.2f} (by CPU {card_cpu / page_cpu:.2f}; target >= {TARGET})",
    ]


async def main(args) -> None:
    import run  # noqa: PLC0415 - the bench's own helpers (catalogue loader)
    import timing  # noqa: PLC0415 - the load generator, in turns
    from indexium_devstack.embedded import free_port, throwaway  # noqa: PLC0415
    from indexium_devstack.procs import BY_NAME, ServiceProcess  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="indexium-bench-site-") as d:
        tmp = Path(d)
        async with throwaway(tmp) as servers:
            await run.load_catalogue(servers.dsn, args.mods)
            env = {"DATABASE_URL": servers.dsn, "NATS_URL": servers.nats_url,
                   "INDEXIUM_API_RATE_LIMIT_PER_MINUTE": "0", "INDEXIUM_LOG_FORMAT": "json"}
            api = ServiceProcess(BY_NAME["api"], port=free_port(), env=env, log_path=tmp / "api.log").start()
            try:
                await asyncio.to_thread(api.wait_ready, 60)
                for line in await rows(api.url, api.port, api.proc.pid, args.seconds, args.connections,
                                       timing.alternating, dsn=servers.dsn):
                    run.say(line)
            finally:
                api.stop(30)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mods", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=32)
    asyncio.run(main(parser.parse_args()))
