"""Database rows -> the JSON shapes the API promises (kept in one place; openapi.py describes them)."""

from __future__ import annotations

from datetime import datetime

BASE = "/api/v1"


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def _icon_url(row) -> str | None:
    return f"{BASE}/mods/{row['slug']}/icon" if row["has_icon"] else None


def hit(row) -> dict:
    return {
        "slug": row["slug"],
        "name": row["name"],
        "summary": row["summary"],
        "authors": list(row["authors"]),
        "categories": list(row["categories"]),
        "environment": row["environment"],
        "loaders": list(row["loaders"]),
        "game_versions": list(row["game_versions"]),
        "latest_version": row["latest_version"],
        "downloads": row["downloads"],
        "active_servers": row["active_servers"],
        "icon_url": _icon_url(row),
        "created_at": _iso(row["created_at"]),
        "updated_at": _iso(row["updated_at"]),
    }


def search(rows, total: int, limit: int, offset: int) -> dict:
    return {"hits": [hit(r) for r in rows], "total": total, "limit": limit, "offset": offset}


def mod(row) -> dict:
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
        "latest_mod_version": row["latest_mod_version"],
        "downloads": row["downloads"],
        "active_servers": row["active_servers"],
        "repository": row["repo_full_name"],
        "icon_url": _icon_url(row),
        "created_at": _iso(row["created_at"]),
        "updated_at": _iso(row["updated_at"]),
    }


def version(row) -> dict:
    return {
        "mod": row["mod_slug"],
        "version_number": row["version_number"],
        "version_type": row["version_type"],
        "name": row["name"],
        "changelog": row["changelog"],
        "loaders": list(row["loaders"]),
        "game_versions": list(row["game_versions"]),
        "published_at": _iso(row["published_at"]),
        "downloads": row["downloads"],
        "files": [_file(f) for f in row["files"]],
    }


def _file(f: dict) -> dict:
    hashes = f["hashes"]
    return {
        "filename": f["filename"],
        "url": f["url"],
        "size": f["size"],
        "primary": f["primary"],
        "loaders": f["loaders"],
        "game_versions": f["game_versions"],
        # The mod's own id and version as the file's manifest declares them (the release tag
        # is the version's version_number; a jar tagged v1.0.0 may declare 0.9.1).
        "mod_id": f.get("mod_id"),
        "mod_version": f.get("mod_version"),
        # char(n) columns: strip any padding; null until the scan stage has hashed the file
        "hashes": {k: (v.strip() if v else None) for k, v in hashes.items()},
    }


def game_version(v) -> dict:
    return {"version": v.id, "version_type": v.type, "date": v.release_time}
