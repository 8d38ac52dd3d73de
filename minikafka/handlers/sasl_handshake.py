"""SaslHandshake (KIP-43, v1 since KIP-152): the client names the SASL mechanism it will use.

On a SASL listener it is the first request after an optional ApiVersions. An enabled
mechanism is answered with the enabled list and the exchange of SaslAuthenticate
tokens begins; any other is answered UNSUPPORTED_SASL_MECHANISM with the list, and the
connection closes. Elsewhere (a PLAINTEXT or SSL listener, or after authentication) the
answer is ILLEGAL_SASL_STATE, as Kafka's KafkaApis gives.
"""

from __future__ import annotations

import logging

from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest

from ..errors import ErrorCode
from .ports import Caller, Response

log = logging.getLogger("minikafka.sasl")


class SaslHandshake:
    """Acts on the caller's connection only (``Caller.connection``): it needs no port of the broker."""

    def __init__(self, ports: object) -> None:
        pass

    async def handle(self, caller: Caller, request: SaslHandshakeRequest) -> Response:
        connection = caller.connection
        sasl = connection.sasl if connection is not None else None
        if connection is None or sasl is None or sasl.complete:
            return caller.respond(error_code=ErrorCode.illegal_sasl_state, mechanisms=())
        if sasl.handshake(request.mechanism):
            return caller.respond(error_code=ErrorCode.none, mechanisms=sasl.mechanisms)
        log.info("client %s asked for SASL mechanism %r; %s enabled", caller.client_host, request.mechanism,
                 ",".join(sasl.mechanisms))
        connection.close_after(f"unsupported SASL mechanism {request.mechanism!r}")
        return caller.respond(error_code=ErrorCode.unsupported_sasl_mechanism, mechanisms=sasl.mechanisms)
