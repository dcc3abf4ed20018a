"""The players' tools as pages (docs/players.md): "Build a pack" (``/pack``) and "Can I
upgrade?" (``/upgrade``).

Both are plain forms over the API's own code, one path each: ``/pack`` resolves with
``core/players.py``'s resolver (the body check and the resolution ``POST /api/v1/resolve``
runs) and links to ``/api/v1/packs/export`` with the same choice;
``/upgrade`` answers with the upgrade check ``POST /api/v1/upgrade-check`` runs (``core/players.py``). No state is
kept on the server: the chosen mods live in the query string (``mod=`` repeated).

* ``GET /pack``: one GET form: loader, game version, the chosen mods (hidden ``mod`` fields),
  a search box whose hits each have an "Add" button (``name=mod value=<slug>``: only the
  pressed button is sent) and a "Remove" button per chosen mod (``remove=<slug>``). The page
  is the same for everyone who asks the same thing: it goes through the API's cache
  (``render.for_visitor``) under the global tag, as search does.
* ``GET /upgrade``: the mods-folder picker (a static script, ``static/upgrade.js``, hashes
  every jar locally with WebCrypto SHA-1 and posts only the hashes to ``POST /upgrade``) and,
  without script, a textarea of hashes. ``POST /upgrade`` renders the answer per request.

Bounds are the API's: at most ``players.MAX_MODS`` mods and ``players.MAX_UPGRADE_HASHES``
hashes; a bad value is the site's 400 page naming it.
"""

from __future__ import annotations

from urllib.parse import urlencode

from aiohttp import web

from indexium_search import sqlpath
from indexium_jar import gameversions
from indexium_platform.web import ApiError

from ..core import hashes, packexport, params, players, search_index
from ..core.respond import GLOBAL, query
from ..core.site import add_page
from ..core.state import API
from .render import cached_page, for_visitor, page

SEARCH_HITS = 10
DEFAULT_GAME = "1.21.4"
MAX_HASH_TEXT = players.MAX_UPGRADE_HASHES * 130  # 500 sha512 lines


def _game_versions() -> list[str]:
    return [v.id for v in gameversions.default_table().versions if v.type == "release"][:60]


def _game(value: str | None) -> str:
    value = (value or "").strip() or DEFAULT_GAME
    table = gameversions.default_table()
    if value not in table.by_id and not gameversions.is_release(value, table):
        raise ApiError(400, "invalid_parameter", f"“{value[:40]}” is not a Minecraft version.")
    return value


def _loader(value: str | None, allowed: tuple[str, ...]) -> str:
    value = value or allowed[0]
    if value not in allowed:
        raise ApiError(400, "invalid_parameter", f"The loader must be one of: {', '.join(allowed)}.")
    return value


# ---- build a pack -------------------------------------------------------------------------------

def pack_choice(request: web.Request) -> tuple[str, str, tuple[str, ...], bool, str | None, str | None]:
    """(loader, game version, the mods in order, include optional, search text, loader version)."""
    q = params._query(request)
    loader = _loader(params.text(request, "loader", max_len=32), players.LOADERS)
    game = _game(params.text(request, "game_version", max_len=64))
    removed = set(q.getall("remove", ()))
    mods = tuple(dict.fromkeys(m.strip() for m in q.getall("mod", ()) if m.strip() and m.strip() not in removed))
    if len(mods) > players.MAX_MODS:
        raise ApiError(400, "invalid_parameter", f"A pack may hold at most {players.MAX_MODS} mods.")
    for m in mods:
        params.clean("mod", m, players.MAX_REF)
    optional = params.choice(request, "include_optional", ("true",)) == "true"
    search = " ".join((params.text(request, "q") or "").split()) or None
    loader_version = (params.text(request, "loader_version", max_len=64) or "").strip() or None
    return loader, game, mods, optional, search, loader_version


def _export_links(loader, game, mods, optional, loader_version, answer, resolution) -> tuple[dict, str | None]:
    """The export route's URL per format, or why a pack cannot be made from this resolution
    (the export route's own checks, asked before the player clicks)."""
    if answer is None or not answer.ok:
        return {}, None
    if loader not in packexport.EXPORT_LOADERS:
        return {}, f"Packs can be exported for {', '.join(packexport.EXPORT_LOADERS)} only."
    try:
        packexport.loader_version(loader, loader_version, resolution.platform, game)
    except ApiError as exc:
        return {}, exc.description
    for p in answer.mods:
        if not p.file.sha1 or not p.file.sha512:
            return {}, f"{p.name} {p.version} is not hashed yet; a pack needs its sha1 and sha512. Try again in a few minutes."
        if not p.file.url:
            return {}, f"{p.name} {p.version} has no download URL we can serve."
    base = [("loader", loader), ("game_version", game), *(("mod", m) for m in mods)]
    if optional:
        base.append(("include_optional", "true"))
    if loader_version:
        base.append(("loader_version", loader_version))
    return {fmt: f"/api/v1/packs/export?{urlencode([('format', fmt), *base])}" for fmt in packexport.FORMATS}, None


