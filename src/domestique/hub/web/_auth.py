"""Who may read the web report: admin tokens and the sessions they open.

``domestique hub admin-token`` makes a token (256 random bits, printed once, stored only as
its sha256, valid ``--expires``). ``GET /login?token=T`` with a valid token opens a session:
a new random id in a cookie (HttpOnly, SameSite=Strict, Secure under TLS), stored as its
sha256 with an expiry of :data:`SESSION_S`. Every other page and export needs that cookie.
"""

from __future__ import annotations

import hashlib
import secrets
import time

from domestique.hub.store import HubStore
from domestique.records import utc_now_iso

SESSION_S = 12 * 3600
COOKIE = "domestique_session"


def _h(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _after(seconds: float) -> str:
    return utc_now_iso(time.time_ns() + int(seconds * 1e9))


def create_admin_token(store: HubStore, *, expires_s: float) -> str:
    token = "dat_" + secrets.token_urlsafe(32)
    with store.db.tx() as tx:
        tx.run(
            "INSERT INTO admin_tokens (token_hash, created_at, expires_at) VALUES (%s, %s, %s)",
            (_h(token), utc_now_iso(), _after(expires_s)),
        )
    return token


def open_session(store: HubStore, token: str) -> str | None:
    """A new session id for a valid, unexpired admin token; None otherwise."""
    if not token or len(token) > 200:
        return None
    now = utc_now_iso()
    with store.db.tx() as tx:
        row = tx.one(
            "SELECT 1 FROM admin_tokens WHERE token_hash = %s AND expires_at > %s",
            (_h(token), now),
        )
        if row is None:
            return None
        session = secrets.token_urlsafe(32)
        tx.run("DELETE FROM web_sessions WHERE expires_at <= %s", (now,))
        tx.run(
            "INSERT INTO web_sessions (session_hash, created_at, expires_at) VALUES (%s, %s, %s)",
            (_h(session), now, _after(SESSION_S)),
        )
    return session


def session_valid(store: HubStore, session: str | None) -> bool:
    if not session or len(session) > 200:
        return False
    with store.db.tx() as tx:
        row = tx.one(
            "SELECT 1 FROM web_sessions WHERE session_hash = %s AND expires_at > %s",
            (_h(session), utc_now_iso()),
        )
    return row is not None


def close_session(store: HubStore, session: str | None) -> None:
    if session:
        with store.db.tx() as tx:
            tx.run("DELETE FROM web_sessions WHERE session_hash = %s", (_h(session),))
