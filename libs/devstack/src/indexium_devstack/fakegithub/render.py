"""Render state objects to JSON shaped like GitHub's REST responses and webhook payloads.

Key sets and order follow the real examples in ``shared/github-payloads`` (octokit/webhooks),
with URLs pointing at the fake's own hosts instead of api.github.com / github.com.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from .models import Asset, Installation, Release, Repo, User, iso


@dataclass(frozen=True)
class Urls:
    api: str  # like https://api.github.com (no trailing slash)
    web: str  # like https://github.com
    uploads: str  # like https://uploads.github.com


def user_json(u: User, urls: Urls) -> dict:
    api = f"{urls.api}/users/{u.login}"
    return {
        "login": u.login,
        "id": u.id,
        "node_id": u.node_id,
        "avatar_url": f"{urls.web}/avatars/u/{u.id}?v=4",
        "gravatar_id": "",
        "url": api,
        "html_url": f"{urls.web}/{u.login}",
        "followers_url": f"{api}/followers",
        "following_url": f"{api}/following{{/other_user}}",
        "gists_url": f"{api}/gists{{/gist_id}}",
        "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{api}/subscriptions",
        "organizations_url": f"{api}/orgs",
        "repos_url": f"{api}/repos",
        "events_url": f"{api}/events{{/privacy}}",
        "received_events_url": f"{api}/received_events",
        "type": u.type,
        "site_admin": u.site_admin,
    }


def repo_json(r: Repo, urls: Urls) -> dict:
    api = f"{urls.api}/repos/{r.full_name}"
    web = f"{urls.web}/{r.full_name}"
    host = urls.web.split("://", 1)[-1]
    return {
        "id": r.id,
        "node_id": r.node_id,
        "name": r.name,
        "full_name": r.full_name,
        "private": r.private,
        "owner": user_json(r.owner, urls),
        "html_url": web,
        "description": r.description,
        "fork": r.fork,
        "url": api,
        "forks_url": f"{api}/forks",
        "keys_url": f"{api}/keys{{/key_id}}",
        "collaborators_url": f"{api}/collaborators{{/collaborator}}",
        "teams_url": f"{api}/teams",
        "hooks_url": f"{api}/hooks",
        "issue_events_url": f"{api}/issues/events{{/number}}",
        "events_url": f"{api}/events",
        "assignees_url": f"{api}/assignees{{/user}}",
        "branches_url": f"{api}/branches{{/branch}}",
        "tags_url": f"{api}/tags",
        "blobs_url": f"{api}/git/blobs{{/sha}}",
        "git_tags_url": f"{api}/git/tags{{/sha}}",
        "git_refs_url": f"{api}/git/refs{{/sha}}",
        "trees_url": f"{api}/git/trees{{/sha}}",
        "statuses_url": f"{api}/statuses/{{sha}}",
        "languages_url": f"{api}/languages",
        "stargazers_url": f"{api}/stargazers",
        "contributors_url": f"{api}/contributors",
        "subscribers_url": f"{api}/subscribers",
        "subscription_url": f"{api}/subscription",
        "commits_url": f"{api}/commits{{/sha}}",
        "git_commits_url": f"{api}/git/commits{{/sha}}",
        "comments_url": f"{api}/comments{{/number}}",
        "issue_comment_url": f"{api}/issues/comments{{/number}}",
        "contents_url": f"{api}/contents/{{+path}}",
        "compare_url": f"{api}/compare/{{base}}...{{head}}",
        "merges_url": f"{api}/merges",
        "archive_url": f"{api}/{{archive_format}}{{/ref}}",
        "downloads_url": f"{api}/downloads",
        "issues_url": f"{api}/issues{{/number}}",
        "pulls_url": f"{api}/pulls{{/number}}",
        "milestones_url": f"{api}/milestones{{/number}}",
        "notifications_url": f"{api}/notifications{{?since,all,participating}}",
        "labels_url": f"{api}/labels{{/name}}",
        "releases_url": f"{api}/releases{{/id}}",
        "deployments_url": f"{api}/deployments",
        "created_at": iso(r.created_at),
        "updated_at": iso(r.updated_at),
        "pushed_at": iso(r.pushed_at),
        "git_url": f"git://{host}/{r.full_name}.git",
        "ssh_url": f"git@{host.split(':')[0]}:{r.full_name}.git",
        "clone_url": f"{web}.git",
        "svn_url": web,
        "homepage": r.homepage,
        "size": 0,
        "stargazers_count": r.stargazers_count,
        "watchers_count": r.stargazers_count,
        "language": r.language,
        "has_issues": True,
        "has_projects": True,
        "has_downloads": True,
        "has_wiki": True,
        "has_pages": False,
        "forks_count": 0,
        "mirror_url": None,
        "archived": r.archived,
        "disabled": False,
        "open_issues_count": 0,
        "license": r.license,
        "forks": 0,
        "open_issues": 0,
        "watchers": r.stargazers_count,
        "default_branch": r.default_branch,
        "is_template": False,
        "topics": list(r.topics),
        "visibility": "private" if r.private else "public",
        "web_commit_signoff_required": False,
        "custom_properties": {},
    }


def repo_short_json(r: Repo) -> dict:
    """The short repository form used in installation / installation_repositories events."""
    return {
        "id": r.id,
        "node_id": r.node_id,
        "name": r.name,
        "full_name": r.full_name,
        "private": r.private,
    }


def download_url(asset: Asset, urls: Urls) -> str:
    rel = asset.release
    return (
        f"{urls.web}/{rel.repo.full_name}/releases/download/"
        f"{quote(rel.tag_name, safe='/')}/{quote(asset.name, safe='')}"
    )


def asset_json(a: Asset, urls: Urls) -> dict:
    rel = a.release
    out = {
        "url": f"{urls.api}/repos/{rel.repo.full_name}/releases/assets/{a.id}",
        "browser_download_url": download_url(a, urls),
        "id": a.id,
        "node_id": a.node_id,
        "name": a.name,
        "label": a.label,
        "state": a.state,
        "content_type": a.content_type,
        "size": a.size,
        "digest": a.digest,
        "download_count": a.download_count,
        "created_at": iso(a.created_at),
        "updated_at": iso(a.updated_at),
    }
    if a.uploader is not None:
        out["uploader"] = user_json(a.uploader, urls)
    return out


def release_json(rel: Release, urls: Urls) -> dict:
    api = f"{urls.api}/repos/{rel.repo.full_name}"
    tag = quote(rel.tag_name, safe="/")
    return {
        "url": f"{api}/releases/{rel.id}",
        "assets_url": f"{api}/releases/{rel.id}/assets",
        "upload_url": f"{urls.uploads}/repos/{rel.repo.full_name}/releases/{rel.id}/assets{{?name,label}}",
        "html_url": (
            f"{urls.web}/{rel.repo.full_name}/releases/tag/{tag}"
            if not rel.draft
            else f"{urls.web}/{rel.repo.full_name}/releases/tag/untagged-{rel.id}"
        ),
        "id": rel.id,
        "node_id": rel.node_id,
        "tag_name": rel.tag_name,
        "target_commitish": rel.target_commitish,
        "name": rel.name,
        "draft": rel.draft,
        "author": user_json(rel.author, urls),
        "prerelease": rel.prerelease,
        "created_at": iso(rel.created_at),
        "published_at": iso(rel.published_at),
        "assets": [asset_json(a, urls) for a in rel.assets],
        "tarball_url": f"{api}/tarball/{tag}",
        "zipball_url": f"{api}/zipball/{tag}",
        "body": rel.body,
        "immutable": rel.immutable,
    }


def installation_json(inst: Installation, app_id: int, urls: Urls) -> dict:
    return {
        "id": inst.id,
        "account": user_json(inst.account, urls),
        "repository_selection": inst.repository_selection,
        "access_tokens_url": f"{urls.api}/app/installations/{inst.id}/access_tokens",
        "repositories_url": f"{urls.api}/installation/repositories",
        "html_url": f"{urls.web}/settings/installations/{inst.id}",
        "app_id": app_id,
        "target_id": inst.account.id,
        "target_type": inst.account.type,
        "permissions": dict(inst.permissions),
        "events": list(inst.events),
        "created_at": int(inst.created_at),
        "updated_at": int(inst.created_at),
        "single_file_name": None,
        "suspended_at": iso(inst.suspended_at),
        "suspended_by": None,
    }


def installation_ref(inst_id: int) -> dict:
    """The ``installation`` stub carried by repository events delivered to an App."""
    from .models import node_id

    return {"id": inst_id, "node_id": node_id("IntegrationInstallation", "023", inst_id)}
