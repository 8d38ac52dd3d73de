"""What every SASL mechanism's server side is: a sans-I/O exchange of tokens.

A mechanism takes the client's token and returns its own (``step``), until it is
``complete`` and knows who the client is (``authorization_id``). A wrong password or an
unknown user raises ``AuthenticationFailed``. Kafka shows the client a mechanism's own
sentence only where it reveals nothing (PLAIN's "Invalid username or password");
otherwise the client gets the generic sentence of ``generic_failure``, so that no answer
tells whether a user exists.
"""

from __future__ import annotations

from typing import Protocol


class AuthenticationFailed(Exception):
    """The exchange failed; ``client_message`` is what the client may read (None: the generic one)."""

    def __init__(self, reason: str, client_message: str | None = None):
        super().__init__(reason)
        self.client_message = client_message


class Mechanism(Protocol):
    name: str
    complete: bool
    authorization_id: str

    def step(self, token: bytes) -> bytes: ...


def generic_failure(mechanism: str) -> str:
    """Kafka's sentence for a failed exchange that must not say why."""
    return f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"
