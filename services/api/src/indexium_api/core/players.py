"""The players' tools' shared half (docs/players.md): the resolver and the upgrade check that
both ``/api/v1`` (``v1/players.py``: ``POST /api/v1/resolve``, the pack export, ``POST
/api/v1/upgrade-check``) and the site's pages (``site/players.py``: "Build a pack", "Can I
upgrade?") run, with their bodies, bounds and answers.

* ``check_body`` and ``run_resolve``: one file per mod from what the jars declare
  (``indexium_jar.deps`` over ``queries/packs.py``), the dependencies it added with why, "not on
  Indexium" ones, or why there is no solution.
* ``run_upgrade_check``: per installed file (by hash), the newest version for the target game
  version or "none yet", and whether a dependency blocks it.

The lists in a body are bounded by ``MAX_MODS`` and ``MAX_UPGRADE_HASHES``. Answers are
deterministic.
"""

from __future__ import annotations

import uuid

import msgspec

from indexium_db.queries import hashes as hashes_q, packs as packs_q
from indexium_jar import formats
from indexium_jar.deps import (
    LOADS, Requested, Resolution, describe, fitting, newest_for_loader, range_words,
)
from indexium_content import urls

from . import params

MAX_MODS = 100  # mods in one resolve or export (a large pack asks for ~50; each may add several)
MAX_UPGRADE_HASHES = 500  # files in one upgrade check (a big mods folder holds ~300)
MAX_REF = 128
MAX_NAME = 100
# The loaders of jar formats (mods and plugins): a pack's loader; packs of packs are not resolved.
LOADERS = tuple(dict.fromkeys(lo.name for f in formats.JAR_FORMATS for lo in f.loaders if lo.name in LOADS))


# ---- bodies -------------------------------------------------------------------------------------

