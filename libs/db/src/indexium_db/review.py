"""An operator's decision on a held-back version: one code path for ``indexium_ops quarantine
approve|reject`` and the web site's review queue (here, in the library both use, so the API
does not import the operator CLI).

``decide`` records the decision and the version's new status in one transaction (the
approval binds to the files' sha256, so a rescan of the same bytes keeps it public);
``publish`` then sends ``VersionReviewed`` so every API replica drops its cached answers.
Publish after commit: a crash between the two leaves a decided version whose caches expire
by TTL, never an event for a decision that was rolled back.

Ownership (``indexium_db.queries.ownership``): a version holding a re-upload of another
project's bytes cannot be approved (the bytes are that project's; reject it). Deciding a version
held because it claims another owner's mod id decides the claim: approved, the project becomes a
separate one (it never answers for the id while the holder is listed) and its other versions
held only for that claim are released too (``VersionStatusChanged`` for each); rejected, every
later release declaring the id stays held.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import asyncpg

from indexium_contracts import versions as versions_contract
from indexium_db.queries import mods as mods_q
from indexium_db.queries import ownership as ownership_q
from indexium_db.queries import scan as scan_q

ACTIONS = ("approve", "reject")
# What each action may be applied to.
REVIEWABLE = {"approve": ("quarantined", "rejected"), "reject": ("quarantined", "pending_scan", "public")}


class NotReviewable(Exception):
    """No such version, or its status does not allow this action (the message says which)."""


@dataclass(frozen=True)
class Reviewed:
    version_id: uuid.UUID
    slug: str
    version_number: str
    decision: str  # approved | rejected
    status: str  # the version's new status
    event: versions_contract.VersionReviewed
    # Other versions the decision released or held (a settled mod-id claim): their events.
    also: tuple[versions_contract.VersionStatusChanged, ...] = ()


async def decide(conn: asyncpg.Connection, version_id: uuid.UUID, action: str, by: str, reason: str) -> Reviewed:
    if action not in REVIEWABLE:
        raise NotReviewable(f"unknown action {action!r}")
    decision = "approved" if action == "approve" else "rejected"
    async with conn.transaction():
        v = await scan_q.lock_version(conn, version_id)
        if v is None:
            raise NotReviewable(f"{version_id}: no such version")
        if v["status"] not in REVIEWABLE[action]:
            raise NotReviewable(f"{version_id}: status is {v['status']}, nothing to {action}")
        if decision == "approved" and (reuploads := await ownership_q.is_reupload(conn, version_id)):
            raise NotReviewable(f"{version_id}: {'; '.join(reuploads)}; those bytes belong to the project that "
                                "published them first, so this version can only be rejected")
        status = "public" if decision == "approved" else "rejected"
        files = await scan_q.version_files(conn, version_id)
        await ownership_q.decide_claims(conn, version_id, decision, by)
        await scan_q.set_status(conn, version_id, status, suspicious=False)
        await scan_q.add_decision(conn, version_id, decision, by, reason or "",
                                  [f["sha256"].strip() for f in files if f["sha256"]])
        await mods_q.refresh_rollup(conn, v["mod_id"])
        # The project's other versions held only for the claim just settled go where their files put them.
        changed, _ = await ownership_q.reevaluate(conn, [version_id], affected=True)
        changed = [c for c in changed if c.version_id != version_id]
    event = versions_contract.VersionReviewed(
        mod_id=str(v["mod_id"]), slug=v["slug"], version_id=str(version_id), version_number=v["version_number"],
        decision=decision, by=by, status=status, visible=status == "public" and not v["hidden"],
    )
    also = tuple(versions_contract.VersionStatusChanged(
        mod_id=str(c.mod_id), slug=c.slug, version_id=str(c.version_id), version_number=c.version_number,
        status=c.status, visible=c.visible, reason=c.reason) for c in changed)
    return Reviewed(version_id, v["slug"], v["version_number"], decision, status, event, also)


async def publish(js, reviewed: Reviewed) -> None:
    """``VersionReviewed`` on the VERSIONS stream (deduplicated per version, decision and reviewer)."""
    await js.publish(versions_contract.REVIEWED, versions_contract.encoder.encode(reviewed.event),
                     headers={"Nats-Msg-Id": f"VersionReviewed:{reviewed.version_id}:{reviewed.decision}:{reviewed.event.by}"})
    for ev in reviewed.also:
        await js.publish(versions_contract.STATUS_CHANGED, versions_contract.encoder.encode(ev),
                         headers={"Nats-Msg-Id": f"VersionStatusChanged:{ev.version_id}:{reviewed.version_id}:"
                                                 f"{reviewed.decision}:{reviewed.event.by}"})
