"""The format registry (indexium_jar.formats) is the one place a format is declared.

The scan below fails when a loader, suffix or project-type name is written as a literal in
the services' and libraries' source anywhere but the registry and the parsers beside it
(indexium_jar.manifests, indexium_jar.packs), except where the same word means something
else: each exception names the words it may use and why.
"""

from __future__ import annotations

import ast
import json
import pathlib
import subprocess
import sys
import textwrap

import pytest

from indexium_contracts.github import is_manifest_path
from indexium_search import facets
from indexium_github import assets
from indexium_jar import formats
from indexium_jar.manifests import LOADER_MANIFESTS

pytestmark = pytest.mark.unit

ROOT = pathlib.Path(__file__).resolve().parents[3]
# Where format names belong: the registry and the parsers it declares.
HOME = ("libs/jar/src/indexium_jar/formats.py", "libs/jar/src/indexium_jar/formatspec.py",
        "libs/jar/src/indexium_jar/manifests/",
        "libs/jar/src/indexium_jar/packs/")
# Files where a registry word means something else, and the words each may write.
ELSEWHERE: dict[str, tuple[set[str], str]] = {
    "libs/jar/src/indexium_jar/gameversions.py": ({"fabric", "quilt"}, "names of version-predicate syntaxes"),
    "libs/jar/src/indexium_jar/deps/parsed.py": ({"minecraft", "forge", "neoforge", "fabric", "quilt"},
                                                 "mod ids a dependency names, and predicate syntaxes"),
    "libs/jar/src/indexium_jar/deps/words.py": ({"minecraft", "forge", "neoforge"}, "mod ids a dependency names"),
    "libs/db/src/indexium_db/queries/modrinth.py": ({"minecraft", "forge", "neoforge", "liteloader"},
                                                    "platform mod ids a dependency names"),
    "libs/db/src/indexium_db/queries/site.py": ({"minecraft", "forge", "neoforge"}, "platform mod ids"),
    "libs/content/src/indexium_content/categories.py": (
        {"fabric", "forge", "neoforge", "quilt", "liteloader", "bukkit", "paper", "sponge", "bungeecord", "velocity",
         "minecraft", "mod", "plugin", "datapack", "iris", "optifine", "canvas"},
        "Modrinth's category vocabulary and the topics authors type"),
    "services/telemetry/src/indexium_telemetry/protocol.py": ({"fabric", "quilt", "forge", "neoforge"},
                                                              "the spellings a game client reports"),
    "services/api/src/indexium_api/v2/forge.py": ({"forge", "neoforge"}, "Forge's update JSON is (Neo)Forge's own"),
    "services/api/src/indexium_api/openapi/v2.py": ({"neoforge"}, "the Forge update JSON's query parameter"),
    "services/api/src/indexium_api/core/packexport.py": ({"fabric", "quilt", "forge", "neoforge", "minecraft"},
                                                     "the keys Modrinth's index and packwiz's pack.toml write for "
                                                     "the game and each loader, and the loaders' manifest ids"),
    "services/api/src/indexium_api/site/subscriptions.py": ({"mod"}, "a subscription's kind: mod, author or search"),
    "libs/devstack/": ({*formats.LOADERS, *formats.SUFFIXES, *formats.PROJECT_TYPES}, "builders of test fixtures"),
}
# "mod" and "plugin" are also plain words (a subscription's kind, a cache key): as those they
# are only flagged where they stand for a project type: compared, listed with another
# project type, or given as a project_type.
AMBIGUOUS = {formats.MOD, formats.PLUGIN}
WORDS = {*formats.LOADERS, *formats.SUFFIXES, *formats.PROJECT_TYPES}


