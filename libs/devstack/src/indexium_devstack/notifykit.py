"""What webhook tests and the notification bench need, real and on loopback: a receiver that
records every POST and answers as told, a tiny DNS server whose answers a test changes, a
signed-in site session written as the site writes one, and versions written through the
indexer's own query functions (so roll-ups run).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import secrets
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import asyncpg
import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset
from aiohttp import web

from indexium_db.queries import mods as mods_q, versions as versions_q

_ids = itertools.count(1)


# ---- a receiver -----------------------------------------------------------------------------------

@dataclass
class Received:
    path: str
    headers: dict
    body: bytes
    status: int  # what the receiver answered
    at: float  # time.time() when it arrived


@dataclass
class Receiver:
    """An aiohttp server on 127.0.0.1. ``answers``: statuses to give, in order, then 200 (or
    ``check(body) -> status`` for each request, a Discord-shaped validator say); ``delay_s``
    before answering."""

    answers: list[int] = field(default_factory=list)
    delay_s: float = 0.0
    check: object = None
    received: list[Received] = field(default_factory=list)
    port: int = 0

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        status = self.answers.pop(0) if self.answers else 200
        if self.check is not None and status < 300:
            status = self.check(body)
        self.received.append(Received(request.path, dict(request.headers), body, status, time.time()))
        return web.Response(status=status, text="ok" if status < 300 else f"nope {status}")

    async def start(self) -> "Receiver":
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        await self._runner.cleanup()

    def url(self, path: str = "/hook", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def for_path(self, path: str) -> list[Received]:
        return [r for r in self.received if r.path == path]


# ---- a DNS server ---------------------------------------------------------------------------------

class TinyDns(asyncio.DatagramProtocol):
    """Answers A queries from ``records`` (name -> IPv4 address), NXDOMAIN otherwise; a test
    changes ``records`` to rebind a name."""

    def __init__(self) -> None:
        self.records: dict[str, str] = {}
        self.port = 0
        self._transport = None

    async def start(self) -> "TinyDns":
        loop = asyncio.get_running_loop()
        self._transport, _ = await loop.create_datagram_endpoint(lambda: self, local_addr=("127.0.0.1", 0))
        self.port = self._transport.get_extra_info("sockname")[1]
        return self

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def datagram_received(self, data: bytes, addr) -> None:
        try:
            query = dns.message.from_wire(data)
        except Exception:
            return
        response = dns.message.make_response(query)
        response.flags |= dns.flags.AA
        question = query.question[0]
        name = question.name.to_text().rstrip(".").lower()
        if name not in self.records:
            response.set_rcode(dns.rcode.NXDOMAIN)
        elif question.rdtype == dns.rdatatype.A:
            response.answer.append(dns.rrset.from_text(question.name, 0, "IN", "A", self.records[name]))
        self._transport.sendto(response.to_wire(), addr)

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


# ---- a signed-in user -----------------------------------------------------------------------------

async def sign_in(conn: asyncpg.Connection, session_secret: str, *, github_user_id: int, login: str) -> tuple[str, str]:
    """A live site session, stored as the site stores one (the HMAC of the cookie); returns
    (cookie value, CSRF token)."""
    raw, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    id_hash = hmac.new(session_secret.encode(), f"session:{raw}".encode(), hashlib.sha256).digest()
    await conn.execute(
        """INSERT INTO site_sessions (id_hash, github_user_id, login, csrf_token, expires_at)
           VALUES ($1, $2, $3, $4, $5)""", id_hash, github_user_id, login, csrf, datetime.now(UTC) + timedelta(hours=1))
    return raw, csrf


# ---- versions ---------------------------------------------------------------------------------------

async def mod(conn: asyncpg.Connection, manifest_id: str, *, owner: str = "author", owner_id: int = 4242,
              name: str | None = None, summary: str = "", categories=()) -> asyncpg.Record:
    repo = 10_000 + next(_ids)
    await mods_q.upsert_author(conn, owner_id, owner)
    card = mods_q.Card(name=name or manifest_id.title(), summary=summary, description="", authors=[owner],
                       licenses=["MIT"], links={}, environment="both")
    return await mods_q.create(conn, github_repo_id=repo, repo_full_name=f"{owner}/{manifest_id}", owner_id=owner_id,
                               owner_login=owner, manifest_id=manifest_id, default_branch="main",
                               categories=list(categories), card=card)


async def version(conn: asyncpg.Connection, mod_row, number: str, files, *, status: str = "public",
                  version_type: str = "release", changelog: str = "Fixed things.", name: str | None = None):
    """``files``: [(loaders, game_versions)]; returns the version id."""
    vid = await versions_q.upsert_version(
        conn, mod_id=mod_row["id"], version_number=number, github_release_id=100_000 + next(_ids), tag_name=number,
        name=name or number, changelog=changelog, version_type=version_type, published_at=datetime.now(UTC),
        status=status, game_versions=sorted({g for f in files for g in f[1]}),
        loaders=sorted({lo for f in files for lo in f[0]}))
    rows = [versions_q.FileRow(github_asset_id=1_000_000 + next(_ids), filename=f"{mod_row['slug']}-{number}-{i}.jar",
                               url=f"https://github.com/x/y/releases/download/{number}/f{i}.jar", size=1000,
                               content_type=None, github_digest=None, sidecar_url=None, loaders=list(f[0]),
                               game_versions=list(f[1]), manifests=[], is_primary=i == 0, download_count=1)
            for i, f in enumerate(files)]
    await versions_q.replace_files(conn, vid, rows)
    await mods_q.refresh_rollup(conn, mod_row["id"])
    return vid
