"""An operator's decision on a held-back version: one code path for ``indexium_ops quarantine
approve|reject`` and the web site's review queue.

``decide`` records the decision and the version's new status in one transaction (the
approval binds to the files' sha256, so a rescan of the same bytes keeps it public);
``publish`` then sends ``VersionReviewed`` so every API replica drops its cached answers.
Publish after commit: a crash between the two leaves a decided version whose caches expire
by TTL, never an event for a decision that was rolled back.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import asyncpg

from indexium_contracts import versions as versions_contract
from indexium_db.queries import mods as mods_q
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
        status = "public" if decision == "approved" else "rejected"
        files = await scan_q.version_files(conn, version_id)
        await scan_q.set_status(conn, version_id, status, suspicious=False)
        await scan_q.add_decision(conn, version_id, decision, by, reason or "",
                                  [f["sha256"].strip() for f in files if f["sha256"]])
        await mods_q.refresh_rollup(conn, v["mod_id"])
    event = versions_contract.VersionReviewed(
        mod_id=str(v["mod_id"]), slug=v["slug"], version_id=str(version_id), version_number=v["version_number"],
        decision=decision, by=by, status=status, visible=status == "public" and not v["hidden"],
    )
    return Reviewed(version_id, v["slug"], v["version_number"], decision, status, event)


async def publish(js, reviewed: Reviewed) -> None:
    """``VersionReviewed`` on the VERSIONS stream (deduplicated per version, decision and reviewer)."""
    await js.publish(versions_contract.REVIEWED, versions_contract.encoder.encode(reviewed.event),
                     headers={"Nats-Msg-Id": f"VersionReviewed:{reviewed.version_id}:{reviewed.decision}:{reviewed.event.by}"})
