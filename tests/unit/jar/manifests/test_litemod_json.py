"""litemod.json (LiteLoader)."""

from indexium_jar.manifests import litemod
from indexium_jar.manifests._common import Jar


def test_litemod_fields():
    (rec,) = litemod.parse(b'{"name":"VoxelMap","version":"1.7.10","mcversion":"1.12.2","revision":"3",'
                           b'"author":"MamiyaOtaru","url":"https://example.org","description":"Minimap"}', Jar())
    assert (rec.loader, rec.mod_id, rec.version) == ("liteloader", "VoxelMap", "1.7.10")
    assert rec.game_versions.source == "litemod.json:mcversion" and rec.game_versions.versions == ("1.12.2",)
    assert [a.name for a in rec.authors] == ["MamiyaOtaru"]


def test_litemod_problems():
    assert litemod.parse(b"{", Jar())[0].code == "invalid_json"
    assert litemod.parse(b'{"version":"1"}', Jar())[0].code == "missing_id"
    assert litemod.parse(b"[]", Jar())[0].code == "invalid_manifest"
