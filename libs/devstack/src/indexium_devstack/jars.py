"""Sample Minecraft mod jars, built for real with ``zipfile`` (deterministic bytes).

Pure functions: the same arguments always give the same jar. Each builder writes a
``META-INF/MANIFEST.MF``, the loader's metadata file(s), an optional PNG icon, a mixin
config, a language file and ``.class``-named filler entries.

* ``fabric_jar``      → ``fabric.mod.json``
* ``quilt_jar``       → ``quilt.mod.json``
* ``forge_jar``       → ``META-INF/mods.toml``
* ``neoforge_jar``    → ``META-INF/neoforge.mods.toml``
* ``mcmod_jar``       → ``mcmod.info`` (legacy Forge, ≤ 1.12.2)
* ``litemod_jar``     → ``litemod.json`` (LiteLoader; released as ``.litemod``)
* ``coremod_jar``     → a 1.7.10 coremod: ``neimod.info`` + ``FMLCorePlugin``, no mcmod.info
* ``multiloader_jar`` → several of the above in one jar
* ``large_jar``       → a jar of an exact size and entry count, for benchmarks
* ``demo_mods``       → a handful of realistic sample mods for the local demo

Common keyword options of the mod builders: ``icon_png`` (bool), ``extra_entries`` (number of
filler classes), ``pad_bytes`` (an extra stored, incompressible entry of that size),
``compressible`` (filler that deflates well, or random bytes), ``data_descriptors`` (write
entries with the streaming flag and trailing data descriptors), ``extra_files``
(``{path: bytes}`` added verbatim), ``seed`` (filler randomness; default from id+version).
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import re
import struct
import zipfile
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

DATE_TIME = (2024, 1, 1, 0, 0, 0)
_CLASS_MAGIC = b"\xca\xfe\xba\xbe\x00\x00\x00\x41"  # Java 21 class file header

__all__ = [
    "DemoMod",
    "DemoRelease",
    "build_jar",
    "demo_mods",
    "fabric_jar",
    "forge_jar",
    "large_jar",
    "manifest",
    "mcmod_jar",
    "multiloader_jar",
    "neoforge_jar",
    "png_icon",
    "quilt_jar",
]


# ==== low-level pieces =========================================================================
def png_icon(size: int = 16, seed: str = "icon") -> bytes:
    """A tiny valid RGBA PNG (``size``×``size``), colours derived from ``seed``."""
    h = hashlib.sha256(seed.encode()).digest()
    c1, c2 = h[0:3], h[3:6]
    rows = []
    for y in range(size):
        row = bytearray(b"\x00")  # filter type None
        for x in range(size):
            on = ((x // 4) + (y // 4)) % 2 == 0
            row += (c1 if on else c2) + b"\xff"
        rows.append(bytes(row))
    raw = b"".join(rows)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    ihdr = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def manifest(attrs: Mapping[str, str] | None = None) -> bytes:
    """``META-INF/MANIFEST.MF`` bytes: CRLF lines, wrapped at 72 bytes like the JDK does."""
    fields = {"Manifest-Version": "1.0"}
    fields.update(attrs or {})
    out = bytearray()
    for key, value in fields.items():
        line = f"{key}: {value}".encode()
        out += line[:72] + b"\r\n"
        rest = line[72:]
        while rest:
            out += b" " + rest[:71] + b"\r\n"
            rest = rest[71:]
    out += b"\r\n"
    return bytes(out)


class Unseekable(io.RawIOBase):
    """Write-only stream without tell/seek: makes zipfile write data descriptors."""

    def __init__(self) -> None:
        self.buf = io.BytesIO()

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        return self.buf.write(b)

    def seekable(self) -> bool:
        return False

    def tell(self):  # zipfile probes tell(); failing it selects streaming mode
        raise OSError("unseekable")

    def flush(self) -> None:
        pass


Entry = tuple[str, bytes] | tuple[str, bytes, bool]


def build_jar(
    entries: Iterable[Entry],
    *,
    data_descriptors: bool = False,
    date_time: tuple[int, int, int, int, int, int] = DATE_TIME,
    comment: bytes = b"",
) -> bytes:
    """Zip ``(name, data[, compress])`` entries (deflate by default; names ending in ``/``
    become directories) with fixed timestamps."""
    sink: io.BytesIO | Unseekable = Unseekable() if data_descriptors else io.BytesIO()
    with zipfile.ZipFile(sink, "w") as zf:  # type: ignore[arg-type]
        for entry in entries:
            name, data = entry[0], entry[1]
            compress = entry[2] if len(entry) > 2 else True  # type: ignore[misc]
            info = zipfile.ZipInfo(name, date_time=date_time)
            info.create_system = 0
            if name.endswith("/"):
                info.external_attr = 0x10  # MS-DOS directory
                info.compress_type = zipfile.ZIP_STORED
                zf.writestr(info, b"")
                continue
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
            zf.writestr(info, data)
        if comment:
            zf.comment = comment
    buf = sink.buf if isinstance(sink, Unseekable) else sink
    return buf.getvalue()


_JAVA_TOKENS = [
    b"java/lang/Object", b"java/lang/String", b"Code", b"LineNumberTable",
    b"LocalVariableTable", b"StackMapTable", b"SourceFile", b"<init>", b"<clinit>",
    b"()V", b"(Lnet/minecraft/world/level/Level;)V", b"net/minecraft/core/BlockPos",
    b"net/minecraft/world/item/ItemStack", b"net/minecraft/resources/ResourceLocation",
    b"Lorg/spongepowered/asm/mixin/injection/callback/CallbackInfo;", b"this",
    b"register", b"tick", b"getValue", b"Ljava/util/function/Supplier;",
]


def _seed(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "big")


def _class_bytes(rng: random.Random, size: int, compressible: bool, package: str) -> bytes:
    if not compressible:
        return _CLASS_MAGIC + rng.randbytes(max(size - len(_CLASS_MAGIC), 0))
    tokens = _JAVA_TOKENS + [package.encode(), package.encode() + b"/Registry"]
    out = bytearray(_CLASS_MAGIC)
    while len(out) < size:
        tok = rng.choice(tokens)
        out += struct.pack(">BH", 1, len(tok)) + tok  # CONSTANT_Utf8 entries
        if rng.random() < 0.3:
            out += rng.randbytes(rng.randint(1, 6))
    return bytes(out[:size])


def _filler(package: str, count: int, rng: random.Random, compressible: bool) -> list[Entry]:
    names = ["Registry", "Config", "Network", "Events", "Client", "Blocks", "Items", "Util"]
    out: list[Entry] = []
    for i in range(count):
        base = names[i % len(names)]
        suffix = "" if i < len(names) else str(i // len(names))
        sub = "" if i < len(names) else f"impl{i // 64}/"
        size = rng.randint(600, 4000)
        out.append((f"{package}/{sub}{base}{suffix}.class", _class_bytes(rng, size, compressible, package)))
    return out


def _java_id(mod_id: str) -> str:
    s = re.sub(r"[^a-z0-9_]", "_", mod_id.lower())
    return s if s and not s[0].isdigit() else f"m{s}"


def _title(mod_id: str) -> str:
    return " ".join(w.capitalize() for w in re.split(r"[_\-]+", mod_id) if w)


def _toml(s: str) -> str:
    """A TOML basic string (JSON string escapes are valid TOML escapes)."""
    return json.dumps(s, ensure_ascii=False)


def _mc_maven(minecraft: str) -> str:
    """Fabric-style predicate or plain version → Forge (Maven) version range."""
    m = minecraft.strip()
    if m[:1] in "[(":
        return m
    if m.startswith(">="):
        return f"[{m[2:].strip()},)"
    if m.startswith(("~", "=")):
        return f"[{m.lstrip('~=').strip()},)"
    if m in ("*", ""):
        return "[0,)"
    return f"[{m}]"


def _mc_fabric(minecraft: str) -> str:
    """Maven range → Fabric predicate (others unchanged)."""
    m = minecraft.strip()
    if m[:1] not in "[(":
        return m
    lo, _, hi = m[1:-1].partition(",")
    if not _ and m.startswith("["):
        return lo.strip()
    parts = []
    if lo.strip():
        parts.append((">=" if m[0] == "[" else ">") + lo.strip())
    if hi.strip():
        parts.append(("<=" if m[-1] == "]" else "<") + hi.strip())
    return " ".join(parts) or "*"


# ==== metadata documents ======================================================================
def _fabric_json(mod_id, version, name, description, minecraft, authors, *, license, icon,
                 environment, java, depends, entrypoint, nested, homepage, sources,
                 mixin_config) -> bytes:
    doc = {
        "schemaVersion": 1,
        "id": mod_id,
        "version": version,
        "name": name,
        "description": description,
        "authors": list(authors),
        "contact": {k: v for k, v in {"homepage": homepage, "sources": sources}.items() if v},
        "license": license,
        "environment": environment,
        "entrypoints": {"main": [entrypoint]},
        "mixins": [mixin_config],
        "depends": {
            "fabricloader": ">=0.15.0",
            "minecraft": _mc_fabric(minecraft),
            "java": f">={java}",
            "fabric-api": "*",
            **dict(depends or {}),
        },
    }
    if icon:
        doc["icon"] = icon
    if nested:
        doc["jars"] = [{"file": path} for path, _ in nested]
    return json.dumps(doc, indent=2, ensure_ascii=False).encode()


def _quilt_json(mod_id, version, name, description, minecraft, authors, *, license, icon,
                environment, group, entrypoint, homepage, sources, mixin_config) -> bytes:
    meta = {
        "name": name,
        "description": description,
        "contributors": {a: "Owner" if i == 0 else "Contributor" for i, a in enumerate(authors)},
        "contact": {k: v for k, v in {"homepage": homepage, "sources": sources}.items() if v},
        "license": license,
    }
    if icon:
        meta["icon"] = icon
    doc = {
        "schema_version": 1,
        "quilt_loader": {
            "group": group,
            "id": mod_id,
            "version": version,
            "metadata": meta,
            "intermediate_mappings": "net.fabricmc:intermediary",
            "entrypoints": {"init": entrypoint},
            "depends": [
                {"id": "quilt_loader", "versions": ">=0.19.1"},
                {"id": "minecraft", "versions": _mc_fabric(minecraft)},
                {"id": "quilted_fabric_api", "versions": "*"},
            ],
        },
        "minecraft": {"environment": environment if environment != "*" else "*"},
        "mixin": mixin_config,
    }
    return json.dumps(doc, indent=2, ensure_ascii=False).encode()


def _mods_toml(mod_id, version, name, description, minecraft, authors, *, license, logo,
               loader_version, loader_mod, loader_range, neoforge, homepage, issues,
               mixin_config) -> bytes:
    lines = [
        '# Generated by indexium_devstack.jars',
        'modLoader="javafml"',
        f"loaderVersion={_toml(loader_version)}",
        f"license={_toml(license)}",
    ]
    if issues:
        lines.append(f"issueTrackerURL={_toml(issues)}")
    lines += [
        "",
        "[[mods]]",
        f"modId={_toml(mod_id)}",
        f"version={_toml(version)}",
        f"displayName={_toml(name)}",
        f"authors={_toml(', '.join(authors))}",
    ]
    if homepage:
        lines.append(f"displayURL={_toml(homepage)}")
    if logo:
        lines.append(f"logoFile={_toml(logo)}")
    lines.append(f"description='''\n{description.replace(chr(39) * 3, chr(39) * 2)}\n'''")
    if neoforge and mixin_config:
        lines += ["", "[[mixins]]", f"config={_toml(mixin_config)}"]
    for dep_id, dep_range in ((loader_mod, loader_range), ("minecraft", _mc_maven(minecraft))):
        lines += ["", f"[[dependencies.{mod_id}]]", f"    modId={_toml(dep_id)}"]
        lines.append('    type="required"' if neoforge else "    mandatory=true")
        lines += [
            f"    versionRange={_toml(dep_range)}",
            '    ordering="NONE"',
            '    side="BOTH"',
        ]
    return ("\n".join(lines) + "\n").encode()


def _mcmod_info(mod_id, version, name, description, minecraft, authors, *, logo,
                homepage) -> bytes:
    doc = [
        {
            "modid": mod_id,
            "name": name,
            "description": description,
            "version": version,
            "mcversion": minecraft,
            "url": homepage or "",
            "updateUrl": "",
            "authorList": list(authors),
            "credits": "",
            "logoFile": logo or "",
            "screenshots": [],
            "dependencies": [],
        }
    ]
    return json.dumps(doc, indent=2, ensure_ascii=False).encode()


# ==== assembling a mod jar =======================================================================
@dataclass
class _Common:
    mod_id: str
    version: str
    name: str
    description: str
    authors: Sequence[str]
    icon_png: bool = True
    extra_entries: int = 8
    pad_bytes: int = 0
    compressible: bool = True
    data_descriptors: bool = False
    extra_files: Mapping[str, bytes] | None = None
    seed: int | None = None
    license: str = "MIT"
    homepage: str | None = None
    sources: str | None = None
    package: str = ""
    java: int = 17

    def __post_init__(self) -> None:
        self.package = self.package or f"com/example/{_java_id(self.mod_id)}"

    @property
    def entrypoint(self) -> str:
        return self.package.replace("/", ".") + "." + _title(self.mod_id).replace(" ", "")

    @property
    def mixin_config(self) -> str:
        return f"{self.mod_id}.mixins.json"


def _assemble(c: _Common, metadata: list[Entry], *, icon_path: str | None,
              manifest_extra: Mapping[str, str] | None = None,
              nested: Sequence[tuple[str, bytes]] = ()) -> bytes:
    rng = random.Random(c.seed if c.seed is not None else _seed(c.mod_id, c.version))
    attrs = {
        "Created-By": "Gradle 8.8",
        "Implementation-Title": c.name,
        "Implementation-Version": c.version,
        "Implementation-Vendor": ", ".join(c.authors),
        "Specification-Title": c.mod_id,
        "Specification-Version": c.version.split("+")[0],
        **dict(manifest_extra or {}),
    }
    mixins = {
        "required": True,
        "minVersion": "0.8",
        "package": c.package.replace("/", ".") + ".mixin",
        "compatibilityLevel": f"JAVA_{c.java}",
        "mixins": ["LevelMixin"],
        "client": ["ClientMixin"],
        "injectors": {"defaultRequire": 1},
    }
    lang = {f"item.{c.mod_id}.{_java_id(c.mod_id)}": c.name, f"modmenu.summaryTranslation.{c.mod_id}": c.description}
    entries: list[Entry] = [("META-INF/", b""), ("META-INF/MANIFEST.MF", manifest(attrs))]
    entries += metadata
    if icon_path and c.icon_png:
        entries.append((icon_path, png_icon(32, c.mod_id), False))
    entries.append((c.mixin_config, json.dumps(mixins, indent=2).encode()))
    entries.append((f"assets/{c.mod_id}/lang/en_us.json", json.dumps(lang, indent=2, ensure_ascii=False).encode()))
    entries += _filler(c.package, c.extra_entries, rng, c.compressible)
    for path, data in nested:
        entries.append((path, data, False))
    for path, data in (c.extra_files or {}).items():
        entries.append((path, data))
    if c.pad_bytes > 0:
        entries.append((f"assets/{c.mod_id}/textures/atlas.bin", rng.randbytes(c.pad_bytes), False))
    return build_jar(entries, data_descriptors=c.data_descriptors)


def _common(mod_id, version, name, description, authors, opts) -> _Common:
    return _Common(mod_id=mod_id, version=version, name=name or _title(mod_id),
                   description=description, authors=tuple(authors), **opts)


def fabric_jar(
    mod_id: str = "examplemod",
    version: str = "1.0.0",
    name: str | None = None,
    description: str = "An example Fabric mod.",
    minecraft: str = ">=1.20",
    authors: Sequence[str] = ("Example Author",),
    *,
    environment: str = "*",
    depends: Mapping[str, str] | None = None,
    nested_jars: Sequence[tuple[str, bytes]] = (),
    **opts,
) -> bytes:
    """Fabric mod: ``fabric.mod.json`` at the root (``minecraft`` is a Fabric predicate;
    a Maven range is converted). ``nested_jars`` = ``[(path, jar_bytes)]`` jar-in-jar."""
    c = _common(mod_id, version, name, description, authors, opts)
    icon = f"assets/{mod_id}/icon.png" if c.icon_png else None
    meta = _fabric_json(
        mod_id, version, c.name, description, minecraft, c.authors, license=c.license,
        icon=icon, environment=environment, java=c.java, depends=depends,
        entrypoint=c.entrypoint, nested=nested_jars, homepage=c.homepage, sources=c.sources,
        mixin_config=c.mixin_config,
    )
    return _assemble(c, [("fabric.mod.json", meta)], icon_path=icon, nested=nested_jars)


def quilt_jar(
    mod_id: str = "example_mod",
    version: str = "1.0.0",
    name: str | None = None,
    description: str = "An example Quilt mod.",
    minecraft: str = ">=1.20",
    authors: Sequence[str] = ("Example Author",),
    *,
    environment: str = "*",
    group: str = "com.example",
    **opts,
) -> bytes:
    """Quilt mod: ``quilt.mod.json`` at the root."""
    c = _common(mod_id, version, name, description, authors, opts)
    icon = f"assets/{mod_id}/icon.png" if c.icon_png else None
    meta = _quilt_json(
        mod_id, version, c.name, description, minecraft, c.authors, license=c.license,
        icon=icon, environment=environment, group=group, entrypoint=c.entrypoint,
        homepage=c.homepage, sources=c.sources, mixin_config=c.mixin_config,
    )
    return _assemble(c, [("quilt.mod.json", meta)], icon_path=icon)


def forge_jar(
    mod_id: str = "examplemod",
    version: str = "1.0.0",
    name: str | None = None,
    description: str = "An example Forge mod.",
    minecraft: str = "[1.20.1,1.21)",
    authors: Sequence[str] = ("Example Author",),
    *,
    loader_version: str = "[47,)",
    forge_version: str = "[47,)",
    issues: str | None = None,
    **opts,
) -> bytes:
    """Forge mod: ``META-INF/mods.toml`` (``minecraft`` is a Maven range; ``>=1.20`` or a
    plain version is converted)."""
    c = _common(mod_id, version, name, description, authors, opts)
    logo = f"{mod_id}_logo.png" if c.icon_png else None
    meta = _mods_toml(
        mod_id, version, c.name, description, minecraft, c.authors, license=c.license,
        logo=logo, loader_version=loader_version, loader_mod="forge", loader_range=forge_version,
        neoforge=False, homepage=c.homepage, issues=issues, mixin_config=c.mixin_config,
    )
    return _assemble(c, [("META-INF/mods.toml", meta)], icon_path=logo,
                     manifest_extra={"MixinConfigs": c.mixin_config})


def neoforge_jar(
    mod_id: str = "examplemod",
    version: str = "1.0.0",
    name: str | None = None,
    description: str = "An example NeoForge mod.",
    minecraft: str = "[1.21,1.21.2)",
    authors: Sequence[str] = ("Example Author",),
    *,
    loader_version: str = "[4,)",
    neoforge_version: str = "[21.0,)",
    issues: str | None = None,
    legacy_toml: bool = False,
    **opts,
) -> bytes:
    """NeoForge mod: ``META-INF/neoforge.mods.toml`` (``legacy_toml=True``: the 1.20.x-era
    ``META-INF/mods.toml`` name)."""
    c = _common(mod_id, version, name, description, authors, {"java": 21, **opts})
    logo = f"{mod_id}_logo.png" if c.icon_png else None
    meta = _mods_toml(
        mod_id, version, c.name, description, minecraft, c.authors, license=c.license,
        logo=logo, loader_version=loader_version, loader_mod="neoforge",
        loader_range=neoforge_version, neoforge=True, homepage=c.homepage, issues=issues,
        mixin_config=c.mixin_config,
    )
    path = "META-INF/mods.toml" if legacy_toml else "META-INF/neoforge.mods.toml"
    return _assemble(c, [(path, meta)], icon_path=logo)


def mcmod_jar(
    mod_id: str = "examplemod",
    version: str = "1.0.0",
    name: str | None = None,
    description: str = "An example legacy Forge mod.",
    minecraft: str = "1.12.2",
    authors: Sequence[str] = ("Example Author",),
    **opts,
) -> bytes:
    """Legacy Forge mod (≤ 1.12.2): ``mcmod.info`` (a JSON array) at the root."""
    c = _common(mod_id, version, name, description, authors, {"java": 8, **opts})
    logo = f"assets/{mod_id}/logo.png" if c.icon_png else None
    meta = _mcmod_info(mod_id, version, c.name, description, minecraft, c.authors, logo=logo,
                       homepage=c.homepage)
    return _assemble(c, [("mcmod.info", meta)], icon_path=logo,
                     manifest_extra={"FMLCorePluginContainsFMLMod": "true"})


def litemod_jar(
    name: str = "ExampleLiteMod",
    version: str = "1.0.0",
    minecraft: str = "1.12.2",
    description: str = "An example LiteLoader mod.",
    authors: Sequence[str] = ("Example Author",),
    **opts,
) -> bytes:
    """LiteLoader mod (1.5–1.12): ``litemod.json`` at the root; released as ``<name>.litemod``."""
    c = _common(name.lower(), version, name, description, authors, {"java": 8, "icon_png": False, **opts})
    meta = json.dumps({"name": name, "displayName": name, "version": version, "mcversion": minecraft,
                       "revision": "1", "author": ", ".join(authors), "description": description,
                       "classTransformerClasses": [], "mixinConfigs": []}, indent=2).encode()
    return _assemble(c, [("litemod.json", meta)], icon_path=None)


def coremod_jar(
    mod_id: str = "NotEnoughItems",
    version: str = "1.0.5.120",
    name: str = "Not Enough Items",
    description: str = "Recipe and Item Viewer",
    minecraft: str = "1.7.10",
    *,
    info_file: str | None = "neimod.info",
    core_plugin: str = "codechicken.nei.asm.NEICorePlugin",
    authors: Sequence[str] = ("ChickenBones",),
    manifest_extra: Mapping[str, str] | None = None,
    **opts,
) -> bytes:
    """A 1.7.10-era coremod laid out like NotEnoughItems-1.7.10: no ``mcmod.info``, its own
    ``neimod.info`` (mcmod.info's format; ``info_file=None`` leaves it out) and
    ``FMLCorePlugin`` in ``META-INF/MANIFEST.MF``."""
    c = _common(mod_id.lower(), version, name, description, authors, {"java": 8, "icon_png": False, **opts})
    meta = ([(info_file, _mcmod_info(mod_id, version, name, description, minecraft, c.authors, logo=None,
                                     homepage=None))] if info_file else [])
    extra = {"FMLCorePlugin": core_plugin, "FMLCorePluginContainsFMLMod": "true", **dict(manifest_extra or {})}
    return _assemble(c, meta, icon_path=None, manifest_extra=extra)


def multiloader_jar(
    mod_id: str = "examplemod",
    version: str = "1.0.0",
    name: str | None = None,
    description: str = "An example multi-loader mod.",
    minecraft: str = "1.21.1",
    authors: Sequence[str] = ("Example Author",),
    *,
    loaders: Sequence[str] = ("fabric", "quilt", "forge", "neoforge"),
    **opts,
) -> bytes:
    """One jar carrying the metadata of several loaders (``minecraft`` as a plain version or
    Fabric predicate; converted to Maven ranges for Forge/NeoForge)."""
    c = _common(mod_id, version, name, description, authors, opts)
    icon = f"assets/{mod_id}/icon.png" if c.icon_png else None
    common = dict(license=c.license, homepage=c.homepage, mixin_config=c.mixin_config)
    meta: list[Entry] = []
    for loader in loaders:
        if loader == "fabric":
            meta.append(("fabric.mod.json", _fabric_json(
                mod_id, version, c.name, description, minecraft, c.authors, icon=icon,
                environment="*", java=c.java, depends=None, entrypoint=c.entrypoint, nested=(),
                sources=c.sources, **common)))
        elif loader == "quilt":
            meta.append(("quilt.mod.json", _quilt_json(
                mod_id, version, c.name, description, minecraft, c.authors, icon=icon,
                environment="*", group="com.example", entrypoint=c.entrypoint,
                sources=c.sources, **common)))
        elif loader == "forge":
            meta.append(("META-INF/mods.toml", _mods_toml(
                mod_id, version, c.name, description, minecraft, c.authors, logo=icon,
                loader_version="[47,)", loader_mod="forge", loader_range="[47,)",
                neoforge=False, issues=None, **common)))
        elif loader == "neoforge":
            meta.append(("META-INF/neoforge.mods.toml", _mods_toml(
                mod_id, version, c.name, description, minecraft, c.authors, logo=icon,
                loader_version="[4,)", loader_mod="neoforge", loader_range="[21.0,)",
                neoforge=True, issues=None, **common)))
        elif loader == "mcmod":
            meta.append(("mcmod.info", _mcmod_info(
                mod_id, version, c.name, description, minecraft, c.authors, logo=icon,
                homepage=c.homepage)))
        else:
            raise ValueError(f"unknown loader {loader!r}")
    return _assemble(c, meta, icon_path=icon)


# ==== benchmark jars ==============================================================================
_LOCAL, _CENTRAL, _EOCD = 30, 46, 22


def large_jar(
    size_bytes: int = 1_000_000,
    entries: int = 1000,
    *,
    mod_id: str = "bigmod",
    version: str = "1.0.0",
    loader: str = "fabric",
    metadata_last: bool = False,
    seed: int = 0,
) -> bytes:
    """A jar of exactly ``size_bytes`` with exactly ``entries`` entries (when the entry
    overhead fits in the size; otherwise as small as possible). Filler is stored
    (uncompressed) random bytes so 50 MB / 20,000 entries builds in well under a second.
    ``loader``: fabric | quilt | forge | neoforge | mcmod. ``metadata_last`` puts the loader
    metadata as the last entry (right before the central directory)."""
    builders = {
        "fabric": ("fabric.mod.json", lambda: _fabric_json(
            mod_id, version, _title(mod_id), "Benchmark jar.", ">=1.20", ("bench",),
            license="MIT", icon=None, environment="*", java=17, depends=None,
            entrypoint=f"com.example.{_java_id(mod_id)}.Main", nested=(), homepage=None,
            sources=None, mixin_config=f"{mod_id}.mixins.json")),
        "quilt": ("quilt.mod.json", lambda: _quilt_json(
            mod_id, version, _title(mod_id), "Benchmark jar.", ">=1.20", ("bench",),
            license="MIT", icon=None, environment="*", group="com.example",
            entrypoint=f"com.example.{_java_id(mod_id)}.Main", homepage=None, sources=None,
            mixin_config=f"{mod_id}.mixins.json")),
        "forge": ("META-INF/mods.toml", lambda: _mods_toml(
            mod_id, version, _title(mod_id), "Benchmark jar.", "[1.20.1,1.21)", ("bench",),
            license="MIT", logo=None, loader_version="[47,)", loader_mod="forge",
            loader_range="[47,)", neoforge=False, homepage=None, issues=None,
            mixin_config=None)),
        "neoforge": ("META-INF/neoforge.mods.toml", lambda: _mods_toml(
            mod_id, version, _title(mod_id), "Benchmark jar.", "[1.21,1.21.2)", ("bench",),
            license="MIT", logo=None, loader_version="[4,)", loader_mod="neoforge",
            loader_range="[21.0,)", neoforge=True, homepage=None, issues=None,
            mixin_config=None)),
        "mcmod": ("mcmod.info", lambda: _mcmod_info(
            mod_id, version, _title(mod_id), "Benchmark jar.", "1.12.2", ("bench",), logo=None,
            homepage=None)),
    }
    if loader not in builders:
        raise ValueError(f"unknown loader {loader!r}")
    meta_path, meta_fn = builders[loader]
    fixed: list[tuple[str, bytes]] = [
        ("META-INF/MANIFEST.MF", manifest({"Implementation-Title": mod_id,
                                           "Implementation-Version": version})),
        (meta_path, meta_fn()),
    ]
    n_filler = max(entries - len(fixed), 0)
    pkg = f"com/example/{_java_id(mod_id)}/gen"
    names = [f"{pkg}/p{i // 500:03d}/C{i:05d}.class" for i in range(n_filler)]
    overhead = _EOCD + sum(_LOCAL + _CENTRAL + 2 * len(n.encode()) + len(d) for n, d in fixed)
    overhead += sum(_LOCAL + _CENTRAL + 2 * len(n) for n in names)
    budget = max(size_bytes - overhead, 0)
    sizes = [0] * n_filler
    if n_filler:
        per, extra = divmod(budget, n_filler)
        sizes = [per] * n_filler
        sizes[-1] += extra
    rng = random.Random(seed)
    block = rng.randbytes(1 << 20)
    doubled = block + block

    def content(i: int, n: int) -> bytes:
        off = (i * 7919) % len(block)
        if n <= len(block):
            return _CLASS_MAGIC[: min(n, 8)] + doubled[off : off + max(n - 8, 0)]
        reps = (n // len(block)) + 2
        return (_CLASS_MAGIC + (block * reps)[off : off + n - 8])[:n]

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        def put(name: str, data: bytes) -> None:
            info = zipfile.ZipInfo(name, date_time=DATE_TIME)
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)

        put(*fixed[0])
        if not metadata_last:
            put(*fixed[1])
        for i, name in enumerate(names):
            put(name, content(i, sizes[i]))
        if metadata_last:
            put(*fixed[1])
    return buf.getvalue()


# ==== demo mods =====================================================================================
@dataclass
class DemoRelease:
    tag: str
    name: str
    body: str
    assets: list[tuple[str, bytes]]
    prerelease: bool = False


@dataclass
class DemoMod:
    owner: str
    repo: str
    mod_id: str
    name: str
    description: str
    loaders: tuple[str, ...]
    game_versions: tuple[str, ...]
    topics: list[str]
    license: str = "MIT"
    homepage: str | None = None
    releases: list[DemoRelease] = field(default_factory=list)


def demo_mods() -> list[DemoMod]:
    """Six sample mods (Fabric, Forge, NeoForge, Quilt, multi-loader, legacy mcmod.info)."""
    mods: list[DemoMod] = []

    def mod(owner, repo, mod_id, name, desc, loaders, versions, topics, license="MIT"):
        m = DemoMod(owner, repo, mod_id, name, desc, tuple(loaders), tuple(versions),
                    ["minecraft", "minecraft-mod", *topics], license,
                    homepage=f"https://example.org/{repo}")
        mods.append(m)
        return m

    m = mod("aurora-modding", "lumen-lanterns", "lumenlanterns", "Lumen Lanterns",
            "Colourful hanging lanterns that light up caves and react to redstone signals.",
            ["fabric"], ["1.20.1"], ["fabric", "decoration", "lighting"])
    for tag, ver, pre in (("v1.2.0", "1.2.0", False), ("v1.3.0-beta.1", "1.3.0-beta.1", True)):
        m.releases.append(DemoRelease(
            tag, f"Lumen Lanterns {ver}",
            "### Changes\n- Added soul lanterns in twelve colours\n- Fixed flicker on servers",
            [(f"lumen-lanterns-{ver}+1.20.1.jar", fabric_jar(
                m.mod_id, f"{ver}+1.20.1", m.name, m.description, minecraft="~1.20.1",
                authors=("Aurora",), homepage=m.homepage, extra_entries=12))],
            prerelease=pre))
    # A release the scan stage holds back (a ProcessBuilder in the mod initialiser): the demo's
    # author dashboard and review queue show a quarantined version with its finding.
    from .scankit import process_builder_initializer  # noqa: PLC0415 - scankit imports this module

    m.releases.append(DemoRelease(
        "v1.4.0", "Lumen Lanterns 1.4.0", "### Changes\n- Automatic updates",
        [("lumen-lanterns-1.4.0+1.20.1.jar", fabric_jar(
            m.mod_id, "1.4.0+1.20.1", m.name, m.description, minecraft="~1.20.1",
            authors=("Aurora",), homepage=m.homepage, extra_entries=12,
            extra_files={"com/auroramodding/lumenlanterns/PbMod.class":
                         process_builder_initializer("com/auroramodding/lumenlanterns")}))]))

    m = mod("ironworks-team", "quarry-logistics", "quarrylogistics", "Quarry Logistics",
            "Automated quarries with item routing, filters and a fuel-efficient mining drill.",
            ["forge"], ["1.20.1"], ["forge", "technology", "automation"], "LGPL-3.0")
    m.releases.append(DemoRelease(
        "2.0.1", "Quarry Logistics 2.0.1", "Bug fixes for the drill's fuel use.",
        [("QuarryLogistics-1.20.1-2.0.1.jar", forge_jar(
            m.mod_id, "2.0.1", m.name, m.description, minecraft="[1.20.1,1.21)",
            authors=("Ironworks Team",), license="LGPL-3.0", homepage=m.homepage,
            extra_entries=40))]))

    m = mod("wayfinder", "wayfinder-maps", "wayfinder", "Wayfinder Maps",
            "A minimap and world map with waypoints, death markers and shareable routes.",
            ["neoforge"], ["1.21.1"], ["neoforge", "map", "utility"])
    m.releases.append(DemoRelease(
        "v5.1.0", "Wayfinder 5.1.0 for NeoForge 1.21.1",
        "Routes can now be shared with a link.",
        [("wayfinder-neoforge-5.1.0.jar", neoforge_jar(
            m.mod_id, "5.1.0", m.name, m.description, minecraft="[1.21.1,1.21.2)",
            authors=("Wayfinder Maps",), homepage=m.homepage, extra_entries=24,
            compressible=False))]))

    m = mod("copperworks", "copper-circuits", "copper_circuits", "Copper Circuits",
            "Programmable copper wires and logic gates that slowly oxidise unless waxed.",
            ["quilt"], ["1.20.4"], ["quilt", "redstone"], "MPL-2.0")
    m.releases.append(DemoRelease(
        "0.9.0", "0.9.0", "First public beta.",
        [("copper-circuits-0.9.0.jar", quilt_jar(
            m.mod_id, "0.9.0", m.name, m.description, minecraft="1.20.4",
            authors=("Copperworks", "Rin"), license="MPL-2.0", homepage=m.homepage))]))

    m = mod("fieldnotes", "harvest-almanac", "harvestalmanac", "Harvest Almanac",
            "Seasonal crop growth, a farmer's almanac book and gentle weather forecasts.",
            ["fabric", "neoforge"], ["1.21.1"], ["fabric", "neoforge", "farming"])
    m.releases.append(DemoRelease(
        "1.4.0+1.21.1", "Harvest Almanac 1.4.0",
        "One jar for Fabric and NeoForge.",
        [("harvest-almanac-1.4.0+1.21.1.jar", multiloader_jar(
            m.mod_id, "1.4.0+1.21.1", m.name, m.description, minecraft="1.21.1",
            authors=("Fieldnotes",), loaders=("fabric", "neoforge"), homepage=m.homepage,
            extra_entries=16, data_descriptors=True))]))

    m = mod("oldguard", "classic-backpacks", "classicbackpacks", "Classic Backpacks",
            "Dyeable leather backpacks with upgrade slots for long expeditions.",
            ["forge"], ["1.12.2"], ["forge", "legacy", "storage"])
    m.releases.append(DemoRelease(
        "1.12.2-3.4.7", "Classic Backpacks 3.4.7", "Legacy release for 1.12.2.",
        [("ClassicBackpacks-1.12.2-3.4.7.jar", mcmod_jar(
            m.mod_id, "3.4.7", m.name, m.description, minecraft="1.12.2",
            authors=("Oldguard",), homepage=m.homepage, extra_entries=10))]))
    return mods
