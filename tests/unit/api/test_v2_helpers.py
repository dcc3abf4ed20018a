"""Pure parts of /v2: license mapping, base62 owner ids, facet parsing and the per-file split,
forge_updates.json from rows."""

import pytest
from aiohttp.test_utils import make_mocked_request

from indexium_api.v2 import build, forge, licenses
from indexium_api.v2 import params as v2params
from indexium_search.facets import Facet
from indexium_platform.web import ApiError


def test_licenses_from_spdx_ids_and_free_text():
    assert licenses.of(["MIT"]) == licenses.License("MIT", "MIT License", "https://spdx.org/licenses/MIT.html")
    assert licenses.of(["lgpl-3.0"]).id == "LGPL-3.0-only"  # deprecated short form, any case
    assert licenses.of(["All Rights Reserved"]).id == "LicenseRef-All-Rights-Reserved"
    assert licenses.of([]).id == "LicenseRef-Unknown"
    odd = licenses.of(["My own licence, v2"])
    assert odd.id == "LicenseRef-My-own-licence-v2" and odd.name == "My own licence, v2" and odd.url is None
    assert licenses.of(["EUPL-1.2"]).url == "https://spdx.org/licenses/EUPL-1.2.html"


def test_base62_owner_ids():
    assert build.base62(0) == "0" and build.base62(61) == "z" and build.base62(62) == "10"
    assert build.base62(583231) == "2Rix"  # 2·62³ + 27·62² + 44·62 + 59


def groups(raw: str):
    return v2params.facet_groups(make_mocked_request("GET", "/v2/search?" + raw))


def test_facets_parse_and_split_per_file():
    parsed = groups('facets=[["categories:forge","categories:fabric"],["versions:1.20.1"],'
                    '["categories:optimization"],"downloads>=100",["versions != 1.19.2"]]')
    assert parsed[3] == (Facet("downloads", ">=", 100),) and parsed[4] == (Facet("versions", "!=", "1.19.2"),)
    loaders, versions, rest = v2params.split_per_file(parsed)
    assert loaders == ("forge", "fabric") and versions == ("1.20.1",)
    assert rest == ((Facet("categories", ":", "optimization"),), (Facet("downloads", ">=", 100),),
                    (Facet("versions", "!=", "1.19.2"),))
    # A group mixing loaders and versions is not per-file material: it stays a mod-level OR.
    assert v2params.split_per_file(groups('facets=[["categories:forge","versions:1.20.1"]]'))[2] != ()


@pytest.mark.parametrize("raw", ['facets=[["colour:red"]]', 'facets=[["versions>1.20"]]', 'facets=[["title:"]]',
                                 'facets=[["downloads>=lots"]]', "facets=nope", 'facets=[[1]]'])
def test_bad_facets_are_400_naming_facets(raw):
    with pytest.raises(ApiError) as exc:
        groups(raw)
    assert exc.value.status == 400 and "'facets'" in exc.value.description


def test_forge_updates_promote_the_declared_version_newest_first():
    rows = [
        {"version_number": "v2.0", "version_type": "beta", "changelog": "b", "game_versions": ["1.20.1"],
         "manifest_version": "2.0.0-beta"},
        {"version_number": "v1.0", "version_type": "release", "changelog": "", "game_versions": ["1.20.1", "1.20"],
         "manifest_version": None},  # no declared version: the tag stands in
    ]
    doc = forge.document({"links": {"homepage": "https://example.org"}, "repo_full_name": "o/r"}, rows)
    assert doc["homepage"] == "https://example.org"
    assert doc["promos"] == {"1.20.1-latest": "2.0.0-beta", "1.20.1-recommended": "v1.0",
                             "1.20-latest": "v1.0", "1.20-recommended": "v1.0"}
    assert doc["1.20.1"] == {"2.0.0-beta": "b", "v1.0": ""}


def test_a_search_hit_lists_a_loader_once_when_a_topic_has_its_name():
    from datetime import datetime, timezone

    when = datetime(2026, 1, 2, tzinfo=timezone.utc)
    row = {"environment": "both", "categories": ["decoration", "fabric"], "loaders": ["fabric", "quilt"],
           "slug": "lanterns", "name": "Lanterns", "summary": "s", "game_versions": ["1.20.1"],
           "downloads": 3, "has_icon": False, "created_at": when, "updated_at": when}
    extra = {"public_id": "AbCdEf12", "owner": "someone", "author_github_id": 7,
             "latest_version_id": "XyZ12345", "licenses": ["MIT"]}
    hit = build.hit("http://x", row, extra)
    assert hit.categories == ["decoration", "fabric", "quilt"]
    assert hit.display_categories == hit.categories
