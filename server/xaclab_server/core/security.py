"""Passwords, tokens and the CSRF check: the one place secrets are made and compared.

Passwords are hashed with argon2id (argon2-cffi's RFC 9106 low-memory
profile), slow on purpose.  Session, API and agent tokens are 256 random bits,
so they are stored as SHA-256 hashes: a slow hash adds nothing to a secret
nobody can guess, and a lookup by hash stays one indexed query.
"""

import hashlib
import hmac
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

API_TOKEN_PREFIX = "xu_"
SESSION_COOKIE = "xaclab_session"
LOGIN_CSRF_COOKIE = "xaclab_login_csrf"
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
MIN_PASSWORD_LENGTH = 10
MAX_PASSWORD = 1024
MAX_USERNAME = 64

_hasher = PasswordHasher()
# Verified against when a username is unknown, so the reply takes as long as for a known one.
_DUMMY_HASH = _hasher.hash(secrets.token_urlsafe(16))


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    try:
        return _hasher.verify(password_hash or _DUMMY_HASH, password) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False


def password_problem(password: str) -> str | None:
    """A sentence saying why ``password`` is refused, or None."""
    if len(password) < MIN_PASSWORD_LENGTH:
        return f"A password has at least {MIN_PASSWORD_LENGTH} characters."
    if len(password) > MAX_PASSWORD:
        return f"A password has at most {MAX_PASSWORD} characters."
    return None


def new_token(prefix: str = "") -> str:
    return prefix + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def same_secret(given: str | None, expected: str | None) -> bool:
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))
