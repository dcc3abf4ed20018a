"""META-INF/MANIFEST.MF main-section parsing."""

from indexium_jar.manifests.manifest_mf import parse_manifest


def test_crlf_continuation_lines_and_colon_values():
    data = (
        b"Manifest-Version: 1.0\r\n"
        b"Implementation-Version: 1.20.1-4.3.2\r\n"
        b"MixinConfigs: examplemod.mixins.json,examplemod.client.mixins.json,exam\r\n"
        b" plemod.compat.mixins.json\r\n"
        b"Implementation-URL: https://github.com/a/b\r\n"
        b"Built-Date: 2024-01-01T10:00:00Z\r\n"
        b"\r\n"
        b"Name: com/example/Foo.class\r\n"
        b"SHA-256-Digest: abc\r\n"
    )
    attrs = parse_manifest(data)
    assert attrs["MixinConfigs"] == "examplemod.mixins.json,examplemod.client.mixins.json,examplemod.compat.mixins.json"
    assert attrs["Implementation-URL"] == "https://github.com/a/b"
    assert attrs["Built-Date"] == "2024-01-01T10:00:00Z"
    assert "Name" not in attrs and "SHA-256-Digest" not in attrs  # only the main section matters


def test_lf_and_continuation_keeps_inner_spaces():
    attrs = parse_manifest(b"Fabric-Minecraft-Version: 1.20.1\nSpecification-Title: two\n  spaces\n")
    assert attrs == {"Fabric-Minecraft-Version": "1.20.1", "Specification-Title": "two spaces"}


def test_malformed_lines_are_skipped_and_first_value_wins():
    attrs = parse_manifest(b"\xef\xbb\xbfno colon here\nKey: one\nKey: two\nBad Key: x\nEmpty:\nFMLModType: GAMELIBRARY\n")
    assert attrs == {"Key": "one", "Empty": "", "FMLModType": "GAMELIBRARY"}


def test_empty_and_garbage():
    assert parse_manifest(b"") == {}
    assert parse_manifest(b"\xff\xfe\x00") == {}
