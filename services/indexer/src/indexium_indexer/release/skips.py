"""Why each asset of a release did not become a version file (``release_asset_skips``).

Nothing a release carries is left out silently: an asset that is not a mod file, a jar the
reader could not read, a jar without a manifest any loader reads — each gets a code and a
reason the author can read, stored with the release (replaced whenever the release is
processed again), shown by ``indexium_ops skipped`` and on the author's dashboard.
"""

from __future__ import annotations

import asyncpg

from indexium_contracts import github
from indexium_db.queries import skips as skips_q
from indexium_github import assets
from indexium_jar import formats
from indexium_jar.errors import JarReadError

from .recorded import recorded

NO_MANIFEST = formats.no_manifest_reason()


def reasons(release_assets: list[github.ReleaseAsset], read: list) -> list[skips_q.Skip]:
    """``read``: (asset, JarMetadata | JarReadError) for the mod files that were read."""
    out = [skips_q.Skip(a.id, a.name, code, reason) for a, code, reason in assets.left_out(release_assets)]
    for asset, md in read:
        if isinstance(md, JarReadError):
            out.append(skips_q.Skip(asset.id, asset.name, md.code, str(md) or md.code))
        elif md.skip is not None:  # an archive that is no pack Indexium lists (packs/notpacks.py)
            out.append(skips_q.Skip(asset.id, asset.name, md.skip.code, md.skip.reason))
        elif not md.readable:
            problems = list(md.problems)
            code = problems[0].code if problems else "no_manifest"
            reason = "; ".join(f"{p.manifest_path}: {p.message}" for p in problems) or NO_MANIFEST
            out.append(skips_q.Skip(asset.id, asset.name, code, reason))
    return out


async def store(conn: asyncpg.Connection, hook: github.ReleaseWebhook, repo: github.Repository,
                found: list[skips_q.Skip], *, release_indexed: bool) -> None:
    """``repo``: the repository as recorded (``recorded.repository_as_recorded``), never the
    webhook's copy, which a late delivery carries from before a rename or transfer."""
    await skips_q.replace_for_release(
        conn, github_release_id=hook.release.id, github_repo_id=repo.id, owner_github_id=repo.owner.id,
        repo_full_name=repo.full_name, tag_name=hook.release.tag_name, skips=found,
        release_indexed=release_indexed,
    )


async def store_alone(pool: asyncpg.Pool, hook: github.ReleaseWebhook, found: list[skips_q.Skip]) -> None:
    """For a release nothing of which was indexed (committed before the job ends)."""
    async with pool.acquire() as conn, conn.transaction():
        repo, _ = await recorded(conn, hook.repository)
        await store(conn, hook, repo, found, release_indexed=False)