def _sources():
    for top in ("libs", "services"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "/src/" in rel:
                yield rel, path


def _flagged(tree: ast.AST) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    contexts: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            contexts.update(id(c) for c in [node.left, *node.comparators])
            for c in [node.left, *node.comparators]:
                if isinstance(c, (ast.Tuple, ast.List, ast.Set)):
                    contexts.update(id(e) for e in c.elts)
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            words = [e for e in node.elts if isinstance(e, ast.Constant) and e.value in formats.PROJECT_TYPES]
            if len(words) >= 2:
                contexts.update(id(e) for e in words)
        elif isinstance(node, ast.keyword) and node.arg and "project_type" in node.arg:
            contexts.add(id(node.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in WORDS:
            if node.value not in AMBIGUOUS or id(node) in contexts:
                out.append((node.lineno, node.value))
    return out


def test_no_format_literal_outside_the_registry():
    found = []
    for rel, path in _sources():
        if rel.startswith(HOME):
            continue
        allowed = next((words for prefix, (words, _) in ELSEWHERE.items() if rel.startswith(prefix)), set())
        found += [f"{rel}:{line}: {word!r}" for line, word in _flagged(ast.parse(path.read_text(), rel))
                  if word not in allowed]
    assert not found, "format names outside indexium_jar.formats:\n" + "\n".join(found)


def test_the_scan_catches_a_literal():
    code = 'X = ("bukkit", "paper")\nif t == "plugin":\n    pass\nf(project_type="mod")\nkind = "mod"\nY = ".mrpack"\n'
    assert sorted(_flagged(ast.parse(code))) == [(1, "bukkit"), (1, "paper"), (2, "plugin"), (4, "mod"), (6, ".mrpack")]


def test_every_exception_is_still_needed():
    for prefix, (words, _) in ELSEWHERE.items():
        used = {w for rel, path in _sources() if rel.startswith(prefix) for _, w in _flagged(ast.parse(path.read_text()))}
        assert used, f"{prefix} no longer writes a registry word: drop its exception"


def test_the_lists_are_derived():
    assert assets.MOD_SUFFIXES == formats.JAR_SUFFIXES
    assert set(facets.PLUGIN_LOADERS) == set(formats.loaders_of(formats.PLUGIN))
    assert facets.LOADERS == frozenset(formats.LOADERS)
    # The jar formats' identifying entries are exactly what the jar reader parses.
    assert {p for f in formats.JAR_FORMATS for p in f.identified_by} == LOADER_MANIFESTS
    for path in formats.SOURCE_MANIFESTS:
        assert is_manifest_path(f"src/main/resources/{path}")
        assert is_manifest_path(f"neoforge/src/main/resources/{path}")
    assert not is_manifest_path("src/main/resources/plugin.yml.bak")
    # The pack formats' source paths, at the repository's root only (a folder: any file under it).
    for path in formats.SOURCE_PACK_PATHS:
        sample = path + "final.fsh" if path.endswith("/") else path
        assert is_manifest_path(sample) and not is_manifest_path("docs/" + sample), path
    assert not is_manifest_path("src/main/resources/pack.mcmeta") and not is_manifest_path("shaders/")


def test_every_format_declares_everything():
    for f in formats.FORMATS:
        assert f.suffixes and f.identified_by and f.loaders and f.description and callable(f.parser), f.name
        assert f.project_type in formats.PROJECT_TYPES
        assert all(s.startswith(".") and s == s.lower() for s in f.suffixes)
    assert len(formats.BY_NAME) == len(formats.FORMATS)


def test_project_types_as_modrinth_v2_answers_them():
    assert formats.v2_project_type(formats.DATAPACK) == formats.MOD
    assert formats.v2_project_type(formats.PLUGIN) == formats.MOD
    assert formats.v2_project_type(formats.MODPACK) == formats.MODPACK
    assert formats.v2_project_type(None) == formats.MOD
    assert formats.all_project_types(formats.MOD, ["fabric", "paper"]) == [formats.MOD, formats.PLUGIN]
    assert formats.all_project_types(formats.MOD, ["fabric"]) == [formats.MOD]
    assert formats.all_project_types(formats.DATAPACK, ["datapack"]) == [formats.MOD, formats.DATAPACK]
    assert formats.supported_project_types("fabric") == [formats.MOD, formats.MODPACK]
    assert formats.supported_project_types("iris") == [formats.SHADER]
    assert formats.supported_project_types("paper") == [formats.MOD, formats.PLUGIN]
    assert formats.project_type_of(["paper", "velocity"]) == formats.PLUGIN
    assert formats.project_type_of(["paper", "fabric"]) == formats.MOD


JAR_SRC = ROOT / "libs/jar/src/indexium_jar"
# The code that reads archives and derives the lists: it names no format, it walks the registry.
READERS = ("formats.py", "manifests/__init__.py", "packs/__init__.py", "packread.py")


def _declaring_modules() -> set[str]:
    return {m for m, mod in sys.modules.items() if m.startswith("indexium_jar.") and getattr(mod, "FORMATS", None)
            and m != "indexium_jar.formats"}


def test_the_readers_list_no_format():
    """The parse order (was manifests' _PARSERS) and the classification (was packs.classify's
    branches) come from the declarations: the readers write no format's name or entry, and
    call no parser but through its declaration."""
    parser_modules = {m.rsplit(".", 1)[1] for m in _declaring_modules()}
    for rel in READERS:
        tree = ast.parse((JAR_SRC / rel).read_text())
        # (manifests' jar-level rules after parsing, nested jars per loader, name loaders, not formats)
        entries = {e for f in formats.FORMATS for e in f.identified_by} | (
            set() if rel.startswith("manifests/") else set(formats.BY_NAME))
        named = [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in entries]
        assert not named, f"{rel} names formats or their entries: {named}"
        calls = [(n.lineno, ast.unparse(n.func)) for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
                 and n.func.value.id in parser_modules and n.func.attr.startswith("parse")]
        assert not calls, f"{rel} calls a parser by name: {calls}"
    for rel in ("formats.py", "packs/__init__.py"):  # these import no parser module at all
        imported = {a.name for n in ast.walk(ast.parse((JAR_SRC / rel).read_text())) if isinstance(n, ast.ImportFrom)
                    for a in n.names}
        assert not imported & parser_modules, rel


# A throwaway format in a module of its own, put beside the pack parsers (the package's search
# path extended before it is imported): every list must know it, with no other file touched.
_THROWAWAY = """
from indexium_jar.formatspec import PACK, RESOURCEPACK, Format, LoaderName
from indexium_jar.model import PackParseResult, PackRecord

PATH = "throwaway.json"


def parse(files, archive):
    return PackParseResult(record=PackRecord(project_type=RESOURCEPACK, loaders=("throwloader",),
                                             manifest_path=PATH))


FORMATS = (Format("throwaway", PACK, 250, (".thrw",), (PATH,), parse, (LoaderName("throwloader", "Throw"),),
                  RESOURCEPACK, ("throwaway.json",), "throwaway pack: throwaway.json"),)
"""
_CHECK = """
import importlib.machinery, json, sys
_find = importlib.machinery.PathFinder.find_spec.__func__
def find_spec(cls, name, path=None, target=None):
    spec = _find(cls, name, path, target)
    if name == "indexium_jar.packs" and spec is not None:
        spec.submodule_search_locations.append(sys.argv[1])
    return spec
importlib.machinery.PathFinder.find_spec = classmethod(find_spec)

from indexium_contracts.github import is_manifest_path
from indexium_search import facets
from indexium_github import assets
from indexium_indexer.github import probe
from indexium_jar import formats, packread
from indexium_jar.packs import Archive, classify, entries_to_read, notpacks, parse_pack

names = ["throwaway.json", "textures/a.png"]
print(json.dumps({
    "loader": "throwloader" in formats.LOADERS and "throwloader" in facets.LOADERS,
    "title": formats.LOADER_TITLES.get("throwloader"),
    "types": formats.supported_project_types("throwloader"),
    "read": assets.is_mod_file("pack-1.0.thrw") and not assets.is_jar("pack-1.0.thrw"),
    "classified": classify(names, "pack-1.0.thrw").format,
    "entries": entries_to_read(names),
    "parsed": parse_pack({"throwaway.json": b"{}"}, Archive(names=names)).record.loaders,
    "probed": is_manifest_path("throwaway.json") and "throwaway.json" in probe.CANDIDATE_PATHS,
    "read with the directory": "throwaway.json" in packread._MANIFESTS,
    "named by the skip": "throwaway.json" in notpacks.skip(notpacks.NOT_A_PACK).reason,
}))
"""


def test_a_new_format_is_one_module(tmp_path):
    (tmp_path / "throwaway.py").write_text(_THROWAWAY)
    out = subprocess.run([sys.executable, "-c", _CHECK, str(tmp_path)], capture_output=True, text=True, timeout=120,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {
        "loader": True, "title": "Throw", "types": [formats.RESOURCEPACK], "read": True, "classified": "throwaway",
        "entries": ["throwaway.json"], "parsed": ["throwloader"], "probed": True,
        "read with the directory": True, "named by the skip": True}
