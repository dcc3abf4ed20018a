"""Helpers around the real example payloads in shared/github-payloads."""

from __future__ import annotations

import hashlib

import pytest

from indexium_devstack import payloads

pytestmark = [
    pytest.mark.component,
    pytest.mark.skipif(not payloads.available(), reason="shared/github-payloads not present"),
]


def test_shared_dir_and_override(monkeypatch, tmp_path):
    assert payloads.payloads_dir().is_dir()
    assert payloads.shared_dir() == (payloads.repo_root().parent / "shared").resolve()
    monkeypatch.setenv(payloads.ENV_VAR, str(tmp_path))
    assert payloads.shared_dir() == tmp_path.resolve()
    assert not payloads.available()


def test_every_example_loads():
    examples = payloads.example_payloads()
    assert len(examples) >= 30
    assert all(isinstance(p, dict) and p for p in examples.values())
    releases = payloads.example_payloads("release")
    assert releases and all(p["release"]["tag_name"] for p in releases.values())
    assert payloads.load_payload("release.published") == payloads.load_payload(
        "release.published.payload.json"
    )
    with pytest.raises(FileNotFoundError):
        payloads.load_payload("nope")


def test_with_assets_shapes_assets_like_github():
    original = payloads.load_payload("release.published")
    jar = b"PK\x05\x06" + b"\0" * 18
    out = payloads.with_assets(original, [("mod-1.0.0+1.20.jar", jar)])
    assert original["release"]["assets"] == []  # input untouched
    asset = out["release"]["assets"][0]
    assert payloads.asset_schema_problems(asset) == []
    assert asset["browser_download_url"] == (
        "https://github.com/Codertocat/Hello-World/releases/download/0.0.1/mod-1.0.0%2B1.20.jar"
    )
    assert asset["url"].startswith("https://api.github.com/repos/Codertocat/Hello-World/releases/assets/")
    assert asset["digest"] == "sha256:" + hashlib.sha256(jar).hexdigest() and asset["size"] == 22
    assert asset["uploader"]["login"] == "Codertocat"
    local = payloads.with_assets(original, [("a.jar", b"x")], web_base="http://127.0.0.1:1234")
    assert local["release"]["assets"][0]["browser_download_url"].startswith("http://127.0.0.1:1234/")
    more = payloads.with_assets(out, [payloads.asset_dict("b.jar", size=5)], replace=False)
    assert [a["name"] for a in more["release"]["assets"]] == ["mod-1.0.0+1.20.jar", "b.jar"]
    assert more["release"]["assets"][1]["digest"] is None


def test_schema_check_catches_problems():
    asset = payloads.asset_dict("a.jar", b"x")
    bad = dict(asset, state="deleted", extra=1)
    del bad["size"]
    problems = payloads.asset_schema_problems(bad)
    assert "missing size" in problems and "unexpected extra" in problems
    assert any(p.startswith("state:") for p in problems)
