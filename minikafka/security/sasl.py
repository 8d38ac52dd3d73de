"""A connection's SASL authentication, as Kafka's broker runs it (KIP-43, KIP-152).

On a SASL listener (SASL_PLAINTEXT, SASL_SSL) a connection must authenticate before
anything else. The allowed order, declared once in ``ALLOWED``::

    ApiVersions (optional) -> SaslHandshake(mechanism) -> SaslAuthenticate ... -> any request

Anything out of order closes the connection: before the handshake without an answer;
during the exchange after an ILLEGAL_SASL_STATE answer. An unsupported mechanism is
answered UNSUPPORTED_SASL_MECHANISM with the enabled list, a failed exchange
SASL_AUTHENTICATION_FAILED with Kafka's sentence; after either the connection closes.
Once complete, the connection carries the principal ``User:<name>``. This module is
sans-I/O: the dispatcher feeds it API keys and tokens, the server closes sockets.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from .mechanisms import AuthenticationFailed, Mechanism, generic_failure

API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36
ANONYMOUS = "User:ANONYMOUS"


class SaslState(enum.Enum):
    HANDSHAKE_OR_VERSIONS = "waiting for ApiVersions or SaslHandshake"
    HANDSHAKE = "waiting for SaslHandshake"
    AUTHENTICATE = "waiting for SaslAuthenticate"
    COMPLETE = "authenticated"
    FAILED = "failed"


ALLOWED: dict[SaslState, frozenset[int]] = {
    SaslState.HANDSHAKE_OR_VERSIONS: frozenset({API_VERSIONS, SASL_HANDSHAKE}),
    SaslState.HANDSHAKE: frozenset({SASL_HANDSHAKE}),
    SaslState.AUTHENTICATE: frozenset({SASL_AUTHENTICATE}),
    SaslState.FAILED: frozenset(),
}


class Verdict(enum.Enum):
    PASS = "pass"
    REFUSE = "answer ILLEGAL_SASL_STATE, then close"
    CLOSE = "close without an answer"


class SaslExchange:
    """One connection's way through the SASL states."""

    def __init__(self, mechanisms: tuple[str, ...], new_mechanism: Callable[[str], Mechanism]):
        self.mechanisms = mechanisms
        self._new_mechanism = new_mechanism
        self.state = SaslState.HANDSHAKE_OR_VERSIONS
        self.mechanism: Mechanism | None = None

    @property
    def complete(self) -> bool:
        return self.state is SaslState.COMPLETE

    def admit(self, api_key: int, version_supported: bool = True) -> Verdict:
        """May a request of ``api_key`` come now? A valid ApiVersions moves the state on."""
        if self.state is SaslState.COMPLETE:
            return Verdict.PASS
        if api_key not in ALLOWED[self.state]:
            return Verdict.REFUSE if self.state is SaslState.AUTHENTICATE else Verdict.CLOSE
        if api_key == API_VERSIONS and version_supported:
            self.state = SaslState.HANDSHAKE  # an unsupported version may be retried, as in Kafka
        return Verdict.PASS

    def handshake(self, mechanism: str) -> bool:
        """SaslHandshake: True when ``mechanism`` is enabled; False means answer and close."""
        if mechanism not in self.mechanisms:
            self.state = SaslState.FAILED
            return False
        self.mechanism = self._new_mechanism(mechanism)
        self.state = SaslState.AUTHENTICATE
        return True

    def authenticate(self, token: bytes) -> bytes:
        """SaslAuthenticate: the server's token; AuthenticationFailed carries the client's sentence."""
        assert self.mechanism is not None, "admit() lets SaslAuthenticate through only after a handshake"
        try:
            answer = self.mechanism.step(token)
        except AuthenticationFailed as e:
            self.state = SaslState.FAILED
            raise AuthenticationFailed(str(e), e.client_message or generic_failure(self.mechanism.name)) from None
        if self.mechanism.complete:
            self.state = SaslState.COMPLETE
        return answer

    @property
    def principal(self) -> str:
        return f"User:{self.mechanism.authorization_id}" if self.complete and self.mechanism else ANONYMOUS


@dataclass
class Session:
    """One client connection as the broker's rules see it (the server owns the socket)."""

    listener: str | None = None  # the listener's name, e.g. SASL_PLAINTEXT; None: the only one
    protocol: str = "PLAINTEXT"
    client_host: str = "127.0.0.1"
    tls_principal: str | None = None  # User:CN=... when the client showed a certificate
    sasl: SaslExchange | None = None
    close_after_response: bool = False
    reason: str = field(default="", repr=False)  # why it closes, for the broker's log
    close_delay_ms: int = 0  # connection.failed.authentication.delay.ms: the answer is read before the close

    @property
    def principal(self) -> str:
        if self.sasl is not None:
            return self.sasl.principal
        return self.tls_principal or ANONYMOUS

    def close_after(self, reason: str) -> None:
        self.close_after_response, self.reason = True, reason
