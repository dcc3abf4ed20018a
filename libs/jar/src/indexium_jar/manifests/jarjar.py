"""Jar-in-jar: NeoForge/Forge JarJar's ``META-INF/jarjar/metadata.json`` and entry-name scans.

Nested jars need the whole inner entry to read, so the indexer only gets their paths (and,
for JarJar, the artifact and accepted range) from here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from indexium_jar.manifests import _common as helpers
from indexium_jar.model import Dependency, ManifestProblem

PATH = "META-INF/jarjar/metadata.json"
# Loom puts nested jars in META-INF/jars/, JarJar in META-INF/jarjar/ (one level, no subfolders).
FABRIC_DIR = re.compile(r"META-INF/jars/[^/]+\.jar")
JARJAR_DIR = re.compile(r"META-INF/jarjar/[^/]+\.jar")


def parse(data: bytes) -> tuple[list[str], list[Dependency], list[str], ManifestProblem | None]:
    """``{"jars": [{"identifier": {group, artifact}, "version": {range, artifactVersion}, "path"}]}``.

    Returns (paths, embedded dependencies, warnings, problem).
    """
    text, warnings = helpers.decode_utf8(data, PATH)
    try:
        doc, extra = helpers.loads_gson_strict(text)
    except ValueError as exc:
        return [], [], warnings, helpers.problem(PATH, "invalid_json", f"{PATH} is not valid JSON: {exc}")
    warnings += extra
    jars = doc.get("jars") if isinstance(doc, dict) else None
    if not isinstance(jars, list):
        return [], [], warnings, helpers.problem(PATH, "invalid_manifest", f"{PATH} has no 'jars' array")
    paths: list[str] = []
    deps: list[Dependency] = []
    for item in jars:
        if not isinstance(item, dict):
            continue
        if helpers.text(item.get("path")):
            paths.append(item["path"])
        ident = item.get("identifier") if isinstance(item.get("identifier"), dict) else {}
        version = item.get("version") if isinstance(item.get("version"), dict) else {}
        if artifact := helpers.text(ident.get("artifact")):
            deps.append(Dependency(mod_id=artifact, kind="embedded", version_range=helpers.text(version.get("range"))))
    return paths, deps, warnings, None


def entries_in(entry_names: Sequence[str], pattern: re.Pattern[str]) -> list[str]:
    # The prefix test first: a jar can list 20,000 entries and only a few are nested jars.
    return [name for name in entry_names if name.startswith("META-INF/jar") and pattern.fullmatch(name)]
