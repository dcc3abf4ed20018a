"""GitHub App authentication: RS256 App JWTs and installation access tokens."""

from __future__ import annotations

import secrets
import string
import time
from dataclasses import dataclass

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from .models import State, Token

DOCS_APP_AUTH = (
    "https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app"
)
DOCS_AUTH = "https://docs.github.com/rest"

MAX_JWT_LIFETIME = 600  # GitHub: exp no more than 10 minutes after iat
CLOCK_SKEW = 60


class AuthError(Exception):
    def __init__(self, message: str, status: int = 401, docs: str = DOCS_AUTH) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.docs = docs


def generate_rsa_pem(bits: int = 2048) -> tuple[bytes, bytes]:
    """A fresh RSA key pair as (private PKCS#1 PEM like GitHub's download, public PEM)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, public


def make_app_jwt(
    app_id: int | str,
    private_pem: bytes | str,
    *,
    now: float | None = None,
    lifetime: int = 540,
    backdate: int = 60,
) -> str:
    """Sign an App JWT the way GitHub's docs recommend (iat backdated 60 s, exp ≤ 10 min)."""
    now = int(time.time() if now is None else now)
    claims = {"iat": now - backdate, "exp": now + lifetime, "iss": str(app_id)}
    return jwt.encode(claims, private_pem, algorithm="RS256")


@dataclass
class AppRegistry:
    """The single GitHub App the fake knows: its id, public key, and minted tokens."""

    state: State
    app_id: int = 0
    slug: str = "indexium-dev"
    client_id: str = ""
    public_pem: bytes | None = None
    token_lifetime: float = 3600.0

    def generate_key(self, app_id: int | None = None, bits: int = 2048) -> tuple[int, str]:
        private, public = generate_rsa_pem(bits)
        if app_id is not None:
            self.app_id = app_id
        elif not self.app_id:
            self.app_id = 29310
        self.client_id = self.client_id or f"Iv1.{secrets.token_hex(8)}"
        self.public_pem = public
        return self.app_id, private.decode()

    def set_public_key(self, app_id: int, public_pem: bytes | str) -> None:
        self.app_id = app_id
        self.public_pem = public_pem.encode() if isinstance(public_pem, str) else public_pem

    # ---- JWT ----------------------------------------------------------------------------
    def verify_jwt(self, authorization: str | None) -> dict:
        if not authorization:
            raise AuthError(
                "A JSON web token could not be decoded", docs=DOCS_APP_AUTH
            )
        scheme, _, credential = authorization.partition(" ")
        if scheme.lower() != "bearer" or not credential:
            raise AuthError("A JSON web token could not be decoded", docs=DOCS_APP_AUTH)
        if self.public_pem is None:
            raise AuthError("Integration not found", docs=DOCS_APP_AUTH)
        try:
            header = jwt.get_unverified_header(credential)
        except jwt.PyJWTError:
            raise AuthError("A JSON web token could not be decoded", docs=DOCS_APP_AUTH) from None
        if header.get("alg") != "RS256":
            raise AuthError("A JSON web token could not be decoded", docs=DOCS_APP_AUTH)
        try:
            claims = jwt.decode(
                credential,
                self.public_pem,
                algorithms=["RS256"],
                options={
                    "require": ["iat", "exp", "iss"],
                    "verify_iat": False,
                    "verify_exp": False,  # checked below against the fake's clock
                    "verify_nbf": False,
                },
            )
        except jwt.InvalidSignatureError:
            raise AuthError("A JSON web token could not be decoded", docs=DOCS_APP_AUTH) from None
        except jwt.PyJWTError as exc:
            raise AuthError(
                f"A JSON web token could not be decoded ({exc})", docs=DOCS_APP_AUTH
            ) from None
        now = self.state.clock()
        try:
            iat, exp = int(claims["iat"]), int(claims["exp"])
        except (TypeError, ValueError):
            raise AuthError("A JSON web token could not be decoded", docs=DOCS_APP_AUTH) from None
        if exp < now - CLOCK_SKEW:
            raise AuthError(
                "'Expiration time' claim ('exp') must be a numeric value representing the "
                "future time at which the assertion expires",
                docs=DOCS_APP_AUTH,
            )
        if iat > now + CLOCK_SKEW:
            raise AuthError(
                "'Issued at' claim ('iat') must be an Integer representing the time that "
                "the assertion was issued",
                docs=DOCS_APP_AUTH,
            )
        if exp - iat > MAX_JWT_LIFETIME or exp > now + MAX_JWT_LIFETIME + CLOCK_SKEW:
            raise AuthError(
                "'Expiration time' claim ('exp') is too far in the future", docs=DOCS_APP_AUTH
            )
        if str(claims["iss"]) not in {str(self.app_id), self.client_id}:
            raise AuthError("Integration not found", status=401, docs=DOCS_APP_AUTH)
        return claims

    # ---- installation tokens --------------------------------------------------------------
    def mint_token(
        self,
        installation_id: int,
        lifetime: float | None = None,
        repository_ids: list[int] | None = None,
    ) -> Token:
        alphabet = string.ascii_letters + string.digits
        value = "ghs_" + "".join(secrets.choice(alphabet) for _ in range(36))
        tok = Token(
            token=value,
            installation_id=installation_id,
            expires_at=self.state.clock() + (self.token_lifetime if lifetime is None else lifetime),
            repository_ids=repository_ids,
        )
        self.state.tokens[value] = tok
        return tok

    def token_from_header(self, authorization: str | None) -> Token | None:
        """``None`` for anonymous; raises AuthError('Bad credentials') for bad/expired tokens."""
        if not authorization:
            return None
        scheme, _, credential = authorization.partition(" ")
        if scheme.lower() not in {"token", "bearer"} or not credential:
            raise AuthError("Bad credentials")
        tok = self.state.tokens.get(credential.strip())
        if tok is None or tok.expires_at <= self.state.clock():
            raise AuthError("Bad credentials")
        inst = self.state.installations.get(tok.installation_id)
        if inst is None or inst.suspended_at is not None:
            raise AuthError("Bad credentials")
        return tok
