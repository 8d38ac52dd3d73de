"""SaslAuthenticate (KIP-152): one token of the SASL exchange, framed as a Kafka request.

PLAIN takes one round, SCRAM two. When the exchange completes the connection's
principal becomes ``User:<name>``; ``session_lifetime`` is 0 (no re-authentication,
KIP-368). A wrong password or an unknown user is answered SASL_AUTHENTICATION_FAILED
with Kafka's sentence and nothing else: the connection closes after the answer.
"""

from __future__ import annotations

import datetime
import logging

from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest

from ..errors import ErrorCode
from ..security.mechanisms import AuthenticationFailed
from .ports import Caller, Response

log = logging.getLogger("minikafka.sasl")
_NO_LIFETIME = datetime.timedelta(0)


def _answer(caller: Caller, code: ErrorCode, message: str | None = None, token: bytes = b"") -> Response:
    return caller.respond(error_code=code, error_message=message, auth_bytes=token, session_lifetime=_NO_LIFETIME)


class SaslAuthenticate:
    """Acts on the caller's connection only (``Caller.connection``): it needs no port of the broker."""

    def __init__(self, ports: object) -> None:
        pass

    async def handle(self, caller: Caller, request: SaslAuthenticateRequest) -> Response:
        connection = caller.connection
        sasl = connection.sasl if connection is not None else None
        if connection is None or sasl is None or sasl.complete:
            return _answer(caller, ErrorCode.illegal_sasl_state, "SaslAuthenticate request received after "
                           "successful authentication" if sasl else "This listener does not use SASL")
        try:
            token = sasl.authenticate(bytes(request.auth_bytes))
        except AuthenticationFailed as e:
            log.info("SASL authentication from %s failed: %s", caller.client_host, e)
            connection.close_after("SASL authentication failed")
            return _answer(caller, ErrorCode.sasl_authentication_failed, e.client_message)
        if sasl.complete:
            log.info("client %s authenticated as %s", caller.client_host, sasl.principal)
        return _answer(caller, ErrorCode.none, None, token)
