"""The pack resolver's view of the index: ``indexium_jar.deps.CandidateSource`` over PostgreSQL.

The resolver (``indexium_jar.deps.resolve``) is pure and synchronous; it asks for one mod id
at a time. Asking PostgreSQL once per id would cost a round trip per dependency, so
:func:`prefetch` reads the whole neighbourhood first, one query per *round* of new ids: the
mods asked for, then every id their fitting files declare that the resolver reads
(``resolver.constrains``: required, incompatible, optional with a range; every optional one
with ``include_optional``; not what the loader only warns about, nor embedded ids), and so on
until no new id appears (``MAX_ROUNDS``, ``MAX_IDS``). A typical pack of 50 mods is three or
four queries. :class:`Prefetched` then answers the resolver from
memory and records any id it was not given, so :func:`resolve` can read those and run again
(bounded) instead of answering wrongly.

Ownership (migration 0015, ``indexium_project_for``): a mod id means the listed project that
holds it for the pack's loader (a claimant of that loader first, the holder before the
others; never one held for review or rejected). An impostor's project never answers for an
id, and a version with a re-upload or a claim in review is not public, so it is never a
candidate. The one exception is the player's own choice: a mod asked for by slug, project id
or file hash stands for its own manifest id in that resolution.

Files match as everywhere else (``catalog.file_match``): one file must carry both a loader the
pack runs (Quilt runs Fabric files, Paper Bukkit plugins: ``resolver.LOADS``) and the game
version. Only such files carry their dependencies into the answer; the other files of the
project come without them, so "its newest is 0.15 for 1.21.1" can still be said.
"""

from __future__ import annotations

import functools
import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

import asyncpg

from indexium_jar.deps import (
    PLATFORM_IDS, CandidateFile, CandidateVersion, Requested, Resolution, parse_dependency, resolve as resolve_core,
)
from indexium_jar.deps.resolver import LOADS, constrains
from indexium_jar.model import Dependency

from .hashes import OWNED

MAX_ROUNDS = 8  # dependency depth read ahead; deeper ids are read when the resolver asks
MAX_IDS = 2000  # ids read for one resolution (50 mods with their libraries are ~100)
MAX_RERUNS = 3  # resolver runs after reading ids it asked for but was not given
PARSED_MAX = 50_000  # parsed dependencies remembered per process (~1 KB each)
_SHA1 = re.compile(r"^[0-9a-f]{40}$")


def runs(loader: str) -> list[str]:
    """The file loaders a pack of ``loader`` runs, its own first."""
    return list(LOADS.get(loader, (loader,)))


@dataclass
class Prefetched:
    """A ``CandidateSource`` over what :func:`prefetch` read; ids it was not given are recorded
    in ``missed`` (and answered "not on Indexium" for this run only)."""

    versions: dict[str, list[CandidateVersion] | None] = field(default_factory=dict)
    pinned: dict[str, uuid.UUID] = field(default_factory=dict)  # mod id -> the project the player chose
    missed: set[str] = field(default_factory=set)
    queries: int = 0
    downloads: dict[uuid.UUID, dict] | None = None  # a dict: every fitting file's row as files() gives it

    def versions_of(self, mod_id: str) -> Sequence[CandidateVersion] | None:
        if mod_id not in self.versions:
            self.missed.add(mod_id)
            return None
        return self.versions[mod_id]


def _record_for(manifests, loaders: list[str]) -> dict | None:
    """The file's manifest record the pack's loader reads: its own loader's, else a compatible one."""
    if not isinstance(manifests, list):
        return None
    for name in loaders:
        for rec in manifests:
            if isinstance(rec, dict) and rec.get("loader") == name:
                return rec
    return None


@functools.lru_cache(maxsize=PARSED_MAX)
def _parsed(mod_id: str, kind: str, raw: str | None, side: str, warn_only: bool, loader: str):
    """A dependency parsed once per process: the same few ranges ("*", ">=0.15", "[47,)") recur
    across thousands of files, and a range is parsed the same way every time (frozen result)."""
    return parse_dependency(Dependency(mod_id=mod_id, kind=kind, version_range=raw, side=side,
                                       warn_only=warn_only), loader)


def _dependencies(rec: dict | None) -> tuple:
    if rec is None:
        return ()
    out = []
    for d in rec.get("dependencies") or ():
        if not isinstance(d, dict) or not isinstance(d.get("mod_id"), str) or d.get("kind") not in (
                "required", "optional", "incompatible", "embedded"):
            continue
        raw = d.get("version_range")
        out.append(_parsed(d["mod_id"], d["kind"], raw if isinstance(raw, str) else None,
                           d.get("side") if d.get("side") in ("client", "server") else "both",
                           bool(d.get("warn_only")), rec["loader"]))
    return tuple(out)


