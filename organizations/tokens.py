"""API token secrets: generation, hashing and look-up. Only hashes are ever stored."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

TOKEN_PREFIX = "lgr"


@dataclass(frozen=True)
class NewSecret:
    raw: str
    prefix: str
    secret_hash: str


def hash_secret(raw: str) -> str:
    """SHA-256 is enough: the secret is 256 random bits, not a guessable password."""
    return hashlib.sha256(raw.encode()).hexdigest()


def generate_secret() -> NewSecret:
    prefix = secrets.token_hex(6)
    raw = f"{TOKEN_PREFIX}_{prefix}_{secrets.token_urlsafe(32)}"
    return NewSecret(raw=raw, prefix=prefix, secret_hash=hash_secret(raw))


def secret_from_raw(raw: str) -> NewSecret | None:
    """The stored parts of a raw token made elsewhere, or None when it is not one of ours."""
    prefix = split_prefix(raw)
    if prefix is None or len(raw) < 40:
        return None
    return NewSecret(raw=raw, prefix=prefix, secret_hash=hash_secret(raw))


def split_prefix(raw: str) -> str | None:
    parts = raw.split("_", 2)
    if len(parts) != 3 or parts[0] != TOKEN_PREFIX or len(parts[1]) != 12:
        return None
    return parts[1]


def secret_matches(raw: str, secret_hash: str) -> bool:
    return hmac.compare_digest(hash_secret(raw), secret_hash)
