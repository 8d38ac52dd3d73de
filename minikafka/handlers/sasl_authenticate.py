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
from .context import RequestContext, Response

log = logging.getLogger("minikafka.sasl")
_NO_LIFETIME = datetime.timedelta(0)


def _answer(ctx: RequestContext, code: ErrorCode, message: str | None = None, token: bytes = b"") -> Response:
    return ctx.respond(error_code=code, error_message=message, auth_bytes=token, session_lifetime=_NO_LIFETIME)


async def handle(ctx: RequestContext, request: SaslAuthenticateRequest) -> Response:
    session = ctx.session
    sasl = session.sasl if session is not None else None
    if session is None or sasl is None or sasl.complete:
        return _answer(ctx, ErrorCode.illegal_sasl_state, "SaslAuthenticate request received after successful "
                       "authentication" if sasl else "This listener does not use SASL")
    try:
        token = sasl.authenticate(bytes(request.auth_bytes))
    except AuthenticationFailed as e:
        log.info("SASL authentication from %s failed: %s", ctx.client_host, e)
        session.close_after("SASL authentication failed")
        return _answer(ctx, ErrorCode.sasl_authentication_failed, e.client_message)
    if sasl.complete:
        log.info("client %s authenticated as %s with %s", ctx.client_host, sasl.principal, sasl.mechanism.name)
    return _answer(ctx, ErrorCode.none, None, token)
