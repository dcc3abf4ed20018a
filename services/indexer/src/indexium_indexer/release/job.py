"""Index one release webhook: read every mod jar's manifests, write one transaction, report events.

Pure orchestration: the consumer (``worker.py``) decides ack/nak/dead-letter from
what this raises. Nothing here acks or publishes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import uuid
from dataclasses import dataclass, field

import aiohttp
import asyncpg
import msgspec

from indexium_contracts import github, versions as version_events
from indexium_contracts.ingest import ReleaseReceived
from indexium_db.queries import deliveries as deliveries_q
from indexium_db.queries import mods as mods_q
from indexium_db.queries import versions as versions_q
from indexium_db.queries import github as github_q
from indexium_db.queries import ownership as ownership_q
from indexium_db.queries import scan as scan_q
from indexium_db.queries import skips as skips_q
from indexium_db.retry import in_transaction
from indexium_github import assets
from indexium_github.times import parse_time
from indexium_jar.zip import entrysizes
from indexium_jar.errors import JarReadError
from indexium_jar.gameversions import VersionTable, default_table
from indexium_jar import formats, identity
from indexium_jar.metadata import JarMetadata, read_metadata
from indexium_jar.model import PackRecord
from indexium_jar.packread import read_pack_metadata
from indexium_jar.http.remote import DownloadPolicy

from . import release_checks, skips
from .recorded import recorded, repository_as_recorded
from .. import ownership
from ..modcard import pack_card, release_card, shown

__all__ = ["JobResult", "PermanentJobError", "ReleaseIndexer", "repository_as_recorded"]

INDEX_ACTIONS = {"published", "released", "prereleased", "edited"}
HIDE_ACTIONS = {"unpublished", "deleted"}
# Jar failures that mean the bytes are damaged or doctored, or an asset that redirects off the
# allowed hosts (never fetched, never scanned): the version is held as suspicious.
OFF_HOST = "download_host_not_allowed"
CORRUPT_CODES = {"corrupt_zip", "crc_mismatch", OFF_HOST}
INDEXER_ACTOR = "indexer"  # quarantine_decisions.actor for the indexer's own holds


class PermanentJobError(Exception):
    """The job can never succeed as it is: dead-letter it with this category."""

    def __init__(self, category: str, message: str):
        super().__init__(message)
        self.category = category


@dataclass
class JobResult:
    outcome: str  # indexed | hidden | ignored
    events: list[version_events.VersionEvent]
    requests: int = 0
    bytes_fetched: int = 0
    # Jars of the release left out of the version: (asset name, code) — unreadable, or no manifest.
    skipped: list[tuple[str, str]] = field(default_factory=list)
    changed: bool = True  # False: what is served is as it was (the release sent again unchanged)


async def _hold(conn: asyncpg.Connection, version_id, reason: str) -> None:
    """Quarantine the version as the indexer's own hold (a decision row by ``indexer``), so
    the scan stage, which only lifts its own holds, leaves it to an operator or to a fixed
    release. Idempotent: a redelivery does not add a second decision; a version an operator
    approved or rejected is left to the operator."""
    history = await scan_q.decisions(conn, version_id)
    last = (history[-1]["actor"], history[-1]["action"]) if history else None
    if last == (INDEXER_ACTOR, "quarantined") or (last is not None and last[1] in ("approved", "rejected")):
        return  # held already, or an operator has decided on this version: theirs to change
    await versions_q.hold(conn, version_id)
    await scan_q.add_decision(conn, version_id, "quarantined", INDEXER_ACTOR, reason, [])


def _pack_file_rows(pack: PackRecord | None) -> list[versions_q.PackFileRow]:
    return [versions_q.PackFileRow(path=f.path, sha1=f.hashes["sha1"], sha512=f.hashes["sha512"],
                                   downloads=list(f.downloads), file_size=f.file_size, env_client=f.env_client,
                                   env_server=f.env_server) for f in pack.files] if pack is not None else []


def _pack_review(good: list) -> str | None:
    """Why a modpack of the release must be reviewed before it is listed (off-host downloads)."""
    reasons = [f"{a.name}: {r}" for a, md in good if md.pack is not None for r in md.pack.held_for_review]
    return "; ".join(reasons) if reasons else None


def _file_row(asset: github.ReleaseAsset, md: JarMetadata | None, sidecar: str | None, primary: bool,
              table: VersionTable) -> versions_q.FileRow:
    records = md.records if md is not None else []
    pack = md.pack if md is not None else None
    if pack is not None:
        return versions_q.FileRow(
            github_asset_id=asset.id, filename=asset.name, url=asset.browser_download_url, size=asset.size,
            content_type=asset.content_type, github_digest=asset.digest, sidecar_url=sidecar,
            loaders=sorted(set(pack.loaders)), game_versions=table.newest_first(pack.game_versions.versions),
            manifests=[], is_primary=primary, download_count=asset.download_count,
            asset_created_at=parse_time(asset.created_at) if asset.created_at else None,
            project_type=pack.project_type, pack=msgspec.to_builtins(msgspec.structs.replace(pack, files=())),
            game_versions_inferred=pack.game_versions.inferred, pack_files=_pack_file_rows(pack))
    return versions_q.FileRow(
        github_asset_id=asset.id,
        filename=asset.name,
        url=asset.browser_download_url,
        size=asset.size,
        content_type=asset.content_type,
        github_digest=asset.digest,
        sidecar_url=sidecar,
        loaders=sorted({r.loader for r in records}),
        game_versions=table.newest_first(v for r in records for v in r.game_versions.versions),
        manifests=[msgspec.to_builtins(r) for r in records],
        is_primary=primary,
        download_count=asset.download_count,
        asset_created_at=parse_time(asset.created_at) if asset.created_at else None,
        project_type=formats.project_type_of(r.loader for r in records) if records else None,
    )


def _identity_item(index: int, asset: github.ReleaseAsset, md: JarMetadata) -> identity.Item:
    """A readable file as the identity rules read it (``indexium_jar.identity``)."""
    if md.records:
        return identity.Item(index, identity.fold(md.records[0].mod_id.strip()), md.records[0].name, pack=False)
    return identity.Item(index, identity.pack_key(md.pack.project_type, md.pack.name, asset.name),
                         md.pack.name, pack=True)


@dataclass
class _Plan:
    """One project's part of a release, read before the transaction."""

    key: str  # its identity key in the repository
    items: list  # (asset, metadata), the primary first
    rows: list[versions_q.FileRow]
    primary: object  # the primary jar's first manifest record, or None for a pack
    pack: PackRecord | None
    pack_title: str | None  # a nameless pack's name when not the repository's
    only_project: bool  # the release's files make one project
    suspicious: bool  # a corrupt or off-host jar in the release: every version of it is held
    project_type: str
    review: str | None
    held: bool
    status: str
    inferred: bool
    declared: list
    icon: tuple | None