# (_read takes these columns by position: keep the order.)
_ROUND = """
WITH ids AS (
    SELECT i.dep_id, COALESCE(i.chosen, indexium_project_for(i.dep_id, $2)) AS project
    FROM unnest($1::text[], $5::uuid[]) AS i(dep_id, chosen))
SELECT ids.dep_id, m.id AS project, m.public_id, m.slug, m.name,
       v.id AS version_id, v.version_number, v.version_type, v.published_at,
       f.id AS file_id, f.loaders, f.game_versions, f.manifest_version, fit.fits,
       CASE WHEN fit.fits THEN f.manifests END AS manifests,
       CASE WHEN fit.fits AND $6 THEN f.url END AS url, CASE WHEN fit.fits AND $6 THEN f.filename END AS filename,
       CASE WHEN fit.fits AND $6 THEN f.size END AS size, CASE WHEN fit.fits AND $6 THEN f.sha1::text END AS sha1,
       CASE WHEN fit.fits AND $6 THEN f.sha512::text END AS sha512
FROM ids
LEFT JOIN mods m ON m.id = ids.project AND m.listed
LEFT JOIN mod_versions v ON v.mod_id = m.id AND v.status = 'public' AND NOT v.hidden
LEFT JOIN version_files f ON f.version_id = v.id
LEFT JOIN LATERAL (SELECT f.loaders && $3::text[] AND f.game_versions && ARRAY[$4::text] AS fits) fit ON true
ORDER BY ids.dep_id, v.version_sort DESC, v.published_at DESC NULLS LAST, v.id, f.is_primary DESC, f.filename, f.id
"""


async def _read(conn: asyncpg.Connection, source: Prefetched, ids: list[str], loader: str, game_version: str,
                optional: bool = False) -> set[str]:
    """Reads ``ids`` into ``source``; returns the ids their fitting files name that are not read yet and
    that the resolver reads (``resolver.constrains``: not what the loader only warns about, nor an
    optional dependency without a range unless ``optional``)."""
    loaders = runs(loader)
    rows = await conn.fetch(_ROUND, ids, loader, loaders, game_version, [source.pinned.get(i) for i in ids],
                            source.downloads is not None)
    source.queries += 1
    # A version's rows are consecutive (ordered by id, then version), so they are grouped as they
    # come: (id, the version's rows) in the order read. Columns by position (the hot loop of a read).
    groups: list[tuple[str, list]] = []
    found: set[str] = set()
    last_id = last_version = None
    for r in rows:
        if r[1] is None:  # project: the id is not on Indexium
            continue
        dep_id, version_id = r[0], r[5]
        found.add(dep_id)
        if version_id is None or r[9] is None:  # no public version, or a version without files
            continue
        if version_id == last_version and dep_id == last_id:
            groups[-1][1].append(r)
        else:
            groups.append((dep_id, [r]))
            last_id, last_version = dep_id, version_id
    by_id: dict[str, list[CandidateVersion]] = {i: [] for i in found}
    wanted: set[str] = set()
    downloads = source.downloads
    for dep_id, files in groups:
        v = files[0]
        cand_files, version = [], None
        for f in files:
            manifests = f[14]
            if isinstance(manifests, str):
                manifests = json.loads(manifests)
            if downloads is not None and f[13]:
                downloads[f[9]] = _download(f, v, manifests)
            rec = _record_for(manifests, loaders)
            deps = _dependencies(rec)
            if rec is not None and version is None and isinstance(rec.get("version"), str):
                version = rec["version"]
            wanted.update(d.mod_id for d in deps
                          if constrains(d) or (optional and d.kind == "optional" and d.mod_id not in PLATFORM_IDS))
            cand_files.append(CandidateFile(str(f[9]), tuple(f[10]), tuple(f[11]), deps))
        published = v[8]
        by_id[dep_id].append(CandidateVersion(
            v[2] or str(v[1]), v[4], str(v[5]), version or v[12] or v[6], v[7], tuple(cand_files),
            published.isoformat() if published else ""))
    for mod_id in ids:
        source.versions[mod_id] = by_id[mod_id] if mod_id in found else None
    return {w for w in wanted if w not in source.versions}


def _download(f: asyncpg.Record, v: asyncpg.Record, manifests) -> dict:
    """A fitting file's row as :func:`files` reads it (read with the candidates: no second query)."""
    sides = set()
    for rec in manifests if isinstance(manifests, list) else ():
        side = rec.get("environment") if isinstance(rec, dict) else None
        # (as ``rec ->> 'environment'``: a string as it is, another JSON value as its text, null as none)
        sides.add("both" if side is None else side if isinstance(side, str) else json.dumps(side))
    return {"id": f["file_id"], "url": f["url"], "filename": f["filename"], "size": f["size"], "sha1": f["sha1"],
            "sha512": f["sha512"], "slug": v["slug"], "version_number": v["version_number"],
            "environments": sorted(sides)}


