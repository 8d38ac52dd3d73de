"""SaslHandshake and SaslAuthenticate alone (issue 27): they act on the caller's connection, a fake here."""

from __future__ import annotations

import asyncio
from typing import Any

from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest

from minikafka.errors import ErrorCode
from minikafka.handlers.ports import Caller
from minikafka.handlers.sasl_authenticate import SaslAuthenticate
from minikafka.handlers.sasl_handshake import SaslHandshake
from minikafka.security.mechanisms import AuthenticationFailed


class Exchange:
    """PLAIN only; the password "right" passes in one step."""

    mechanisms = ("PLAIN",)

    def __init__(self) -> None:
        self.complete, self.principal, self.chosen = False, "User:ANONYMOUS", ""

    def handshake(self, mechanism: str) -> bool:
        self.chosen = mechanism
        return mechanism in self.mechanisms

    def authenticate(self, token: bytes) -> bytes:
        if not token.endswith(b"right"):
            raise AuthenticationFailed("bad password", "Authentication failed: Invalid username or password")
        self.complete, self.principal = True, "User:alice"
        return b""


class Connection:
    def __init__(self, sasl: Exchange | None) -> None:
        self.sasl, self.closed = sasl, ""

    def close_after(self, reason: str) -> None:
        self.closed = reason


def run(handler: Any, api_key: int, request: Any, connection: Connection | None) -> Any:
    return asyncio.run(handler.handle(Caller(api_key, request.__version__, connection=connection), request))


def test_a_known_mechanism_is_accepted_and_an_unknown_one_closes_the_connection():
    ok = Connection(Exchange())
    answer = run(SaslHandshake(None), 17, SaslHandshakeRequest(mechanism="PLAIN"), ok)
    assert (answer.error_code, answer.mechanisms, ok.closed) == (ErrorCode.none, ("PLAIN",), "")
    bad = Connection(Exchange())
    answer = run(SaslHandshake(None), 17, SaslHandshakeRequest(mechanism="GSSAPI"), bad)
    assert answer.error_code == ErrorCode.unsupported_sasl_mechanism and answer.mechanisms == ("PLAIN",)
    assert "GSSAPI" in bad.closed


def test_a_listener_without_sasl_refuses_both():
    plain = Connection(None)
    assert run(SaslHandshake(None), 17, SaslHandshakeRequest(mechanism="PLAIN"), plain).error_code == \
        ErrorCode.illegal_sasl_state
    answer = run(SaslAuthenticate(None), 36, SaslAuthenticateRequest(auth_bytes=b"\0alice\0right"), plain)
    assert answer.error_code == ErrorCode.illegal_sasl_state and "does not use SASL" in answer.error_message


def test_a_good_password_authenticates_and_a_bad_one_fails_with_the_clients_sentence_and_a_close():
    good = Connection(Exchange())
    answer = run(SaslAuthenticate(None), 36, SaslAuthenticateRequest(auth_bytes=b"\0alice\0right"), good)
    assert answer.error_code == ErrorCode.none and good.sasl is not None and good.sasl.principal == "User:alice"
    again = run(SaslAuthenticate(None), 36, SaslAuthenticateRequest(auth_bytes=b"\0alice\0right"), good)
    assert again.error_code == ErrorCode.illegal_sasl_state  # after success, no second exchange
    bad = Connection(Exchange())
    answer = run(SaslAuthenticate(None), 36, SaslAuthenticateRequest(auth_bytes=b"\0alice\0wrong"), bad)
    assert answer.error_code == ErrorCode.sasl_authentication_failed
    assert answer.error_message == "Authentication failed: Invalid username or password"
    assert bad.closed == "SASL authentication failed"
