"""Dev tooling around the real GitHub webhook examples in ``shared/github-payloads``.

* ``shared_dir()`` / ``payloads_dir()`` — where the examples live: ``$INDEXIUM_SHARED_DIR``
  if set, else ``<repo root>/../shared``. (This is the only place that reads that variable.)
* ``load_payload(name)`` / ``example_payloads(event)`` — the examples as dicts.
* ``asset_dict(...)`` — one release asset shaped like GitHub's release-asset schema (+ digest).
* ``with_assets(payload, assets)`` — a copy of a ``release`` example with assets added.
* ``asset_schema_problems(asset)`` — check an asset against ``schema.release-asset.json``.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import itertools
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

ENV_VAR = "INDEXIUM_SHARED_DIR"
_asset_ids = itertools.count(16837455)


def repo_root() -> Path:
    """The monorepo root: the nearest ancestor holding ``pyproject.toml`` and ``libs/``."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").is_file() and (parent / "libs").is_dir():
            return parent
    raise FileNotFoundError(f"no monorepo root above {here}")


def shared_dir() -> Path:
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override).expanduser().resolve()
    return (repo_root().parent / "shared").resolve()


def payloads_dir() -> Path:
    return shared_dir() / "github-payloads"


def available() -> bool:
    """Whether the example payloads are present (tests skip when they are not)."""
    return payloads_dir().is_dir()


def payload_files(event: str | None = None) -> list[Path]:
    """Example payload files (``schema.*`` excluded), optionally only one event's."""
    d = payloads_dir()
    files = sorted(p for p in d.glob("*.json") if not p.name.startswith("schema."))
    if event is not None:
        files = [p for p in files if p.name.split(".", 1)[0] == event]
    return files


def event_of(path: Path | str) -> str:
    """``release.published.payload.json`` → ``release``."""
    return Path(path).name.split(".", 1)[0]


def load_payload(name: str) -> dict:
    """Load an example by file name, with or without ``.json`` / ``.payload.json``."""
    d = payloads_dir()
    for candidate in (name, f"{name}.json", f"{name}.payload.json"):
        p = d / candidate
        if p.is_file():
            return json.loads(p.read_text())
    raise FileNotFoundError(f"no example payload {name!r} in {d}")


def example_payloads(event: str | None = None) -> dict[str, dict]:
    """``{file name: payload}`` for every example (of one event if given)."""
    return {p.name: json.loads(p.read_text()) for p in payload_files(event)}


def release_asset_schema() -> dict:
    return json.loads((payloads_dir() / "schema.release-asset.json").read_text())


def asset_dict(
    name: str,
    content: bytes | None = None,
    *,
    size: int | None = None,
    asset_id: int | None = None,
    repo_full_name: str = "Codertocat/Hello-World",
    tag: str = "0.0.1",
    web_base: str = "https://github.com",
    api_base: str = "https://api.github.com",
    content_type: str = "application/java-archive",
    label: str | None = None,
    download_count: int = 0,
    created_at: str = "2019-05-15T15:20:40Z",
    updated_at: str | None = None,
    digest: str | None | Any = ...,
    uploader: Mapping | None = None,
    browser_download_url: str | None = None,
) -> dict:
    """A release asset like GitHub's: ``digest`` defaults to ``sha256:<hex>`` of ``content``
    (null when no content is given); pass ``browser_download_url`` to point at a fake server."""
    if size is None:
        size = len(content) if content is not None else 0
    if digest is ...:
        digest = f"sha256:{hashlib.sha256(content).hexdigest()}" if content is not None else None
    aid = asset_id if asset_id is not None else next(_asset_ids)
    out = {
        "url": f"{api_base}/repos/{repo_full_name}/releases/assets/{aid}",
        "browser_download_url": browser_download_url
        or f"{web_base}/{repo_full_name}/releases/download/{quote(tag, safe='/')}/{quote(name, safe='')}",
        "id": aid,
        "node_id": base64.b64encode(f"012:ReleaseAsset{aid}".encode()).decode(),
        "name": name,
        "label": label,
        "state": "uploaded",
        "content_type": content_type,
        "size": size,
        "digest": digest,
        "download_count": download_count,
        "created_at": created_at,
        "updated_at": updated_at or created_at,
    }
    if uploader is not None:
        out["uploader"] = dict(uploader)
    return out


def with_assets(
    payload: Mapping,
    assets: Iterable[tuple[str, bytes] | Mapping],
    *,
    web_base: str | None = None,
    api_base: str | None = None,
    replace: bool = True,
) -> dict:
    """A deep copy of a ``release`` payload with assets. Items are ``(name, bytes)`` (turned
    into asset dicts whose URLs follow the payload's repository and tag, or ``web_base`` /
    ``api_base`` when given) or ready asset dicts. ``replace=False`` appends."""
    out = copy.deepcopy(dict(payload))
    release = out["release"]
    full_name = out["repository"]["full_name"]
    web = web_base or _base(out["repository"].get("html_url"), full_name, "https://github.com")
    api = api_base or _base(out["repository"].get("url"), f"repos/{full_name}", "https://api.github.com")
    created = release.get("published_at") or release.get("created_at") or "2019-05-15T15:20:40Z"
    built = []
    for item in assets:
        if isinstance(item, Mapping):
            built.append(dict(item))
            continue
        name, content = item
        built.append(
            asset_dict(
                name,
                content,
                repo_full_name=full_name,
                tag=release["tag_name"],
                web_base=web,
                api_base=api,
                created_at=created,
                uploader=release.get("author"),
            )
        )
    release["assets"] = (built if replace else list(release.get("assets") or []) + built)
    return out


def _base(url: str | None, suffix: str, default: str) -> str:
    if url and url.endswith("/" + suffix):
        return url[: -len(suffix) - 1]
    return default


def asset_schema_problems(asset: Mapping, schema: Mapping | None = None) -> list[str]:
    """Problems of ``asset`` against the release-asset schema: missing required keys, unknown
    keys (``digest`` is allowed: GitHub added it in 2025), basic types and the state enum."""
    schema = schema or release_asset_schema()
    props = dict(schema.get("properties", {}))
    props.setdefault("digest", {"type": ["string", "null"]})
    problems = [f"missing {k}" for k in schema.get("required", []) if k not in asset]
    kinds = {"string": str, "integer": int, "null": type(None), "object": dict}
    for key, value in asset.items():
        spec = props.get(key)
        if spec is None:
            problems.append(f"unexpected {key}")
            continue
        types = spec.get("type")
        if types is None:
            continue
        types = [types] if isinstance(types, str) else types
        if not any(isinstance(value, kinds.get(t, object)) and not isinstance(value, bool) for t in types):
            problems.append(f"{key}: {type(value).__name__} is not {types}")
        if "enum" in spec and value not in spec["enum"]:
            problems.append(f"{key}: {value!r} not in {spec['enum']}")
    return problems
