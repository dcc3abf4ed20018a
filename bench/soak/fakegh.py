"""The devstack's GitHub-shaped server in a child process of its own, serving generated jars.

It runs apart from the load client so that serving the indexer's Range reads and the scan's
downloads is not charged to (or slowed by) the process sending the load. The parent asks for
releases in batches over a pipe: ``("make", n)`` answers with ``n`` new releases (a jar each,
made by ``indexium_devstack.jars.fabric_jar``: a small mod-shaped Fabric jar), each as
``(release id, repo id, asset id, tag, webhook body bytes)``; ``("stop",)`` ends it.
Every repository gets ``per_repo`` versions in turn, so the stream holds new mods and new
versions of known ones.
"""

from __future__ import annotations

import asyncio
import json
import uuid

from indexium_devstack import jars
from indexium_devstack.fakegithub import FakeGitHub


def serve(conn, per_repo: int) -> None:
    asyncio.run(_serve(conn, per_repo))


async def _serve(conn, per_repo: int) -> None:
    gh = FakeGitHub()
    await gh.start()
    loop = asyncio.get_running_loop()
    run = uuid.uuid4().hex[:6]  # mod ids differ between runs sharing a database
    made = 0
    repo = None
    conn.send({"hosts": [gh.github_host, gh.cdn_host]})
    try:
        while True:
            request = await loop.run_in_executor(None, conn.recv)
            if request[0] == "stop":
                break
            out = []
            for _ in range(request[1]):
                r, v = divmod(made, per_repo)
                made += 1
                mod_id = f"soak{run}_{r}"
                if v == 0:
                    repo = gh.add_repo(f"soaker{r % 97}", mod_id.replace("_", "-"))
                version = f"1.{v}.0"
                jar = jars.fabric_jar(mod_id, version, f"Soak {run} {r}", f"Soak test mod {r}", minecraft="~1.20.1")
                release = gh.add_release(repo, f"v{version}", [(f"{mod_id}-{version}.jar", jar)])
                body = json.dumps(gh.release_payload(release, action="published"), separators=(",", ":")).encode()
                out.append((release.id, repo.id, release.assets[0].id, release.tag_name, body))
                await asyncio.sleep(0)  # keep serving the CDN between jars
            conn.send(out)
    finally:
        await gh.close()
