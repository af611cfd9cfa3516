"""DPoP (RFC 9449, the MCP extension SEP-1932): proofs that the client holds a server's key.

Each protected server gets its own P-256 key pair, made at its first DPoP login and kept
as a private JWK in that server's OAuth record (``mcp_oauth``, in the home's 0600
database): the access and refresh tokens are bound to it, so it lives and dies with them,
and every host sharing the store can use them. A proof is a fresh ES256 JWT per HTTP
request — header ``typ: dpop+jwt`` with the public ``jwk``; claims ``jti``, ``htm``,
``htu`` (the URL without query or fragment), ``iat``, and ``ath`` (the access token's
SHA-256) on requests that carry a token. A server may demand a nonce it hands out in
``DPoP-Nonce`` (RFC 9449 §8, §9); :class:`Nonces` keeps the newest per endpoint (the URL
a proof names), so the token endpoint's and the MCP endpoint's never mix, even on one host.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, utils

ALGORITHM = "ES256"  # the one algorithm we sign with; RFC 9449 servers commonly offer it
Jwk = dict[str, str]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_int(value: int) -> str:
    return b64url(value.to_bytes(32, "big"))  # P-256 coordinates are 32 bytes (RFC 7518)


def new_key() -> Jwk:
    """A fresh P-256 key pair as a private JWK (``d`` is the secret)."""
    key = ec.generate_private_key(ec.SECP256R1())
    numbers = key.private_numbers()
    return dict(public_jwk(key.public_key()), d=b64url_int(numbers.private_value))


def public_jwk(public: ec.EllipticCurvePublicKey) -> Jwk:
    numbers = public.public_numbers()
    return {"kty": "EC", "crv": "P-256", "x": b64url_int(numbers.x), "y": b64url_int(numbers.y)}


@lru_cache(maxsize=16)
def private_key(d: str) -> ec.EllipticCurvePrivateKey:
    raw = base64.urlsafe_b64decode(d + "=" * (-len(d) % 4))
    return ec.derive_private_key(int.from_bytes(raw, "big"), ec.SECP256R1())


def thumbprint(jwk: Jwk) -> str:
    """The JWK SHA-256 thumbprint (RFC 7638): what a bound token's ``cnf.jkt`` names."""
    members = {k: jwk[k] for k in ("crv", "kty", "x", "y")}
    return b64url(hashlib.sha256(json.dumps(members, separators=(",", ":")).encode()).digest())


def target(url: str) -> str:
    """The ``htu`` of a request to `url`: no query and no fragment (RFC 9449 §4.2)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def access_token_hash(token: str) -> str:
    return b64url(hashlib.sha256(token.encode("ascii", "replace")).digest())


def proof(
    jwk: Jwk, method: str, url: str, *, token: str | None = None, nonce: str | None = None
) -> str:
    """One DPoP proof JWT for `method` on `url` (see module docstring)."""
    public = {k: jwk[k] for k in ("kty", "crv", "x", "y")}
    header = {"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": public}
    claims: dict[str, Any] = {
        "jti": str(uuid.uuid4()),
        "htm": method.upper(),
        "htu": target(url),
        "iat": int(time.time()),
    }
    if token is not None:
        claims["ath"] = access_token_hash(token)
    if nonce is not None:
        claims["nonce"] = nonce
    signing_input = ".".join(
        b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)
    ).encode()
    der = private_key(jwk["d"]).sign(signing_input, ec.ECDSA(hashes.SHA256()))
    r, s = utils.decode_dss_signature(der)
    signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")  # JWS wants raw r‖s
    return f"{signing_input.decode()}.{b64url(signature)}"


class Nonces:
    """The newest ``DPoP-Nonce`` each endpoint handed out (RFC 9449 §8, §9)."""

    def __init__(self) -> None:
        self.by_target: dict[str, str] = {}

    def remember(self, url: str, nonce: str | None) -> None:
        if nonce:
            self.by_target[target(url)] = nonce

    def get(self, url: str) -> str | None:
        return self.by_target.get(target(url))


class Prover:
    """Signs proofs with one server's key, with the nonce its servers asked for."""

    def __init__(self, jwk: Jwk, nonces: Nonces) -> None:
        self.jwk, self.nonces = jwk, nonces

    def header(self, method: str, url: str, token: str | None = None) -> str:
        return proof(self.jwk, method, url, token=token, nonce=self.nonces.get(url))

    def remember(self, url: str, nonce: str | None) -> None:
        self.nonces.remember(url, nonce)
