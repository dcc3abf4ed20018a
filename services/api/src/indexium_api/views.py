"""Database rows -> the JSON shapes the API promises (kept in one place)."""

from __future__ import annotations

from datetime import datetime


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def hit(row) -> dict:
    return {
        "slug": row["slug"],
        "name": row["name"],
        "summary": row["summary"],
        "authors": list(row["authors"]),
        "categories": list(row["categories"]),
        "loaders": list(row["loaders"]),
        "game_versions": list(row["game_versions"]),
        "latest_version": row["latest_version"],
        "downloads": row["downloads"],
        "updated_at": _iso(row["updated_at"]),
    }


def mod(row, base_path: str) -> dict:
    return {
        "slug": row["slug"],
        "name": row["name"],
        "summary": row["summary"],
        "description": row["description"],
        "authors": list(row["authors"]),
        "owner": row["owner"],
        "licenses": list(row["licenses"]),
        "links": row["links"],
        "categories": list(row["categories"]),
        "environment": row["environment"],
        "loaders": list(row["loaders"]),
        "game_versions": list(row["game_versions"]),
        "latest_version": row["latest_version"],
        "downloads": row["downloads"],
        "repository": row["repo_full_name"],
        "icon_url": f"{base_path}/mods/{row['slug']}/icon" if row["has_icon"] else None,
        "created_at": _iso(row["created_at"]),
        "updated_at": _iso(row["updated_at"]),
    }


def version(row) -> dict:
    return {
        "version_number": row["version_number"],
        "version_type": row["version_type"],
        "name": row["name"],
        "changelog": row["changelog"],
        "loaders": list(row["loaders"]),
        "game_versions": list(row["game_versions"]),
        "published_at": _iso(row["published_at"]),
        "files": row["files"],
    }