async def prefetch(conn: asyncpg.Connection, loader: str, game_version: str, mod_ids: list[str], *,
                   source: Prefetched | None = None, rounds: int = MAX_ROUNDS, optional: bool = False) -> Prefetched:
    """Every candidate the resolver can ask for, read round by round (one query a round);
    ``rounds`` 1: the mods only (an upgrade check); ``optional``: for ``include_optional``."""
    source = source or Prefetched()
    todo = sorted({m for m in mod_ids if m not in source.versions})
    for _ in range(min(rounds, MAX_ROUNDS)):
        room = MAX_IDS - len(source.versions)
        if not todo or room <= 0:
            break
        todo = sorted(await _read(conn, source, todo[:room], loader, game_version, optional))
    return source


async def resolve(conn: asyncpg.Connection, loader: str, game_version: str, mods: list[Requested], *,
                  pinned: dict[str, uuid.UUID] | None = None, include_optional: bool = False,
                  ) -> tuple[Resolution, Prefetched]:
    """``indexium_jar.deps.resolve`` over the index: prefetch, resolve, and read and run again
    when the resolver asked for an id it was not given (at most ``MAX_RERUNS`` times)."""
    source = Prefetched(pinned=dict(pinned or {}), downloads={})
    await prefetch(conn, loader, game_version, [m.mod_id for m in mods], source=source, optional=include_optional)
    for _ in range(MAX_RERUNS):
        source.missed.clear()
        answer = resolve_core(source, loader, game_version, mods, include_optional)
        if not source.missed or len(source.versions) >= MAX_IDS:
            return answer, source
        await prefetch(conn, loader, game_version, sorted(source.missed), source=source, optional=include_optional)
    source.missed.clear()
    return resolve_core(source, loader, game_version, mods, include_optional), source


# ---- what the player asked for ------------------------------------------------------------------

@dataclass(frozen=True)
class Asked:
    """One entry of a request's ``mods``: the project it names and, for a hash, its version."""

    ref: str
    project: uuid.UUID
    mod_id: str  # the project's manifest id: the resolver's key
    name: str
    version_id: uuid.UUID | None = None


async def requested(conn: asyncpg.Connection, refs: list[str]) -> dict[str, Asked]:
    """ref -> what it names, for slugs, project ids (``public_id``) and sha1 hashes of files in
    public versions (the file's owner's, ``hashes.OWNED``); unknown refs are absent. One query."""
    hashes = [r for r in refs if _SHA1.match(r)]
    rows = await conn.fetch(
        f"""SELECT r.ref, m.id, m.manifest_id, m.name, NULL::uuid AS version_id
            FROM unnest($1::text[]) AS r(ref)
            JOIN LATERAL (SELECT x.* FROM mods x WHERE x.listed AND (x.slug = r.ref OR x.public_id = r.ref)
                          ORDER BY x.slug = r.ref DESC LIMIT 1) m ON true
            UNION ALL
            SELECT DISTINCT ON (hf.sha1) hf.sha1::text, m.id, m.manifest_id, m.name, v.id
            FROM version_files hf
            JOIN mod_versions v ON v.id = hf.version_id
            JOIN mods m ON m.id = v.mod_id
            WHERE hf.sha1 = ANY($2::bpchar[]) AND v.status = 'public' AND NOT v.hidden AND m.listed AND {OWNED}
            ORDER BY 1""",
        [r for r in refs if r not in hashes], hashes,
    )
    return {r["ref"]: Asked(r["ref"], r["id"], r["manifest_id"], r["name"], r["version_id"]) for r in rows}


# ---- what an export needs of the picked files -----------------------------------------------------

async def files(conn: asyncpg.Connection, file_ids: list[uuid.UUID]) -> dict[uuid.UUID, asyncpg.Record]:
    """id -> the file's download facts (url, name, size, hashes, the manifests' sides, the mod's slug
    and the release tag), one query."""
    rows = await conn.fetch(
        """SELECT f.id, f.url, f.filename, f.size, f.sha1::text AS sha1, f.sha512::text AS sha512,
                  m.slug, v.version_number,
                  COALESCE((SELECT array_agg(DISTINCT COALESCE(rec ->> 'environment', 'both'))
                            FROM jsonb_array_elements(CASE jsonb_typeof(f.manifests) WHEN 'array'
                                                      THEN f.manifests ELSE '[]' END) rec),
                           '{}') AS environments
           FROM version_files f JOIN mod_versions v ON v.id = f.version_id JOIN mods m ON m.id = v.mod_id
           WHERE f.id = ANY($1::uuid[])""",
        file_ids,
    )
    return {r["id"]: r for r in rows}
