"""Checking a DPoP proof the way RFC 9449 §4.3 has a server check it, for the fake servers.

Written from the RFC with ``cryptography`` alone (ES256 only: what bothost signs with), so
the client's proofs are judged by code that shares nothing with the code making them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, utils

IAT_WINDOW = 300  # seconds either side of now a proof's iat may be (RFC 9449 §11.1)


class ProofError(Exception):
    pass


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def thumbprint(jwk: dict[str, str]) -> str:
    members = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"))
    return b64(hashlib.sha256(members.encode()).digest())


def check(
    proof: str | None,
    method: str,
    url: str,
    *,
    token: str | None = None,
    nonce: str | None = None,
) -> dict[str, Any]:
    """The proof's claims plus ``jkt`` (its key's thumbprint); ProofError says what is wrong.
    A proof for the wrong nonce raises ProofError("use_dpop_nonce")."""
    if not proof or proof.count(".") != 2:
        raise ProofError("no DPoP proof, or not a JWT")
    head, body, signature = proof.split(".")
    header, claims = json.loads(unb64(head)), json.loads(unb64(body))
    if header.get("typ") != "dpop+jwt" or header.get("alg") != "ES256":
        raise ProofError(f"header {header}")
    jwk = header.get("jwk") or {}
    if "d" in jwk or jwk.get("crv") != "P-256":
        raise ProofError("jwk must be a public P-256 key")
    public = ec.EllipticCurvePublicNumbers(
        int.from_bytes(unb64(jwk["x"]), "big"),
        int.from_bytes(unb64(jwk["y"]), "big"),
        ec.SECP256R1(),
    ).public_key()
    raw = unb64(signature)
    der = utils.encode_dss_signature(
        int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")
    )
    try:
        public.verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise ProofError("signature does not verify") from None
    if claims.get("htm") != method or claims.get("htu") != url:
        raise ProofError(f"htm/htu {claims.get('htm')} {claims.get('htu')}, not {method} {url}")
    if (
        not isinstance(claims.get("jti"), str)
        or abs(time.time() - claims.get("iat", 0)) > IAT_WINDOW
    ):
        raise ProofError("jti or iat")
    if token is not None:
        ath = b64(hashlib.sha256(token.encode()).digest())
        if claims.get("ath") != ath:
            raise ProofError("ath does not match the access token")
    if nonce is not None and claims.get("nonce") != nonce:
        raise ProofError("use_dpop_nonce")
    return {**claims, "jkt": thumbprint(jwk)}