class ResolveBody(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    loader: str
    game_version: str
    mods: list[str]
    include_optional: bool = False
    name: str | None = None  # the pack's name (export only)
    loader_version: str | None = None  # export only: else the newest known version every mod accepts


class UpgradeBody(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    hashes: list[str]
    target_game_version: str
    loader: str


def check_loader(value: str, name: str = "loader") -> str:
    if value not in LOADERS:
        raise params.bad(name, f"must be one of: {', '.join(LOADERS)}")
    return value


def check_game(value: str, name: str) -> str:
    value = params.clean(name, value.strip(), 64)
    if not value:
        raise params.bad(name, "must not be empty")
    return value


def check_body(body: ResolveBody) -> ResolveBody:
    if not body.mods:
        raise params.bad("mods", "must name at least one mod")
    if len(body.mods) > MAX_MODS:
        raise params.bad("mods", f"may hold at most {MAX_MODS} mods")
    mods = list(dict.fromkeys(params.clean("mods", m.strip(), MAX_REF).lower() if len(m.strip()) == 40
                              else params.clean("mods", m.strip(), MAX_REF) for m in body.mods if m.strip()))
    if not mods:
        raise params.bad("mods", "must name at least one mod")
    name = params.clean("name", body.name.strip(), MAX_NAME) if body.name else None
    lv = params.clean("loader_version", body.loader_version.strip(), 64) if body.loader_version else None
    return ResolveBody(check_loader(body.loader), check_game(body.game_version, "game_version"), mods,
                       body.include_optional, name or None, lv or None)


# ---- answers ------------------------------------------------------------------------------------

class FileOut(msgspec.Struct):
    filename: str
    url: str
    size: int | None
    sha1: str | None
    sha512: str | None


class PickOut(msgspec.Struct):
    mod_id: str
    project_id: str
    slug: str
    name: str
    version: str
    version_number: str
    version_type: str
    requested: bool
    optional: bool
    reasons: list[str]
    file: FileOut


class NotIndexedOut(msgspec.Struct):
    mod_id: str
    range: str | None
    needed_by: list[str]
    text: str


class PlatformOut(msgspec.Struct):
    mod_id: str
    text: str
    declared: list[str]


class ResolveAnswer(msgspec.Struct):
    ok: bool
    loader: str
    game_version: str
    mods: list[PickOut]
    not_indexed: list[NotIndexedOut]
    unknown: list[str]
    provided: list[str]
    skipped_optional: list[str]
    warnings: list[str]
    platform: list[PlatformOut]
    problem: str | None


async def run_resolve(conn, body: ResolveBody):
    """(the answer, the picked files' rows) on one connection: refs, the resolution, the files."""
    asked = await packs_q.requested(conn, body.mods)
    unknown = [m for m in body.mods if m not in asked]
    if unknown:
        return ResolveAnswer(False, body.loader, body.game_version, [], [], unknown, [], [], [], [],
                             f"not on Indexium: {', '.join(unknown)}"), None, {}
    by_id: dict[str, packs_q.Asked] = {}
    for a in sorted(asked.values(), key=lambda a: (a.mod_id, str(a.version_id or ""))):
        by_id.setdefault(a.mod_id, a)  # one entry per mod id: a slug and a hash of it ask once
    roots = [Requested(a.mod_id, str(a.version_id) if a.version_id else None) for a in by_id.values()]
    resolution, source = await packs_q.resolve(conn, body.loader, body.game_version, roots,
                                               pinned={m: a.project for m, a in by_id.items()},
                                               include_optional=body.include_optional)
    # (each picked file's download facts were read with the candidates; files() for any that were not)
    rows = {i: source.downloads[i] for i in (as_uuid(p.file_id) for p in resolution.picks) if i in source.downloads}
    if missing := [as_uuid(p.file_id) for p in resolution.picks if as_uuid(p.file_id) not in rows]:
        rows.update(await packs_q.files(conn, missing))
    return _answer(body, resolution, rows), resolution, rows


def _answer(body: ResolveBody, r: Resolution, rows) -> ResolveAnswer:
    picks = []
    for p in r.picks:
        f = rows[as_uuid(p.file_id)]
        picks.append(PickOut(p.mod_id, p.project_id, f["slug"], p.name, p.version, f["version_number"], p.version_type,
                             p.requested, p.optional, list(p.reasons),
                             # (stored only from INDEXIUM_DOWNLOAD_HOSTS; served through the one URL policy again)
                             FileOut(f["filename"], urls.allowed(f["url"]) or "", f["size"], _hex(f["sha1"]),
                                     _hex(f["sha512"]))))
    return ResolveAnswer(
        r.ok, body.loader, body.game_version, picks,
        [NotIndexedOut(n.mod_id, n.range, list(n.needed_by), n.text) for n in r.not_indexed], [],
        list(r.provided), list(r.skipped_optional), list(r.warnings),
        [PlatformOut(p.mod_id, p.text, list(p.declared)) for p in r.platform], r.problem)


def as_uuid(value: str):
    return uuid.UUID(value)  # the ids are uuids in text


def _hex(value: str | None) -> str | None:
    return value.strip() if value else None


# ---- can I upgrade? -----------------------------------------------------------------------------

class Installed(msgspec.Struct):
    slug: str
    name: str
    mod_id: str
    version: str


class Newest(msgspec.Struct):
    version: str  # as the manifest declares it
    game_versions: list[str]


class UpgradeFile(msgspec.Struct):
    hash: str
    known: bool
    installed: Installed | None
    target: Newest | None  # the newest version for the target game version and loader
    newest: Newest | None  # with no target: the newest that exists for the loader
    blocked_by: list[str]  # dependencies without a version for the target: "needs Fabric API 0.92 or newer (none for 1.21.4 yet)"
    ready: bool
    text: str


class UpgradeAnswer(msgspec.Struct):
    target_game_version: str
    loader: str
    ready: int
    total: int
    summary: str
    files: list[UpgradeFile]


_INSTALLED = "v.id AS version_id, v.version_number, m.id AS project, m.slug, m.name, m.manifest_id"


async def run_upgrade_check(conn, body: UpgradeBody, groups: dict[str, list[str]]) -> UpgradeAnswer:
    found: dict[str, object] = {}
    for algorithm, values in groups.items():
        for row in await hashes_q.files_in_public_versions(conn, algorithm, values, columns=_INSTALLED):
            found[row["hash"].strip()] = row
    pinned = {r["manifest_id"]: r["project"] for r in found.values()}
    source = packs_q.Prefetched(pinned=pinned)
    game, loader = body.target_game_version, body.loader
    await packs_q.prefetch(conn, loader, game, sorted(pinned), source=source, rounds=1)
    fits_of: dict[str, list] = {}

    def fits(mod_id: str) -> list:  # each mod's fitting versions once (a library is needed by many)
        if mod_id not in fits_of:
            fits_of[mod_id] = fitting(source, loader, game, mod_id)
        return fits_of[mod_id]

    # Then only what _blockers asks about: the required dependencies of each mod's newest fitting file.
    needed = {dep.mod_id for mod_id in pinned if (found_fits := fits(mod_id))
              for dep in _required(found_fits[0][1])} - source.versions.keys()
    await packs_q.prefetch(conn, loader, game, sorted(needed), source=source, rounds=1)

    out, ready = [], 0
    for h in [h for values in groups.values() for h in values]:
        row = found.get(h)
        if row is None:
            out.append(UpgradeFile(h, False, None, None, None, [], False, "not on Indexium (or not public)"))
            continue
        mod_id = row["manifest_id"]
        installed = Installed(row["slug"], row["name"], mod_id, row["version_number"])
        found_fits = fits(mod_id)
        if not found_fits:
            newest = newest_for_loader(source, loader, mod_id)
            shown = Newest(newest[0].version, list(newest[1])) if newest else None
            where = f"; its newest is {shown.version} for {', '.join(shown.game_versions[:3])}" if shown else ""
            out.append(UpgradeFile(h, True, installed, None, shown, [], False, f"none yet for {game}{where}"))
            continue
        version, file = found_fits[0]
        blocked = _blockers(source, fits, game, file)
        ok = not blocked
        ready += ok
        text = f"{version.version} for {game}" + ("" if ok else f", blocked: {'; '.join(blocked)}")
        out.append(UpgradeFile(h, True, installed, Newest(version.version, sorted(file.game_versions)),
                               None, blocked, ok, text))
    total = len(out)
    return UpgradeAnswer(game, loader, ready, total, f"{ready} of {total} ready for {game}", out)


def _required(file) -> list:
    """The file's required dependencies on other mods that it does not carry itself."""
    provided = {d.mod_id for d in file.dependencies if d.kind == "embedded"} | {p.mod_id for p in file.provides}
    return [d for d in file.dependencies if d.kind == "required" and not d.platform and d.mod_id not in provided]


def _blockers(source, fits, game: str, file) -> list[str]:
    """Required dependencies of ``file`` no indexed version satisfies on ``game`` (an id we do
    not index is not a blocker we can know of: it is not listed)."""
    out = []
    for dep in _required(file):
        versions = source.versions_of(dep.mod_id)
        if versions is None:
            continue
        name = versions[0].name if versions else dep.mod_id
        if not any(dep.versions.contains(v.version) for v, _ in fits(dep.mod_id)):
            words = range_words(dep.versions)
            out.append(f"{describe(dep, name)} (no {name}{' ' + words if words else ''} for {game} yet)")
    return out