@dataclass
class _Written:
    """What the transaction wrote for one project (and, filled at its end, what to announce)."""

    plan: _Plan
    mod: dict
    version_id: uuid.UUID
    file_ids: list
    created: bool
    visible: bool
    before: str | None
    settled: ownership.Settled
    changed: bool = True
    announce: bool = True
    # The project's slug before this transaction, when it took the id's own slug over
    # (``take_slug``): announced, so every API replica drops what it holds under it.
    moved_from: str | None = None


async def _all_or_nothing(coros: list) -> list:
    """Run concurrently; on the first exception cancel the rest and raise it (not a group)."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in tasks:
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise task.exception()
        return [t.result() for t in tasks]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


class ReleaseIndexer:
    def __init__(self, pool: asyncpg.Pool, session: aiohttp.ClientSession, policy: DownloadPolicy,
                 *, publish_before_scan: bool, table: VersionTable | None = None, jar_concurrency: int = 4):
        self._pool, self._session, self._policy = pool, session, policy
        self._publish_before_scan = publish_before_scan
        self._table = table or default_table()
        self._jar_slots = asyncio.Semaphore(jar_concurrency)

    async def handle(self, event: ReleaseReceived) -> JobResult:
        hook = event.webhook
        if hook.action in HIDE_ACTIONS:
            return await self._hide(event)
        if hook.action not in INDEX_ACTIONS or hook.release.draft:
            await self._record(event, "ignored")
            return JobResult("ignored", [])
        jars = assets.mod_jars(hook.release.assets)
        if not jars:
            await skips.store_alone(self._pool, hook, skips.reasons(hook.release.assets, []))
            await self._record(event, "ignored")
            return JobResult("ignored", [])
        if (problem := release_checks.tag_problem(hook.release.tag_name)) is not None:
            # The author sees why beside each file of the release (dashboard), and in the dead letter.
            await skips.store_alone(self._pool, hook, [skips_q.Skip(a.id, a.name, "bad_tag", problem) for a in jars])
            raise PermanentJobError("bad_tag", problem)
        # A retryable failure of one jar fails the job at once; the other reads are cancelled.
        release_text = f"{hook.release.name or ''} {hook.release.tag_name}"  # where a shader pack states its game
        read = await _all_or_nothing([self._read(a, release_text) for a in jars])
        try:
            return await self._write(event, list(zip(jars, read)))
        except asyncpg.DataError as exc:
            # A value PostgreSQL refuses (SQLSTATE class 22: too long, NUL, ...) that the
            # checks above did not foresee: no retry can store it, so fail now, naming it.
            raise PermanentJobError("unstorable_release",
                                    f"A field of the release cannot be stored: {exc}.") from exc

    async def _read(self, asset: github.ReleaseAsset, release_text: str = "") -> JarMetadata | JarReadError:
        if (bad := release_checks.url_problem(asset)) is not None:
            return bad
        async with self._jar_slots:
            try:
                if assets.is_jar(asset.name):
                    md = await read_metadata(self._session, asset.browser_download_url, self._policy, self._table,
                                             with_entry_sizes=True)
                else:  # a pack: resource, data or shader pack, .mrpack (a zip with a mod manifest reads as a jar)
                    md = await read_pack_metadata(self._session, asset.browser_download_url, self._policy,
                                                  self._table, file_name=asset.name, release_text=release_text,
                                                  with_entry_sizes=True)
                md.records = release_checks.records_without_nul(md.records)
                return md
            except JarReadError as exc:
                if exc.retryable:
                    raise
                return exc

    async def _write(self, event: ReleaseReceived, read: list) -> JobResult:
        """Plan, commit, events: what each project's version of the release is (``_plans``, no
        I/O), one transaction writing them all (``_commit``), then what the writes announce
        (``_events``)."""
        release = event.webhook.release
        good = [(a, md) for a, md in read if isinstance(md, JarMetadata) and md.readable]
        # A mod's jar is the primary file when the release has one; else the first pack.
        good.sort(key=lambda item: not item[1].records)
        failed = [(a, md) for a, md in read if isinstance(md, JarReadError)]
        # A corrupt jar marks the version suspicious: with good jars beside it, what can be read
        # is indexed and the version held for review; alone, the version is recorded held
        # (when the mod exists) and the job still goes to the dead letters.
        # (A pack-suffix asset that is no zip is a file of another kind named .zip, not doctored
        # bytes of the release: skipped with its code, no hold, unless it redirected off-host.)
        suspicious = any(exc.code in CORRUPT_CODES and (assets.is_jar(a.name) or exc.code == OFF_HOST)
                         for a, exc in failed)
        left_out = skips.reasons(release.assets, read)
        if not good:
            return await self._nothing_readable(event, read, failed, suspicious, left_out)
        version_number = release.tag_name.strip()
        plans = self._plans(release, good, suspicious)

        async def commit(conn: asyncpg.Connection):
            return await self._commit(conn, event, plans, version_number, failed, left_out,
                                      primary_file=good[0][0].name)

        # Deadlocks, serialization failures and a dropped connection re-run the whole transaction.
        written, gone = await in_transaction(self._pool, commit)
        skipped = [(a.name, md.code) for a, md in failed] + [
            (a.name, md.skip.code if md.skip else md.problems[0].code if md.problems else "no_manifest")
            for a, md in read if isinstance(md, JarMetadata) and not md.readable]
        return JobResult(
            # Unchanged (GitHub redelivered, an `edited` repeating the release) and nothing left
            # to scan: nothing to announce, no cache to drop (docs/messaging.md).
            "indexed", _events(written, gone, version_number), skipped=skipped,
            changed=any(w.changed for w in written) or bool(gone),
            requests=sum(md.requests for _, md in read if isinstance(md, JarMetadata)),
            bytes_fetched=sum(md.bytes_fetched for _, md in read if isinstance(md, JarMetadata)),
        )

    async def _nothing_readable(self, event: ReleaseReceived, read: list, failed: list, suspicious: bool,
                                left_out) -> JobResult:
        """A release none of whose files could be indexed: ignored when each is no file we list
        (with its reason), else recorded (held when a file looked doctored) and dead-lettered."""
        if suspicious:
            await self._hold_suspicious(event, read, left_out)
        else:
            await skips.store_alone(self._pool, event.webhook, left_out)
        if failed:
            asset, exc = next(((a, e) for a, e in failed if e.code in CORRUPT_CODES), failed[0])
            raise PermanentJobError(exc.code, f"{asset.name}: {exc}")
        if all(md.skip is not None for _, md in read):
            # Only archives that are no pack we list (a sources zip, a CurseForge pack, a zip of
            # other files), as a release with no mod file at all: ignored, each with its reason.
            await self._record(event, "ignored")
            return JobResult("ignored", [], skipped=[(a.name, md.skip.code) for a, md in read])
        problems = [p for _, md in read for p in md.problems]
        detail = "; ".join(f"{p.manifest_path}: {p.code}" for p in problems[:5]) or "no manifest found"
        raise PermanentJobError("no_manifest", f"no mod manifest in any jar ({detail})")

    def _plans(self, release, good: list, suspicious: bool) -> list[_Plan]:
        """One version per project the release's files make (indexium_jar.identity): loader
        variants of one mod are one project, a second mod or a pack beside it another."""
        sidecars = assets.sidecars(release.assets)
        groups = identity.group([_identity_item(i, a, md) for i, (a, md) in enumerate(good)])
        only_project = len(groups) == 1
        return [self._plan(release, [good[i] for i in g.indexes], g.key, sidecars, suspicious, only_project)
                for g in groups]

    async def _commit(self, conn: asyncpg.Connection, event: ReleaseReceived, plans: list[_Plan],
                      version_number: str, failed: list, left_out, *,
                      primary_file: str) -> tuple[list[_Written], list]:
        """The release's one transaction: the repository's row, every plan's project and version,
        the skips, versions whose files left the release, rollups, and the job's record."""
        hook = event.webhook
        release = hook.release
        published_at = parse_time(release.published_at) or parse_time(release.created_at)
        repo, app_row = await recorded(conn, hook.repository)  # read in the same transaction
        await mods_q.upsert_author(conn, repo.owner.id, repo.owner.login)
        await mods_q.update_repository(
            conn, repo.id, full_name=repo.full_name,
            default_branch=repo.default_branch or "main", categories=list(repo.topics),
            repo_url=repo.page_url, fork=repo.fork,
        )
        found, previous = await self._projects(conn, repo, release, plans)
        written = [await self._write_project(conn, release, repo, plan, mod, version_number, published_at, failed)
                   for plan, mod in zip(plans, found)]
        await skips.store(conn, hook, repo, left_out, release_indexed=True)
        # A project whose files left this release (an edited release, or a release indexed
        # into one project before 0025 whose files now go to theirs): its version is hidden.
        # A release none of whose files was indexed before (the common case) has no such version.
        gone = await versions_q.hide_release(conn, repo.id, release.id, "its files left the release",
                                             except_versions=[w.version_id for w in written]) if previous else []
        if app_row is not None:
            # A repository that came through the GitHub App: its hidden state (uninstalled,
            # suspended, removed, private, deleted) applies to a project created only now, and
            # a repository skipped as "not a mod" is one now (its other releases backfill).
            await github_q.sync_visibility(conn, repo.id)
            if app_row["state"] == "skipped":
                await github_q.set_evaluation(conn, repo.id, state="registered", skip_reason=None,
                                              manifest_source=f"release:{release.tag_name}/{primary_file}")
        for mod_id in {w.mod["id"] for w in written} | {r["mod_id"] for r in gone}:
            await mods_q.refresh_rollup(conn, mod_id)
        for w in written:
            if w.plan.held or not w.created or w.settled.touched(w.version_id):
                # Held or a hold lifted since the upsert: ask again. Nothing else in this
                # transaction changes a version's status or hidden flag.
                w.visible = await versions_q.is_visible(conn, w.version_id)
            w.changed = w.created or w.before != await versions_q.served_state(conn, w.mod["id"], version_number)
            # Unchanged: announced only if the scan still has work (the first run of this job may
            # have committed and died before publishing), and then as changed=False.
            w.announce = w.changed or await versions_q.awaits_scan(conn, w.version_id)
        await self._record(event, "indexed", conn=conn)
        return written, gone

    def _plan(self, release, items: list, key: str, sidecars: dict, suspicious: bool,
              only_project: bool) -> _Plan:
        """What one project's version of the release is, before any write."""
        rows = [_file_row(a, md, sidecars.get(a.name), i == 0, self._table) for i, (a, md) in enumerate(items)]
        primary = items[0][1].records[0] if items[0][1].records else None
        pack, pack_asset = items[0][1].pack, items[0][0]
        # A pack without a name of its own: the repository's name when it is the release's only
        # project, else its file's (a mod's resource pack is not named like the mod).
        pack_title = None if primary is not None else (
            None if only_project or pack.name else identity.pack_name(pack_asset.name))
        review = _pack_review(items)
        held = suspicious or review is not None
        with_versions = [r for r in rows if r.game_versions]
        return _Plan(
            key=key, items=items, rows=rows, primary=primary, pack=pack, pack_title=pack_title, suspicious=suspicious,
            only_project=only_project,
            project_type=rows[0].project_type or formats.DEFAULT_PROJECT_TYPE, review=review, held=held,
            status="quarantined" if held else ("public" if self._publish_before_scan else "pending_scan"),
            inferred=bool(with_versions) and all(r.game_versions_inferred for r in with_versions),
            declared=ownership_q.declared((r.manifests, r.asset_created_at) for r in rows),
            icon=next((md.icon for _, md in items if md.icon), None),
        )

    async def _projects(self, conn: asyncpg.Connection, repo, release, plans: list[_Plan]) -> tuple[list, dict]:
        """The existing project of each plan, or None for a new one (docs/indexer.md, "One
        repository, several projects"): by identity key; else the project whose version of this
        release already holds the plan's files (a release indexed before, sent again), unless
        another plan's key names it; else, for a release of one project, the repository's one
        project of the same name (a mod that changed its id: re-keyed); else, for a pack, the
        repository's one pack project of its type when the release has one pack of that type (a
        renamed pack file). Files that move to another project are detached from the version
        they leave first, so the bytes' claim follows them within the repository. Also returns
        where the release's files were before (asset id -> project)."""
        found = [await mods_q.get_by_identity(conn, repo.id, p.key) for p in plans]
        taken = {m["id"] for m in found if m is not None}
        previous = await versions_q.release_asset_projects(conn, repo.id, release.id)
        for i, plan in enumerate(plans):
            if found[i] is not None:
                continue
            owners = {previous.get(a.id) for a, _ in plan.items}
            if len(owners) == 1 and (was := next(iter(owners))) is not None and was not in taken:
                found[i] = await mods_q.lock(conn, was)
            elif plan.only_project and plan.primary is not None:
                sole = await mods_q.sole_project(conn, repo.id)
                if sole is not None and sole["id"] not in taken and identity.same_name(sole["name"], plan.primary.name
                                                                                        or plan.primary.mod_id):
                    await mods_q.set_identity(conn, sole["id"], plan.key)
                    found[i] = sole
            elif plan.primary is None and sum(p.primary is None and p.project_type == plan.project_type
                                              for p in plans) == 1:
                packs = [m for m in await mods_q.pack_projects(conn, repo.id, plan.project_type) if m["id"] not in taken]
                if len(packs) == 1:
                    found[i] = packs[0]
            if found[i] is not None:
                taken.add(found[i]["id"])
        moving = [a.id for plan, mod in zip(plans, found) for a, _ in plan.items
                  if a.id in previous and (mod is None or previous[a.id] != mod["id"])]
        await versions_q.detach_files(conn, repo.id, release.id, moving)
        return found, previous

    async def _write_project(self, conn: asyncpg.Connection, release, repo, plan: _Plan, mod, version_number: str,
                             published_at, failed: list) -> _Written:
        """One project's version of the release: the project found (``_projects``) or made, its
        version and files, holds, the ownership rules, its card and icon."""
        card = release_card(plan.primary, repo) if plan.primary is not None else pack_card(
            plan.pack, repo, name=plan.pack_title)
        before = await versions_q.served_state(conn, mod["id"], version_number) if mod else None
        newest_card, new_project = False, mod is None
        if mod is None:
            mod = await mods_q.create(
                conn, github_repo_id=repo.id, repo_full_name=repo.full_name, owner_id=repo.owner.id,
                owner_login=repo.owner.login, identity=plan.key,
                manifest_id=plan.primary.mod_id if plan.primary is not None else card.name,
                default_branch=repo.default_branch or "main", categories=list(repo.topics), card=card,
                repo_url=repo.page_url, fork=repo.fork, project_type=plan.project_type,
            )
        else:
            newest = mod["last_published_at"]
            newest_card = newest is None or published_at is None or published_at >= newest
        rows = plan.rows
        version_id, created, visible = await versions_q.save_version(
            conn, mod_id=mod["id"], version_number=version_number, github_release_id=release.id,
            tag_name=release.tag_name, name=shown(release.name or release.tag_name),
            changelog=shown(release.body or ""), version_type=assets.version_type(release.tag_name, release.prerelease),
            published_at=published_at, status=plan.status,
            game_versions=self._table.newest_first(g for r in rows for g in r.game_versions),
            loaders=sorted({l for r in rows for l in r.loaders}), suspicious=plan.suspicious,
            game_versions_inferred=plan.inferred,
        )
        # A version created just now has no files to drop and no hold of ours to lift:
        # two round trips fewer for the common case, a new release.
        file_ids = await versions_q.replace_files(conn, version_id, rows, new_version=created)
        if plan.suspicious:
            await _hold(conn, version_id, "unreadable jar: " + "; ".join(
                f"{a.name}: {e.code}" for a, e in failed if e.code in CORRUPT_CODES))
        elif plan.review is not None:
            await _hold(conn, version_id, f"modpack downloads from outside the allowed hosts: {plan.review}")
        elif not created:
            await self._lift_own_hold(conn, version_id)
            if not self._publish_before_scan:
                await versions_q.hold_for_scan(conn, version_id)  # new bytes: not served unscanned
        # The bytes (GitHub's digests, claimed as the files were written) and the mod ids: a
        # re-upload or another owner's mod id holds the version, and its jar gives the project
        # neither its name nor its icon.
        settled = await ownership.settle(conn, mod_id=mod["id"], version_id=version_id, declared=plan.declared,
                                         pending_status=self._released_status(), new_project=new_project)
        if new_project:  # its own ids, held by the project that carried its jars before 0025
            await ownership_q.take_own_ids(conn, mod["id"], [(d.loader, d.mod_id) for d in plan.declared
                                                             if identity.mod_key(d.mod_id) == plan.key])
        moved_from = None
        if settled.slug is not None:  # took the id's own slug over from an impostor indexed first
            moved_from = None if new_project else mod["slug"]  # (a new project's first slug was never served)
            mod = {**dict(mod), "slug": settled.slug}
        if newest_card and not settled.held(version_id):
            await mods_q.update_card(conn, mod["id"], **dataclasses.asdict(card))
            await mods_q.set_project_type(conn, mod["id"], plan.project_type)
        if plan.icon is not None and not settled.held(version_id):
            await mods_q.upsert_icon(conn, mod["id"], plan.icon[0], plan.icon[1], _etag(plan.icon[1]))
        return _Written(plan=plan, mod=mod, version_id=version_id, file_ids=file_ids, created=created,
                        visible=visible, before=before, settled=settled, moved_from=moved_from)

    async def _hold_suspicious(self, event: ReleaseReceived, read: list, left_out: list[skips_q.Skip]) -> None:
        """Record why the release's assets were left out and, if the repository has a project,
        its version as quarantined and suspicious (in the repository's most recently published
        project: no file read says which of its projects the release is).

        No mod is created from a jar we could not read: without a manifest there is no id
        to make a slug from. Committed before the job is dead-lettered. Every write uses the
        repository as recorded, as _write does: a webhook queued before a rename or transfer
        must not undo it.
        """
        hook = event.webhook
        release = hook.release
        sidecars = assets.sidecars(release.assets)
        rows = [_file_row(a, md if isinstance(md, JarMetadata) else None, sidecars.get(a.name), i == 0, self._table)
                for i, (a, md) in enumerate(read)]
        async with self._pool.acquire() as conn, conn.transaction():
            repo, _ = await recorded(conn, hook.repository)
            await skips.store(conn, hook, repo, left_out, release_indexed=False)
            mod = await mods_q.latest_of_repo(conn, repo.id)  # nothing read says which project it is
            if mod is None:
                return
            await mods_q.update_repository(
                conn, repo.id, full_name=repo.full_name,
                default_branch=repo.default_branch or "main", categories=list(repo.topics),
            )
            version_id = await versions_q.upsert_version(
                conn, mod_id=mod["id"], version_number=release.tag_name.strip(), github_release_id=release.id,
                tag_name=release.tag_name, name=shown(release.name or release.tag_name),
                changelog=shown(release.body or ""),
                version_type=assets.version_type(release.tag_name, release.prerelease),
                published_at=parse_time(release.published_at) or parse_time(release.created_at),
                status="quarantined", game_versions=[], loaders=[], suspicious=True,
            )
            await versions_q.replace_files(conn, version_id, rows)
            await _hold(conn, version_id, "unreadable jar: " + "; ".join(
                f"{a.name}: {md.code}" for a, md in read if isinstance(md, JarReadError) and md.code in CORRUPT_CODES))
            await mods_q.refresh_rollup(conn, mod["id"])

    def _released_status(self) -> str:
        """Where a version goes when a hold is lifted: the scan decides again."""
        return "public" if self._publish_before_scan else "pending_scan"

    async def _lift_own_hold(self, conn: asyncpg.Connection, version_id) -> None:
        """The release was fixed (no corrupt or off-host jar any more): a hold the indexer
        itself put on the version is lifted, and the scan decides again. Holds by the scan or
        an operator are theirs to lift."""
        history = await scan_q.decisions(conn, version_id)
        if not history or (history[-1]["actor"], history[-1]["action"]) != (INDEXER_ACTOR, "quarantined"):
            return
        await versions_q.lift_hold(conn, version_id, self._released_status())
        await scan_q.add_decision(conn, version_id, "cleared", INDEXER_ACTOR,
                                  "the release no longer has a corrupt or off-host jar", [])

    async def _hide(self, event: ReleaseReceived) -> JobResult:
        hook = event.webhook
        reason = f"release {hook.action}"
        async def commit(conn: asyncpg.Connection):
            hidden = await versions_q.hide_release(conn, hook.repository.id, hook.release.id, reason)
            for mod_id in {r["mod_id"] for r in hidden}:
                await mods_q.refresh_rollup(conn, mod_id)
            await self._record(event, "hidden", conn=conn)
            return hidden

        hidden = await in_transaction(self._pool, commit)
        events = [
            version_events.VersionHidden(mod_id=str(r["mod_id"]), slug=r["slug"], version_id=str(r["id"]),
                                         version_number=r["version_number"], reason=reason)
            for r in hidden
        ]
        return JobResult("hidden", events)

    async def _record(self, event: ReleaseReceived, outcome: str, conn=None) -> None:
        args = (event.delivery_id, "release", event.webhook.action, parse_time(event.received_at), outcome)
        if conn is not None:
            await deliveries_q.record(conn, *args)
            return
        async with self._pool.acquire() as c:
            await deliveries_q.record(c, *args)


