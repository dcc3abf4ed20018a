"""The /v2 answers as msgspec Structs, in the shapes of Modrinth's API v2 (labrinth 2.7.0).

Each Struct is the encoder of its answer and the source of its OpenAPI component
(``msgspec.json.schema_components``), so the document and the bytes cannot drift apart.
Fields are listed in Modrinth's order; nullable ones are always present (as ``null``),
as labrinth sends them.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from indexium_jar import formats

Side = Literal["required", "optional", "unsupported", "unknown"]
EnvironmentName = Literal["client_and_server", "client_only", "server_only", "unknown"]
DependencyType = Literal["required", "optional", "incompatible", "embedded"]


# The format registry's project types, as v2 answers them (data packs and plugins are "mod")
# and as all_project_types and the facets tell them apart.
V2ProjectType = Literal[formats.v2_project_types()]  # type: ignore[valid-type]
ProjectType = Literal[formats.PROJECT_TYPES]  # type: ignore[valid-type]


class License(msgspec.Struct, frozen=True):
    id: str
    name: str
    url: str | None


class Hashes(msgspec.Struct, frozen=True, omit_defaults=True):
    # Absent until the scan stage has hashed the file (a version published before its scan).
    sha1: str | None = None
    sha512: str | None = None


class VersionFile(msgspec.Struct, frozen=True):
    hashes: Hashes
    url: str
    filename: str
    primary: bool
    size: int
    # file_type and requested_status are left out rather than null: Modrinth's OAS 3.0 document
    # makes them nullable enums without null in the enum, which a validator refuses.


class Dependency(msgspec.Struct, frozen=True):
    version_id: str | None
    project_id: str | None
    file_name: str | None
    dependency_type: DependencyType


class Version(msgspec.Struct, frozen=True):
    id: str
    project_id: str
    author_id: str
    name: str
    version_number: str  # the release tag, as on /api/v1
    changelog: str | None
    changelog_url: None
    date_published: str
    downloads: int
    version_type: Literal["release", "beta", "alpha"]
    status: Literal["listed"]
    featured: bool
    environment: EnvironmentName
    game_versions: list[str]
    loaders: list[str]
    dependencies: list[Dependency]
    files: list[VersionFile]


class Project(msgspec.Struct, frozen=True):
    id: str
    slug: str
    project_type: V2ProjectType
    team: str
    title: str
    description: str
    body: str
    body_url: None
    status: Literal["approved"]
    moderator_message: None
    published: str
    updated: str
    approved: str
    queued: None
    client_side: Side
    server_side: Side
    environment: list[EnvironmentName]
    downloads: int
    followers: int
    categories: list[str]
    additional_categories: list[str]
    game_versions: list[str]
    loaders: list[str]
    versions: list[str]
    icon_url: str | None
    raw_icon_url: str | None
    color: None
    issues_url: str | None
    source_url: str | None
    wiki_url: str | None
    discord_url: str | None
    donation_urls: list[dict]
    gallery: list[dict]
    license: License
    thread_id: str
    monetization_status: Literal["demonetized"]
    organization: None


class SearchHit(msgspec.Struct, frozen=True):
    project_id: str
    project_type: V2ProjectType
    all_project_types: list[ProjectType]
    slug: str
    author: str
    author_id: str | None
    organization: None
    organization_id: None
    title: str
    description: str
    categories: list[str]
    display_categories: list[str]
    versions: list[str]
    downloads: int
    follows: int
    icon_url: str
    date_created: str
    date_modified: str
    latest_version: str
    license: str
    client_side: Side
    server_side: Side
    environment: list[EnvironmentName]
    disclosure_types: list[str]
    gallery: list[str]
    featured_gallery: None
    color: None


class SearchResults(msgspec.Struct, frozen=True):
    hits: list[SearchHit]
    offset: int
    limit: int
    total_hits: int


class ProjectIdentifier(msgspec.Struct, frozen=True):
    id: str


class DependencyList(msgspec.Struct, frozen=True):
    projects: list[Project]
    versions: list[Version]


class GameVersionTag(msgspec.Struct, frozen=True):
    version: str
    version_type: Literal["release", "snapshot", "alpha", "beta"]
    date: str
    major: bool


class LoaderTag(msgspec.Struct, frozen=True):
    icon: str
    name: str
    supported_project_types: list[str]


class CategoryTag(msgspec.Struct, frozen=True):
    icon: str
    name: str
    project_type: str
    header: str


class LicenseTag(msgspec.Struct, frozen=True):
    short: str
    name: str


class LicenseText(msgspec.Struct, frozen=True):
    """/v2/tag/license/{id} (Modrinth's ``License``): the body says where the text is (licenses.py)."""

    title: str
    body: str


class DonationPlatformTag(msgspec.Struct, frozen=True):
    short: str
    name: str


class ForgeUpdates(msgspec.Struct, frozen=True):
    """Forge's update-checker file: ``promos`` maps "<mc>-latest"/"<mc>-recommended" to the mod's
    own version; every other key is a Minecraft version mapping mod versions to changelogs."""

    homepage: str
    promos: dict[str, str]


# Components of our own OpenAPI document (errors are /api/v1's Error: the same envelope).
COMPONENTS = (Project, Version, SearchResults, ProjectIdentifier, DependencyList, GameVersionTag,
              LoaderTag, CategoryTag, LicenseTag, LicenseText, DonationPlatformTag, ForgeUpdates)
