"""Pack archives for tests, benchmarks and the demo: resource, data and shader packs, .mrpack
modpacks, built in memory (``zipfile``), shaped like the real ones (docs/indexer.md "Packs")."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from typing import Any

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def zip_of(entries: dict[str, bytes | str | dict | list], *, filler: int = 0) -> bytes:
    """A zip of these entries; ``filler`` adds that many small texture-like files first (a real
    pack's bulk, in front of the manifest as a zip of a folder puts it)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(filler):
            z.writestr(f"assets/minecraft/textures/block/filler_{i}.png", PNG + i.to_bytes(4, "big"))
        for name, body in entries.items():
            if isinstance(body, (dict, list)):
                body = json.dumps(body)
            z.writestr(name, body.encode() if isinstance(body, str) else body)
    return out.getvalue()


def resource_pack(pack_format: int = 15, description: str = "A resource pack", *, icon: bool = True,
                  filler: int = 0, **extra: Any) -> bytes:
    entries: dict[str, Any] = {"pack.mcmeta": {"pack": {"pack_format": pack_format, "description": description,
                                                        **extra}},
                               "assets/minecraft/textures/item/apple.png": PNG}
    if icon:
        entries["pack.png"] = PNG
    return zip_of(entries, filler=filler)


def data_pack(pack_format: int = 15, description: str = "A data pack", **extra: Any) -> bytes:
    return zip_of({"pack.mcmeta": {"pack": {"pack_format": pack_format, "description": description, **extra}},
                   "data/example/functions/tick.mcfunction": "say hi\n"})


def shader_pack(*, iris_only: bool = False, filler: int = 0) -> bytes:
    props = "iris.features.required = SSBO\n" if iris_only else "oldLighting = false\n"
    return zip_of({"shaders/shaders.properties": props, "shaders/composite.fsh": "void main() {}\n"}, filler=filler)


def pack_file(path: str, data: bytes, url: str, *, env: dict | None = None) -> dict[str, Any]:
    """One ``files`` entry of modrinth.index.json for these bytes."""
    entry = {"path": path, "hashes": {"sha1": hashlib.sha1(data).hexdigest(), "sha512": hashlib.sha512(data).hexdigest()},
             "downloads": [url], "fileSize": len(data)}
    if env:
        entry["env"] = env
    return entry


def mrpack(files: list[dict[str, Any]], *, name: str = "Example Pack", version: str = "1.0.0",
           minecraft: str = "1.20.1", loader: tuple[str, str] | None = ("fabric-loader", "0.15.0"),
           overrides: dict[str, bytes] | None = None) -> bytes:
    deps = {"minecraft": minecraft, **({loader[0]: loader[1]} if loader else {})}
    index = {"formatVersion": 1, "game": "minecraft", "versionId": version, "name": name,
             "summary": f"{name}, a modpack", "files": files, "dependencies": deps}
    return zip_of({"modrinth.index.json": index, **{f"overrides/{k}": v for k, v in (overrides or {}).items()}})