def _etag(data: bytes) -> str:
    return '"' + hashlib.sha256(data).hexdigest()[:32] + '"'


def _events(written: list[_Written], gone: list, version_number: str) -> list:
    """What a committed release announces: each changed (or still unscanned) version with its
    files, every other version the ownership rules changed (once each), and the versions
    hidden because their files left the release."""
    events: list = []
    for w in written:
        if not w.announce:
            continue
        files = [
            version_events.FileRef(file_id=str(fid), filename=r.filename, url=r.url, size=r.size,
                                   digest=r.github_digest, sidecar_url=r.sidecar_url, entry_sizes=sizes)
            for fid, r, sizes in zip(w.file_ids, w.plan.rows,
                                     entrysizes.within_budget(md.entry_sizes for _, md in w.plan.items))
        ]
        events.append(version_events.VersionIndexed(
            mod_id=str(w.mod["id"]), slug=w.mod["slug"], version_id=str(w.version_id),
            version_number=version_number, visible=bool(w.visible), files=files, changed=w.changed,
        ))
    # Other versions the ownership rules changed are announced whatever these did (once each).
    seen = {str(w.version_id) for w in written}
    for w in written:
        for ev in w.settled.events():
            if ev.version_id not in seen:
                seen.add(ev.version_id)
                events.append(ev)
    events += [version_events.VersionHidden(mod_id=str(r["mod_id"]), slug=r["slug"], version_id=str(r["id"]),
                                            version_number=r["version_number"], reason="its files left the release")
               for r in gone]
    # A project that took the id's own slug over leaves its old one: no row has it any more, so
    # only an event naming it makes the API replicas drop its search entry and cached answers.
    events += [version_events.ModChanged(mod_id=str(w.mod["id"]), slug=w.moved_from, visible=True,
                                         cause="ownership.slug_moved")
               for w in written if w.moved_from is not None]
    return events
