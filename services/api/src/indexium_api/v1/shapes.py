"""The /api/v1 answers as msgspec Structs: the encoders of the answers (build.py builds them) and
the source of their OpenAPI components (``msgspec.json.schema_components`` in openapi.py), so
the document cannot drift from the bytes. Unknown fields are forbidden, which the document
states as ``additionalProperties: false``: the contract test then catches a field added here
but not there, and the other way round.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec

from indexium_jar import formats

Count = Annotated[int, msgspec.Meta(ge=0)]
Environment = Literal["client", "server", "both"]
VersionType = Literal["release", "beta", "alpha"]
ProjectType = Annotated[Literal[formats.PROJECT_TYPES], msgspec.Meta(  # (the registry's, in its order)
    description="The project's type (the registry's, indexium_jar.formats): what GET /mods?type= filters by.")]


class _Shape(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    pass


class Error(_Shape):
    error: str
    description: str


class SearchHit(_Shape):
    slug: str
    name: str
    summary: str
    authors: list[str]
    categories: list[str]
    environment: Environment
    loaders: list[str]
    project_type: ProjectType
    game_versions: list[str]
    latest_version: str | None
    downloads: Count
    active_servers: Count
    icon_url: str | None
    created_at: datetime | None
    updated_at: datetime | None


class SearchResult(_Shape):
    hits: list[SearchHit]
    total: Count
    limit: Annotated[int, msgspec.Meta(ge=1)]
    offset: Count


class Mod(_Shape):
    slug: str
    name: str
    summary: str
    description: str
    description_html: Annotated[str | None, msgspec.Meta(
        description="The repository's README as sanitized HTML (GitHub-flavoured Markdown; tags, attributes and "
                    "URLs from an allow-list, relative links resolved against the repository, at most ~64 KiB "
                    "then a 'Read more on GitHub' link); null when the repository has none or it was not read yet.")]
    authors: list[str]
    owner: str | None
    licenses: list[str]
    links: Annotated[dict[str, str], msgspec.Meta(
        description="Named links (homepage, sources, issues, wiki, ...): absolute http(s) URLs with a host and "
                    "no credentials, at most 2,048 characters (the one URL policy, docs/security.md).")]
    categories: Annotated[list[str], msgspec.Meta(
        description="Categories from the vocabulary GET /v2/tag/category lists (Modrinth's mod categories).")]
    tags: Annotated[list[str], msgspec.Meta(
        description="The repository's other GitHub topics: plain words (a-z, 0-9, hyphens), at most 20.")]
    environment: Environment
    loaders: list[str]
    project_type: ProjectType
    game_versions: list[str]
    latest_version: Annotated[str | None, msgspec.Meta(description="The release tag of the latest version.")]
    latest_mod_version: Annotated[str | None, msgspec.Meta(
        description="The latest version's own version, as its primary file's manifest declares it.")]
    downloads: Count
    active_servers: Count
    repository: str
    fork: Annotated[bool, msgspec.Meta(description="GitHub marks the repository as a fork of another one.")]
    icon_url: str | None
    created_at: datetime | None
    updated_at: datetime | None


INFERRED = ("True when the file does not state its game versions and they were read from the release's "
            "name or tag (a shader pack), or from a manifest field that only suggests them.")


class FileHashes(_Shape):
    # null until the scan stage has hashed the file
    sha1: str | None
    sha256: str | None
    sha512: str | None


class File(_Shape):
    filename: str
    url: str
    size: Count
    primary: bool
    loaders: list[str]
    game_versions: list[str]
    mod_id: Annotated[str | None, msgspec.Meta(description="The mod id the file's manifest declares.")]
    mod_version: Annotated[str | None, msgspec.Meta(
        description="The mod's own version as the file's manifest declares it (the release tag is "
                    "version_number); null where the manifest format gives none.")]
    hashes: FileHashes
    game_versions_inferred: Annotated[bool, msgspec.Meta(description=INFERRED)] = False


class Version(_Shape):
    mod: Annotated[str, msgspec.Meta(description="The mod's slug.")]
    version_number: Annotated[str, msgspec.Meta(description="The release tag.")]
    version_type: VersionType
    name: str
    changelog: str
    loaders: list[str]
    game_versions: list[str]
    published_at: datetime | None
    downloads: Count
    files: list[File]
    game_versions_inferred: Annotated[bool, msgspec.Meta(description=INFERRED)] = False


class LoaderTag(_Shape):
    name: str
    # The project types whose files carry this loader (indexium_jar.formats): "mod" and "modpack"
    # for fabric, "resourcepack" for minecraft, "shader" for iris ...
    project_types: list[str] = []


class GameVersionTag(_Shape):
    version: str
    version_type: Literal["release", "snapshot", "old_beta", "old_alpha"]
    date: str


COMPONENTS = (Error, SearchResult, Mod, Version, LoaderTag, GameVersionTag)
