"""A GitHub-shaped HTTP server on loopback for tests and the local demo.

    async with FakeGitHub() as gh:
        repo = gh.add_repo("alice", "lumen", topics=["minecraft-mod"])
        rel = gh.add_release(repo, "v1.0.0", assets=[("lumen-1.0.0.jar", jar_bytes)])
        payload = gh.release_payload(rel)            # webhook body, as GitHub sends it
        url = payload["release"]["assets"][0]["browser_download_url"]   # → 302 → CDN

Modules: ``models`` (state), ``render`` (JSON shapes), ``cdn`` (redirector + CDN with Range),
``api`` (REST routes, pagination, ETags), ``appauth`` (App JWT, installation tokens),
``oauth`` (user sign-in), ``ratelimit``, ``faults``, ``webhooks`` (signing, delivery,
redelivery), and ``server`` (``FakeGitHub``: lifecycle, addresses, clock, observation) with
the mixins it is made of, one per concern tests drive: ``repos``, ``installs``,
``payloads``, ``deliveries``, ``controls`` (faults and rate limits).
"""

from .appauth import generate_rsa_pem, make_app_jwt
from .cdn import parse_range
from .models import (
    Asset,
    AssetStats,
    CdnRequest,
    Delivery,
    Installation,
    Release,
    Repo,
    Token,
    User,
    github_asset_name,
)
from .server import FakeGitHub
from .webhooks import sign, webhook_headers

__all__ = [
    "Asset",
    "AssetStats",
    "CdnRequest",
    "Delivery",
    "FakeGitHub",
    "Installation",
    "Release",
    "Repo",
    "Token",
    "User",
    "generate_rsa_pem",
    "github_asset_name",
    "make_app_jwt",
    "parse_range",
    "sign",
    "webhook_headers",
]
