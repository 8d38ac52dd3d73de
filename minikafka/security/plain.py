"""SASL/PLAIN (RFC 4616) on the broker: one token, ``authzid NUL username NUL password``.

The users and passwords are the broker's JAAS configuration, as in Kafka's
``PlainLoginModule`` (``user_alice="alice-secret"``). PLAIN sends the password itself,
so it belongs on a TLS listener (SASL_SSL) anywhere but a classroom.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from .mechanisms import AuthenticationFailed

NAME = "PLAIN"


class PlainServer:
    name = NAME

    def __init__(self, users: Mapping[str, str]):
        self.users = users
        self.complete = False
        self.authorization_id = ""

    def step(self, token: bytes) -> bytes:
        if self.complete:
            raise AuthenticationFailed("PLAIN takes one token; the exchange is over")
        parts = token.decode("utf-8", "replace").split("\0")
        if len(parts) != 3:
            raise AuthenticationFailed(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(parts)}")
        authzid, username, password = parts
        if not username or not password:
            raise AuthenticationFailed("Authentication failed: username or password not specified")
        known = self.users.get(username)
        if known is None or not hmac.compare_digest(known.encode(), password.encode()):
            raise AuthenticationFailed(f"wrong password or unknown user {username!r}",
                                       "Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise AuthenticationFailed("authzid differs", "Authentication failed: Client requested an "
                                       "authorization id that is different from username")
        self.complete, self.authorization_id = True, username
        return b""
