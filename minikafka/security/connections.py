"""A new connection's ``Session``, made for the listener it arrived on.

On a SASL listener the session starts unauthenticated with the listener's mechanisms:
PLAIN checks the listener's JAAS users, SCRAM the credentials in the cluster metadata
(read at login time, so a credential altered a moment ago already works). On an SSL
listener a client certificate, when one was asked for and shown, names the principal.
"""

from __future__ import annotations

from .mechanisms import Mechanism
from .plain import PlainServer
from .sasl import SaslExchange, Session
from .scram import MECHANISMS as SCRAM_MECHANISMS, CredentialLookup, ScramServer
from .settings import Listener
from .tls import principal_from_certificate


class SessionFactory:
    def __init__(self, listener: Listener, credentials: CredentialLookup, close_delay_ms: int = 100):
        self.listener, self.credentials, self.close_delay_ms = listener, credentials, close_delay_ms

    def __call__(self, client_host: str, peer_certificate: dict | None = None) -> Session:
        listener = self.listener
        sasl = SaslExchange(listener.mechanisms, self._mechanism) if listener.sasl else None
        tls_principal = principal_from_certificate(peer_certificate) if listener.protocol == "SSL" else None
        return Session(listener.name, listener.protocol, client_host, tls_principal, sasl,
                       close_delay_ms=self.close_delay_ms)

    def _mechanism(self, name: str) -> Mechanism:
        if name == "PLAIN":
            return PlainServer(self.listener.plain_users)
        return ScramServer(SCRAM_MECHANISMS[name], self.credentials)
