"""The mod page's Download button: the file a visitor gets for the loader and game version they
chose (kept in the query string: a GET form, no script needed), and the choices offered.

"Newest" is the catalogue's version order (``catalog.VERSION_ORDER``, the order ``versions_of``
returns). A release is offered before a beta or alpha: the newest *release* file that matches,
and a pre-release only when no release matches (the page then says which kind it is). With no
choice, that is the newest release file, and the page says which loaders and game versions it
is for. Every link is the asset's own GitHub URL, through the one URL policy again.
"""

from __future__ import annotations

from dataclasses import dataclass

from indexium_content import urls
from indexium_jar import gameversions
from indexium_jar.deps.resolver import LOADER_NAMES


@dataclass(frozen=True, slots=True)
class Choice:
    loader: str | None = None
    game_version: str | None = None
    snapshots: bool = False  # show snapshots and pre-releases among the game versions

    @property
    def key(self) -> tuple:
        """For the page's cache key: a plain tuple (compared in C, not by a dataclass __eq__)."""
        return (self.loader, self.game_version, self.snapshots)

    @property
    def made(self) -> bool:
        return bool(self.loader or self.game_version)


@dataclass(frozen=True, slots=True)
class Offer:
    url: str
    filename: str
    size: int | None
    version_number: str
    version_type: str
    loaders: tuple[str, ...]  # the file's (or, when one was chosen, that one)
    game_versions: tuple[str, ...]  # the file's, newest first


def loader_name(loader: str) -> str:
    return LOADER_NAMES.get(loader, loader.capitalize())


def _matches(f: dict, choice: Choice) -> bool:
    return ((choice.loader is None or choice.loader in (f.get("loaders") or ()))
            and (choice.game_version is None or choice.game_version in (f.get("game_versions") or ())))


def pick(versions: list, choice: Choice) -> Offer | None:
    """The file the Download button offers (``versions``: public versions newest first, each with
    its files primary first), or None when no file matches the choice."""
    for releases_only in (True, False):
        for v in versions:
            if releases_only and v["version_type"] != "release":
                continue
            for f in v["files"]:
                url = urls.allowed(f.get("url"))
                if url is None or not _matches(f, choice):
                    continue
                return Offer(url=url, filename=f["filename"], size=f.get("size"), version_number=v["version_number"],
                             version_type=v["version_type"],
                             loaders=(choice.loader,) if choice.loader else tuple(f.get("loaders") or ()),
                             game_versions=tuple(f.get("game_versions") or ()))
    return None


def options(versions: list, choice: Choice) -> tuple[list[str], list[str]]:
    """(loaders, game versions) the choice form offers: what this mod's public files support,
    loaders in the catalogue's order, game versions newest first, snapshots and pre-releases only
    when asked (or when they are all the mod supports); the visitor's own choice is always kept."""
    loaders: dict[str, None] = {}
    game: set[str] = set()
    for v in versions:
        for f in v["files"]:
            loaders.update(dict.fromkeys(f.get("loaders") or ()))
            game.update(f.get("game_versions") or ())
    table = gameversions.default_table()
    shown = game if choice.snapshots else {g for g in game if gameversions.is_release(g, table)} or game
    if choice.game_version:
        shown.add(choice.game_version)
    if choice.loader:
        loaders[choice.loader] = None
    order = {name: i for i, name in enumerate(LOADER_NAMES)}
    return sorted(loaders, key=lambda name: (order.get(name, len(order)), name)), table.newest_first(shown)
