"""A catalogue of real mod names and descriptions for bench/relevance, rebuilt locally from public
snapshots (nothing of them is committed: their licences do not let us; this script and the
sources it names are what is).

    python bench/relevance/catalogue.py --e2ee DIR --hmcl DIR [--out bench/relevance/.data/catalogue.json]

Sources (git directories of the repositories, e.g. the search tool's fetched snapshots):
  * Krutoy242/Enigmatica2Expert-Extended, MODS.md (commit 266dab4f6): ~540 CurseForge mods of a
    1.12.2 pack with their CurseForge names, slugs and summaries (the "description" class).
  * HMCL-dev/HMCL, HMCL/src/main/resources/assets/mod_data.txt (commit 083dbb18ad): mcmod.cn's
    table of ~11,500 mods with an English name, their CurseForge slugs and mod ids (names only;
    its abbreviation column is not read: the judged abbreviations are our own, queries.py).

Each mod: name, slug (CurseForge's), manifest id (the shortest mod id mcmod.cn lists, else
the slug), summary ('' where the source has none), mcmod (mcmod.cn's page number, 0 where
none: pages are numbered as they were written, so a low number is a long-known mod; run.py's
``--popularity`` proxy, since neither source has download counts).
"""

from __future__ import annotations

import argparse
import html
import json
import re
import subprocess
from pathlib import Path

E2EE_COMMIT = "266dab4f6"
HMCL_COMMIT = "083dbb18ad"
_MODS_MD = re.compile(r"\[\*\*(?P<name>.+?)\*\*\]\(https://www\.curseforge\.com/minecraft/mc-mods/(?P<slug>[^)]+)\)"
                      r".*?<br>(?P<summary>.*)$")


def _show(git_dir: Path, commit: str, path: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def e2ee(git_dir: Path) -> list[dict]:
    out = []
    for line in _show(git_dir, E2EE_COMMIT, "MODS.md").splitlines():
        m = _MODS_MD.search(line)
        if m:
            out.append({"name": html.unescape(m["name"]).strip(), "slug": m["slug"].strip(),
                        "summary": html.unescape(re.sub(r"<[^>]+>", " ", m["summary"])).strip()})
    return out


def hmcl(git_dir: Path) -> list[dict]:
    out = []
    for line in _show(git_dir, HMCL_COMMIT, "HMCL/src/main/resources/assets/mod_data.txt").splitlines():
        if line.startswith("#"):
            continue
        fields = line.split(";")
        if len(fields) < 5 or not fields[4].strip() or not fields[0].strip():
            continue
        ids = sorted((x for x in fields[2].split(",") if re.fullmatch(r"[a-z][a-z0-9_-]{1,63}", x)), key=len)
        out.append({"name": fields[4].strip(), "slug": fields[0].strip(), "manifest_id": ids[0] if ids else "",
                    "summary": "", "mcmod": int(fields[1]) if fields[1].isdigit() else 0})
    return out


def build(e2ee_dir: Path, hmcl_dir: Path) -> list[dict]:
    """Every mod once (by CurseForge slug, then by lower-cased name): E2E-E's (with summaries)
    first, their manifest ids from mcmod.cn's table where it has the slug."""
    table = hmcl(hmcl_dir)
    ids = {m["slug"]: m["manifest_id"] for m in table}
    pages = {m["slug"]: m["mcmod"] for m in table}
    seen_slugs, seen_names, out = set(), set(), []
    for m in e2ee(e2ee_dir) + table:
        m.setdefault("manifest_id", ids.get(m["slug"], ""))
        m.setdefault("mcmod", pages.get(m["slug"], 0))
        m["manifest_id"] = m["manifest_id"] or m["slug"]
        if m["slug"] in seen_slugs or m["name"].lower() in seen_names or not re.fullmatch(r"[a-z0-9][a-z0-9_-]{1,63}",
                                                                                         m["slug"]):
            continue
        seen_slugs.add(m["slug"])
        seen_names.add(m["name"].lower())
        out.append(m)
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--e2ee", type=Path, required=True, help="git directory of Krutoy242/Enigmatica2Expert-Extended")
    parser.add_argument("--hmcl", type=Path, required=True, help="git directory of HMCL-dev/HMCL")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / ".data" / "catalogue.json")
    args = parser.parse_args()
    mods = build(args.e2ee, args.hmcl)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(mods, ensure_ascii=False, indent=0))
    print(f"{len(mods)} mods ({sum(1 for m in mods if m['summary'])} with a summary) -> {args.out}")