async def _pack_data(conn, api, loader, game, mods, optional, search, loader_version, index):
    answer = resolution = None
    if mods:
        body = players.check_body(players.ResolveBody(loader, game, list(mods), optional, None, loader_version))
        answer, resolution, _ = await players.run_resolve(conn, body)
    hits = []
    if search:
        sq = sqlpath.SearchQuery(q=search, loaders=(loader,), game_versions=(game,), limit=SEARCH_HITS)
        hits, _ = await search_index.search(conn, api, sq, index=index)
    return answer, resolution, hits


async def pack(request: web.Request) -> web.StreamResponse:
    api = request.app[API]
    loader, game, mods, optional, search, loader_version = pack_choice(request)
    key = ("site-pack", loader, game, mods, optional, search, loader_version)

    async def compute():
        index = await search_index.settled(api) if search else None  # (before the connection)
        answer, resolution, hits = await api.db.run(_pack_data, api, loader, game, mods, optional, search,
                                                    loader_version, index)
        # The chosen mods by name where the page knows it (the resolution, the search's hits).
        names = {**{h["slug"]: h["name"] for h in hits}, **{p.slug: p.name for p in (answer.mods if answer else ())}}
        exports, no_export = _export_links(loader, game, mods, optional, loader_version, answer, resolution)
        return cached_page(request.app, "pack.html", loaders=players.LOADERS, game_versions=_game_versions(),
                           loader=loader, game=game, mods=mods, optional=optional, search=search,
                           loader_version=loader_version or "", answer=answer, hits=hits, chosen=set(mods),
                           names=names, exports=exports, no_export=no_export, max_mods=players.MAX_MODS)

    return await for_visitor(request, key, (GLOBAL,), compute)


# ---- can I upgrade? -----------------------------------------------------------------------------

def _upgrade_context(loader: str, game: str, **extra) -> dict:
    return {"loaders": players.LOADERS, "game_versions": _game_versions(), "loader": loader, "game": game,
            "max_hashes": players.MAX_UPGRADE_HASHES, "hashes_text": "", "answer": None, "names": {}, **extra}


async def upgrade(request: web.Request) -> web.StreamResponse:
    loader = _loader(params.text(request, "loader", max_len=32), players.LOADERS)
    game = _game(params.text(request, "game_version", max_len=64))

    async def compute():
        return cached_page(request.app, "upgrade.html", **_upgrade_context(loader, game))

    return await for_visitor(request, ("site-upgrade", loader, game), (GLOBAL,), compute)


def parse_hashes(text: str) -> tuple[list[str], dict[str, str]]:
    """Hashes from the textarea, one a line: ``<hash>`` or ``<hash>  <file name>`` (sha1sum's
    output, what the script sends too). -> (hashes in order, once each; file name by hash)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.strip().split(None, 1)
        if not parts:
            continue
        h = parts[0].lower()
        if len(h) not in (40, 128) or any(c not in "0123456789abcdef" for c in h):
            raise ApiError(400, "invalid_parameter",
                           f"“{parts[0][:40]}” is not a sha1 (40 hex digits) or sha512 (128 hex digits).")
        name = parts[1].strip().lstrip("*")[:200] if len(parts) > 1 else ""
        out.setdefault(h, name)
    if not out:
        raise ApiError(400, "invalid_parameter", "Paste at least one hash, or pick your mods folder.")
    if len(out) > players.MAX_UPGRADE_HASHES:
        raise ApiError(400, "invalid_parameter",
                       f"At most {players.MAX_UPGRADE_HASHES} files can be checked at once ({len(out)} given).")
    return list(out), out


async def upgrade_answer(request: web.Request) -> web.Response:
    form = await request.post()
    loader = _loader(str(form.get("loader") or ""), players.LOADERS)
    game = _game(str(form.get("game_version") or "")[:64])
    text = str(form.get("hashes") or "")
    if len(text) > MAX_HASH_TEXT * 2:
        raise ApiError(400, "invalid_parameter", f"At most {players.MAX_UPGRADE_HASHES} files can be checked at once.")
    params.clean("hashes", text, MAX_HASH_TEXT * 2)
    values, names = parse_hashes(text)
    body = players.UpgradeBody(values, game, loader)
    answer = await query(request, players.run_upgrade_check, body, hashes.group(values, None))
    return page(request, "upgrade.html", **_upgrade_context(loader, game, hashes_text=text, answer=answer,
                                                             names=names))


def setup(app: web.Application) -> None:
    add_page(app, "GET", "/pack", pack, name="site-pack")
    add_page(app, "GET", "/upgrade", upgrade, name="site-upgrade")
    add_page(app, "POST", "/upgrade", upgrade_answer, name="site-upgrade-answer")
