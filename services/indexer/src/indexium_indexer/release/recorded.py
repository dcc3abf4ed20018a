"""The repository as the GitHub role last recorded it, for every write the release role makes.

A release webhook carries the repository as it was when GitHub queued it; one delivered late
(a redelivery, a backlog) must not undo a rename or transfer the GitHub role applied since.
So the release role writes the recorded name, default branch, topics and owner, and the
webhook's own copy only for a repository that did not come through the App.
"""

from __future__ import annotations

import asyncpg
import msgspec

from indexium_contracts import github
from indexium_db.queries import github as github_q


def repository_as_recorded(repo: github.Repository, row) -> github.Repository:
    """The repository as the GitHub role last recorded it (renames, transfers, default branch,
    topics), when it came through the App: a release webhook delivered late carries the
    repository as it was then, and must not undo a rename applied since. The owner is the
    installation's account when the recorded name is under it (a repository belongs to the
    account its installation is on)."""
    if row is None:
        return repo
    full_name = row["full_name"]
    html_url = repo.html_url
    if html_url and html_url.endswith("/" + repo.full_name):
        html_url = html_url[: -len(repo.full_name)] + full_name
    owner = repo.owner
    login, account_id = row.get("account_login"), row.get("account_id")
    if login and account_id is not None and full_name.split("/", 1)[0].lower() == login.lower():
        owner = github.Account(id=account_id, login=login, type=row.get("account_type") or repo.owner.type)
    return msgspec.structs.replace(repo, full_name=full_name, name=full_name.split("/", 1)[-1], owner=owner,
                                   default_branch=row["default_branch"] or repo.default_branch,
                                   topics=list(row["topics"]), html_url=html_url)


async def recorded(conn: asyncpg.Connection, repo: github.Repository) -> tuple[github.Repository, asyncpg.Record | None]:
    """(the repository as recorded, the GitHub role's row or None), read on ``conn``."""
    row = await github_q.get_repository(conn, repo.id)
    return repository_as_recorded(repo, row), row
