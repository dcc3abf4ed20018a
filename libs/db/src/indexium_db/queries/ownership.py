"""Who owns a file's bytes and a manifest mod id, and the holds those rules put on versions.

Bytes (``content_owners``): the first project (mod row) to publish a file's content owns it,
ordered by the GitHub asset's ``created_at``, then by first indexed. Claimed by a trigger on
``version_files`` in the statement that writes the hash (GitHub's digest at index time, the
scan stage's sha256 later), so a hash is never stored without its owner. The same bytes in
another project are a **re-upload**: never public, never the answer to a hash lookup.

Mod ids (``mod_id_claims``, per loader, lower-cased): the first project to declare one holds
it; a later project of the same owner shares it; another owner's project is held for
**review** until an operator approves it (a separate project that never answers for the id
while the holder is listed) or rejects it. An earlier asset takes the hold over, as for bytes,
so an impostor indexed before the original loses it when the original arrives.

A version with a re-upload or a claim in review (or rejected) is quarantined by ``ACTOR``
("ownership"), which only these rules lift again (``reevaluate``). Everything here runs in the
caller's transaction.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

import asyncpg

from .mods import refresh_rollup, slug_base, slug_candidates

ACTOR = "ownership"  # quarantine_decisions.actor of these rules' holds
ID_MAX = 128  # a longer "mod id" is no loader's id: nothing to impersonate, not claimed
_CLAIM_LOCK = 0x1D3E0015  # advisory lock class: one claimant of a (loader, id) at a time
REVIEW_STATES = ("review", "rejected")  # a claim in one of these holds its versions


@dataclass(frozen=True)
class Declared:
    """A (loader, mod id) a version's files declare, with its earliest asset's created_at."""

    loader: str
    mod_id: str
    asset_created_at: datetime | None = None


@dataclass(frozen=True)
class Changed:
    """A version whose status these rules changed (for its event, after commit)."""

    version_id: uuid.UUID
    mod_id: uuid.UUID
    slug: str
    version_number: str
    status: str
    visible: bool
    reason: str


def declared(files: Iterable[tuple[list[dict], datetime | None]]) -> list[Declared]:
    """(manifest records, asset created_at) per file -> each (loader, lower id) once, earliest time."""
    out: dict[tuple[str, str], datetime | None] = {}
    for records, at in files:
        for rec in records:
            loader, mid = rec.get("loader"), rec.get("mod_id")
            if not isinstance(loader, str) or not isinstance(mid, str) or not 0 < len(mid) <= ID_MAX:
                continue
            key = (loader, mid.lower())
            if key not in out or _earlier(at, out[key]):
                out[key] = at
    return [Declared(lo, mid, at) for (lo, mid), at in sorted(out.items())]


def _earlier(a: datetime | None, b: datetime | None) -> bool:
    """Does a claim made at ``a`` come before one at ``b``? Unknown (None) is after any time;
    a tie keeps the incumbent."""
    return a is not None and (b is None or a < b)


# ---- mod ids ---------------------------------------------------------------------------------

async def claim_mod_ids(conn: asyncpg.Connection, mod_id: uuid.UUID, claims: list[Declared], *,
                        new: bool = False) -> set[uuid.UUID]:
    """Record the project's claims on these (loader, id) pairs; returns the projects whose hold on
    a pair this project took over (an earlier asset). The project is compared by its row, never
    by its owner: a renamed or transferred repository is the same row and keeps what it holds.

    One read when nothing changes (a project's next release); otherwise the pairs are locked
    (transaction-scoped advisory locks, one claimant of a pair at a time), read again and written.
    ``new``: the project was created in this transaction (it has no claims: straight to the lock)."""
    if not claims:
        return set()
    if not new and _plan(mod_id, claims, await _claims_of(conn, mod_id, claims)).empty:
        return set()
    await conn.execute(
        "SELECT pg_advisory_xact_lock($1, k) FROM (SELECT DISTINCT hashtext(l || '/' || i) AS k"
        " FROM unnest($2::text[], $3::text[]) AS p(l, i) ORDER BY 1) s",
        _CLAIM_LOCK, [c.loader for c in claims], [c.mod_id for c in claims],
    )
    plan = _plan(mod_id, claims, await _claims_of(conn, mod_id, claims))  # as it is now, under the lock
    for holder, state in plan.demote:
        await conn.execute(
            """UPDATE mod_id_claims SET state = $5, holder_mod_id = $4
               WHERE mod_id = $1 AND loader = $2 AND manifest_mod_id = $3""",
            holder["mod_id"], holder["loader"], holder["manifest_mod_id"], mod_id, state,
        )
    for loader, mid, state, at in plan.update:
        await conn.execute(
            """UPDATE mod_id_claims SET state = $4,
                   holder_mod_id = CASE WHEN $4 = 'holder' THEN NULL ELSE holder_mod_id END, asset_created_at = $5
               WHERE mod_id = $1 AND loader = $2 AND manifest_mod_id = $3""",
            mod_id, loader, mid, state, at,
        )
    if plan.insert:
        await conn.executemany(
            """INSERT INTO mod_id_claims (mod_id, loader, manifest_mod_id, state, holder_mod_id, asset_created_at)
               VALUES ($1, $2, $3, $4, $5, $6)""",
            [(mod_id, *row) for row in plan.insert],
        )
    return {holder["mod_id"] for holder, _ in plan.demote}


async def _claims_of(conn: asyncpg.Connection, mod_id: uuid.UUID, claims: list[Declared]) -> list[asyncpg.Record]:
    """This project's claims on the pairs and their holders, each with its owner, and ours (one
    row with NULL claim columns when there is none)."""
    return await conn.fetch(
        """SELECT c.loader, c.manifest_mod_id, c.mod_id, c.state, c.asset_created_at, m.author_github_id AS owner,
                  me.author_github_id AS my_owner
           FROM mods me
           LEFT JOIN (mod_id_claims c JOIN mods m ON m.id = c.mod_id)
                  ON (c.loader, c.manifest_mod_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))
                 AND (c.mod_id = $1 OR c.state = 'holder')
           WHERE me.id = $1""",
        mod_id, [c.loader for c in claims], [c.mod_id for c in claims],
    )


@dataclass
class _Plan:
    demote: list[tuple] = field(default_factory=list)  # (holder row, its new state)
    update: list[tuple] = field(default_factory=list)  # (loader, id, state, asset time) of our claims
    insert: list[tuple] = field(default_factory=list)  # (loader, id, state, holder, asset time)

    @property
    def empty(self) -> bool:
        return not (self.demote or self.update or self.insert)


def _plan(mod_id: uuid.UUID, claims: list[Declared], rows: list) -> _Plan:
    """What claiming these pairs changes, given the current rows (``_claims_of``)."""
    my_owner = rows[0]["my_owner"] if rows else None
    present = [r for r in rows if r["mod_id"] is not None]
    mine = {(r["loader"], r["manifest_mod_id"]): r for r in present if r["mod_id"] == mod_id}
    holders = {(r["loader"], r["manifest_mod_id"]): r for r in present if r["state"] == "holder"}
    plan = _Plan()

    def other_state(row) -> str:
        return "same_owner" if row["owner"] == my_owner else "review"

    for c in claims:
        key = (c.loader, c.mod_id)
        own, holder = mine.get(key), holders.get(key)
        if holder is not None and holder["mod_id"] == mod_id:
            holder = None  # the hold is ours
        if own is None:
            if holder is not None and not _earlier(c.asset_created_at, holder["asset_created_at"]):
                plan.insert.append((c.loader, c.mod_id, other_state(holder), holder["mod_id"], c.asset_created_at))
                continue
            if holder is not None:  # an earlier asset: the hold is ours now
                plan.demote.append((holder, other_state(holder)))
            plan.insert.append((c.loader, c.mod_id, "holder", None, c.asset_created_at))
            continue
        at = c.asset_created_at if _earlier(c.asset_created_at, own["asset_created_at"]) else own["asset_created_at"]
        state = own["state"]
        # A rejected claim is an operator's: no clock takes it back.
        if state not in ("holder", "rejected") and (holder is None or _earlier(at, holder["asset_created_at"])):
            if holder is not None:
                plan.demote.append((holder, other_state(holder)))
            state = "holder"
        if state != own["state"] or at != own["asset_created_at"]:
            plan.update.append((c.loader, c.mod_id, state, at))
    return plan


async def take_own_ids(conn: asyncpg.Connection, mod_id: uuid.UUID, pairs: list[tuple[str, str]]) -> int:
    """A new project takes the hold on its own (loader, lower id) ``pairs`` from another project of
    the same repository: before 0025 one project carried every jar of its repository's releases,
    so it holds ids that are now another project's (``mono_beta`` held by ``mono_alpha``'s
    project). The sibling shares them (``same_owner``), as the same owner's projects do; claims
    naming it as holder name the new holder. Only within one repository: no other repository
    ever takes an id this way. Returns how many pairs moved."""
    if not pairs:
        return 0
    rows = await conn.fetch(
        """SELECT c.loader, c.manifest_mod_id, c.mod_id AS sibling
           FROM unnest($2::text[], $3::text[]) AS p(loader, mid)
           JOIN mod_id_claims c ON c.loader = p.loader AND c.manifest_mod_id = p.mid AND c.state = 'holder'
           JOIN mods s ON s.id = c.mod_id
           JOIN mods me ON me.id = $1
           JOIN mod_id_claims mine ON mine.mod_id = me.id AND mine.loader = c.loader
                                  AND mine.manifest_mod_id = c.manifest_mod_id AND mine.state = 'same_owner'
           WHERE s.github_repo_id = me.github_repo_id AND s.id <> me.id
           ORDER BY 1, 2
           FOR UPDATE OF c""",
        mod_id, [lo for lo, _ in pairs], [mid for _, mid in pairs],
    )
    for r in rows:
        key = (r["loader"], r["manifest_mod_id"])
        await conn.execute("""UPDATE mod_id_claims SET state = 'same_owner', holder_mod_id = $4
                              WHERE mod_id = $1 AND loader = $2 AND manifest_mod_id = $3""", r["sibling"], *key, mod_id)
        await conn.execute("""UPDATE mod_id_claims SET state = 'holder', holder_mod_id = NULL
                              WHERE mod_id = $1 AND loader = $2 AND manifest_mod_id = $3""", mod_id, *key)
        await conn.execute("""UPDATE mod_id_claims SET holder_mod_id = $1
                              WHERE holder_mod_id = $4 AND loader = $2 AND manifest_mod_id = $3 AND mod_id <> $1""",
                           mod_id, *key, r["sibling"])
    return len(rows)


async def take_slug(conn: asyncpg.Connection, holder: uuid.UUID, displaced: uuid.UUID) -> bool:
    """The slug made from a mod id follows the id's holder: a project that took the id over from
    another owner's project (an earlier publisher indexed later) takes that project's slug when it
    is the id's own, and the other project moves to its next free candidate (``-owner``, then
    ``-<repo id>``). The only time a slug changes. True when it moved."""
    rows = {r["id"]: r for r in await conn.fetch(
        """SELECT m.id, m.slug, m.manifest_id, m.github_repo_id,
                  (SELECT login FROM authors a WHERE a.github_id = m.author_github_id) AS login
           FROM mods m WHERE m.id = ANY($1::uuid[]) ORDER BY m.id FOR UPDATE""",
        [holder, displaced])}
    h, d = rows.get(holder), rows.get(displaced)
    if h is None or d is None or h["manifest_id"].lower() != d["manifest_id"].lower():
        return False
    base = slug_base(d["manifest_id"])
    if d["slug"] != base or h["slug"] == base:
        return False
    await conn.execute("UPDATE mods SET slug = $2 WHERE id = $1", holder, "x" + holder.hex)  # frees its slug
    for candidate in slug_candidates(d["manifest_id"], d["login"] or "", d["github_repo_id"], same_repo=True):
        if candidate != base and not await conn.fetchval("SELECT EXISTS (SELECT 1 FROM mods WHERE slug = $1)",
                                                         candidate):
            await conn.execute("UPDATE mods SET slug = $2, updated_at = now() WHERE id = $1", displaced, candidate)
            break
    else:  # unreachable: the repository id candidate is unique
        raise RuntimeError(f"no free slug for mod {displaced}")
    await conn.execute("UPDATE mods SET slug = $2, updated_at = now() WHERE id = $1", holder, base)
    return True


async def decide_claims(conn: asyncpg.Connection, version_id: uuid.UUID, decision: str, by: str) -> int:
    """An operator approved or rejected a version: the claims it is held for (those its files
    declare that are in review, or rejected when approving) take the decision. Returns how many."""
    assert decision in ("approved", "rejected")
    states = ["review", "rejected"] if decision == "approved" else ["review"]
    status = await conn.execute(
        f"""UPDATE mod_id_claims c SET state = $2, decided_by = $3, decided_at = now()
            FROM ({_DECLARED_BY_VERSIONS}) d
            WHERE c.mod_id = d.mod_id AND c.loader = d.loader AND c.manifest_mod_id = d.mid
              AND c.state = ANY($4::text[])""",
        [version_id], decision, by, states,
    )
    n = int(status.split()[-1])
    if n and decision == "approved":
        # A separate project now: trigger mods_distinct_name gives it its own name if it has the holder's.
        await conn.execute("UPDATE mods SET name = name WHERE id = (SELECT mod_id FROM mod_versions WHERE id = $1)",
                           version_id)
    return n


# (mod_id, loader, lower mod id) each of the versions $1 declares.
_DECLARED_BY_VERSIONS = """
    SELECT DISTINCT v.id AS version_id, v.mod_id, rec ->> 'loader' AS loader, lower(rec ->> 'mod_id') AS mid
    FROM mod_versions v
    JOIN version_files f ON f.version_id = v.id
    CROSS JOIN LATERAL jsonb_array_elements(CASE jsonb_typeof(f.manifests) WHEN 'array' THEN f.manifests
                                            ELSE '[]' END) AS rec
    WHERE v.id = ANY($1::uuid[])"""


async def may_show_card(conn: asyncpg.Connection, mod_id: uuid.UUID, loader: str, manifest_mod_id: str) -> bool:
    """May this project take its card (name, summary) from a manifest declaring this id? Not
    while another owner's project holds the id and this project's claim is not approved."""
    row = await conn.fetchrow(
        """SELECT (SELECT state FROM mod_id_claims WHERE mod_id = $1 AND loader = $2 AND manifest_mod_id = $3) AS mine,
                  (SELECT h.author_github_id IS DISTINCT FROM me.author_github_id
                   FROM mod_id_claims c JOIN mods h ON h.id = c.mod_id, mods me
                   WHERE c.loader = $2 AND c.manifest_mod_id = $3 AND c.state = 'holder'
                     AND c.mod_id <> $1 AND me.id = $1) AS other_holds""",
        mod_id, loader, manifest_mod_id.lower(),
    )
    if row["mine"] in ("holder", "same_owner", "approved"):
        return True
    return not (row["mine"] in REVIEW_STATES or row["other_holds"])


# ---- holds -----------------------------------------------------------------------------------

# The versions whose ownership holds may change now that the versions $1 were written: those
# versions, other projects' versions with the same bytes, every version held by these rules in
# the same projects (a claim may have been settled), and the versions of the displaced projects
# $2 that declare an id one of them lost.
_AFFECTED = f"""
    WITH mine AS (SELECT id, mod_id FROM mod_versions WHERE id = ANY($1::uuid[]))
    SELECT id FROM mine
    UNION
    SELECT o.version_id FROM version_files f
    JOIN version_files o ON o.content_sha256 = f.content_sha256 AND o.version_id <> f.version_id
    WHERE f.version_id = ANY($1::uuid[]) AND f.content_sha256 IS NOT NULL
    UNION
    SELECT v.id FROM mod_versions v
    WHERE v.mod_id IN (SELECT mod_id FROM mine) AND v.status = 'quarantined' AND {{held}}
    UNION
    SELECT v.id FROM mod_versions v
    JOIN version_files f ON f.version_id = v.id
    CROSS JOIN LATERAL jsonb_array_elements(CASE jsonb_typeof(f.manifests) WHEN 'array'
                                            THEN f.manifests ELSE '[]' END) AS rec
    JOIN mod_id_claims c ON c.mod_id = v.mod_id AND c.loader = rec ->> 'loader'
                        AND c.manifest_mod_id = lower(rec ->> 'mod_id')
    WHERE v.mod_id = ANY($2::uuid[]) AND NOT v.hidden AND c.holder_mod_id IN (SELECT mod_id FROM mine)"""

# The last decision on version v is one of these rules' holds.
_HELD_BY_US = f"""EXISTS (SELECT 1 FROM (SELECT d.actor, d.action FROM quarantine_decisions d
                          WHERE d.version_id = v.id ORDER BY d.created_at DESC, d.id DESC LIMIT 1) last
                         WHERE last.actor = '{ACTOR}' AND last.action = 'quarantined')"""


def _reasons_sql(version: str) -> str:
    """Why each version whose id satisfies ``version`` (SQL after the id: ``= v.id``,
    ``= ANY($1::uuid[])``) is held by these rules: its re-uploads and its claims in review."""
    return f"""
    SELECT rf.version_id, 'reupload' AS kind, rf.filename AS subject, om.repo_full_name AS other
    FROM version_files rf
    JOIN mod_versions rv ON rv.id = rf.version_id
    JOIN content_owners o ON o.sha256 = rf.content_sha256
    JOIN mods om ON om.id = o.mod_id
    WHERE rf.version_id {version} AND o.mod_id <> rv.mod_id
    UNION
    SELECT DISTINCT dv.id, 'claim', lower(rec ->> 'mod_id'), hm.repo_full_name
    FROM mod_versions dv
    JOIN version_files df ON df.version_id = dv.id
    CROSS JOIN LATERAL jsonb_array_elements(CASE jsonb_typeof(df.manifests) WHEN 'array'
                                            THEN df.manifests ELSE '[]' END) AS rec
    JOIN mod_id_claims c ON c.mod_id = dv.mod_id AND c.loader = rec ->> 'loader'
                        AND c.manifest_mod_id = lower(rec ->> 'mod_id')
    LEFT JOIN mods hm ON hm.id = c.holder_mod_id
    WHERE dv.id {version} AND c.state IN ('review', 'rejected')"""


def reason_text(kind: str, subject: str, other: str | None) -> str:
    """The words an author and an operator read."""
    if kind == "reupload":
        return f"re-upload: {subject} has the bytes first published by {other or 'another project'}"
    return f"claims the mod id {subject} of {other or 'another project'}"


async def reasons(conn: asyncpg.Connection, version_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[tuple[str, str]]]:
    """version id -> [(kind, text)]: ``reupload`` and ``claim`` reasons to hold it, in order."""
    out: dict[uuid.UUID, list[tuple[str, str]]] = {}
    for r in await conn.fetch(f"{_reasons_sql('= ANY($1::uuid[])')} ORDER BY 1, 2, 3", version_ids):
        out.setdefault(r["version_id"], []).append((r["kind"], reason_text(r["kind"], r["subject"], r["other"])))
    return out


async def reevaluate(conn: asyncpg.Connection, version_ids: list[uuid.UUID], *, pending_status: str = "pending_scan",
                     affected: bool = False, displaced: Iterable[uuid.UUID] = ()
                     ) -> tuple[list[Changed], set[uuid.UUID]]:
    """Hold every one of these versions that has a reason to be held and is not yet (nor
    rejected), and release those these rules hold that have none left. A released version goes
    where its files put it: quarantined while a scan finding no operator approved remains (or it
    is flagged suspicious), ``pending_status`` while a file awaits its scan, else public.
    ``affected``: the versions the writing of ``version_ids`` may have changed as well (``_AFFECTED``:
    other projects' copies of their bytes, the projects' held versions, the ``displaced``
    projects' versions declaring an id they lost), in the same statement.
    Roll-ups of the projects touched are refreshed. Returns what changed, and every one of the
    versions that has a reason to be held (held now, or rejected)."""
    if not version_ids:
        return [], set()
    chosen = (f"v.id IN ({_AFFECTED.format(held=_HELD_BY_US)})" if affected
              else "v.id = ANY($1::uuid[]) AND $2::uuid[] IS NOT NULL")  # ($2 typed though unused)
    rows = await conn.fetch(
        f"""SELECT v.id, v.mod_id, v.status, v.hidden, v.suspicious, v.version_number, m.slug,
                   {_HELD_BY_US} AS held,
                   (SELECT CASE
                        WHEN bool_or(f.scan_status IN ('suspicious', 'failed') AND NOT EXISTS (
                                 SELECT 1 FROM quarantine_decisions a WHERE a.version_id = v.id
                                 AND a.action = 'approved' AND f.sha256::text = ANY(a.file_sha256)))
                             OR v.suspicious THEN 'quarantined'
                        WHEN bool_or(f.scan_status = 'pending') THEN $3
                        ELSE 'public' END
                    FROM version_files f WHERE f.version_id = v.id) AS released,
                   COALESCE((SELECT json_agg(json_build_object('kind', r.kind, 'subject', r.subject,
                                                               'other', r.other) ORDER BY r.kind, r.subject)
                             FROM ({_reasons_sql('= v.id')}) r), '[]') AS reasons
            FROM mod_versions v JOIN mods m ON m.id = v.mod_id
            WHERE {chosen}
            ORDER BY v.id
            FOR UPDATE OF v""",
        list(version_ids), list(displaced), pending_status,
    )
    changed: list[Changed] = []
    held: set[uuid.UUID] = set()
    for r in rows:
        listed = r["reasons"] if isinstance(r["reasons"], list) else json.loads(r["reasons"])  # pools decode json
        found = [reason_text(x["kind"], x["subject"], x["other"]) for x in listed]
        if found:
            held.add(r["id"])
        if found and not r["held"] and r["status"] != "rejected":
            status, action, why = "quarantined", "quarantined", "; ".join(found)[:1000]
        elif not found and r["held"]:
            status, action, why = r["released"] or "pending_scan", "cleared", "no re-upload or disputed mod id left"
        else:
            continue
        await conn.execute("UPDATE mod_versions SET status = $2, updated_at = now() WHERE id = $1", r["id"], status)
        await conn.execute(
            "INSERT INTO quarantine_decisions (version_id, action, actor, reason) VALUES ($1, $2, $3, $4)",
            r["id"], action, ACTOR, why,
        )
        changed.append(Changed(r["id"], r["mod_id"], r["slug"], r["version_number"], status,
                               status == "public" and not r["hidden"], why))
    for mod_id in sorted({c.mod_id for c in changed}):
        await refresh_rollup(conn, mod_id)
    return changed, held


async def is_reupload(conn: asyncpg.Connection, version_id: uuid.UUID) -> list[str]:
    """The re-upload reasons of a version (an operator may not approve one: the bytes are another
    project's); empty when it has none."""
    return [text for kind, text in (await reasons(conn, [version_id])).get(version_id, []) if kind == "reupload"]
