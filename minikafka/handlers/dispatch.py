"""Request dispatch: frame bytes in, response bytes out, for one broker.

``RequestDispatcher.handle_frame`` is the whole broker as seen from the network: the
server module feeds it from sockets, and tests and the fuzzer can feed it directly.
It finds the API in the table (``protocol.apis``), decodes the request for the
negotiated version and lifts it to the newest version's class (fields an old version
lacks take Kafka's schema defaults, so a handler reads one typed request and probes no
attributes), applies the broker's injected faults (``minikafka.faults``) once
for every API, and calls the API's handler, declared with its optional hooks in
``registry.HANDLERS``. It builds the request's ``ports.Caller`` once; a converted API's handler
(a ``PortHandler`` row, built once per dispatcher from the broker's ports) gets
``handle(caller, request)``, every other one still ``handle(ctx, request)`` with a
``RequestContext`` (issue 27's transition; see ``registry``). An injected or refused request
is answered by the API's error hook: its row's, or its handler object's ``error_response``
method where that answer needs the handler's ports (Metadata's).

On a secured broker two gates come first, also once for every API: a connection of a
SASL listener must authenticate before anything else (``security.sasl``), and the
request-wide ACL checks of ``_authorize`` answer a denied request with its error
(per-topic and per-group checks live in each handler, as in Kafka's KafkaApis).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses

from ..broker import Broker
from ..errors import ErrorCode
from ..faults import DropConnection, Faults
from ..protocol import codec
from ..protocol.apis import API_TABLE, BY_KEY
from ..security.authorizer import Authorizer
from ..security.sasl import Session, Verdict
from . import _authorize
from .api_versions import unsupported_version_answer
from .context import RequestContext
from .ports import Caller
from .registry import HANDLERS, AnswersErrors, Handler, PortHandler, Row, Served, has_error_response


def handler(api_key: int) -> Row:
    """The handler of an API (``registry.HANDLERS``)."""
    return HANDLERS[api_key]


def can_inject_error(api_key: int) -> bool:
    """Whether an error can be injected into ``api_key``'s answer (every API in the table)."""
    if has_error_response(handler(api_key)):
        return True
    api = BY_KEY[api_key]
    return all("error_code" in {f.name for f in dataclasses.fields(codec.response_class(api_key, v))}
               for v in range(api.min_version, api.max_version + 1))


def lift(api_key: int, decoded: object) -> object:
    """One typed request for all versions: the newest version's class (see ``codec.upgrade``).

    A handler whose request changed shape between versions says how in ``upgrade``.
    """
    latest = codec.latest_request_class(api_key)
    custom = handler(api_key).upgrade
    return custom(decoded, latest) if custom is not None else codec.upgrade(decoded, latest)


def _error_response(ctx: RequestContext, caller: Caller, served: Served | None, request: object,
                    code: ErrorCode) -> object:
    row = handler(caller.api_key)
    if isinstance(row, PortHandler) and row.error_response is not None:
        return row.error_response(caller, request, code)  # per-partition or per-topic errors
    if isinstance(served, AnswersErrors):
        return served.error_response(caller, request, code)  # an answer that needs the handler's ports
    if isinstance(row, Handler) and row.error_response is not None:
        return row.error_response(ctx, request, code)
    return codec.empty(codec.response_class(caller.api_key, caller.api_version), error_code=code)


def _sasl_gate(session: Session | None, api_key: int, version_supported: bool) -> ErrorCode | None:
    """ILLEGAL_SASL_STATE when the request must be refused (and the connection closed after),
    DropConnection when it must be closed at once, None when the request may go on."""
    if session is None or session.sasl is None:
        return None
    verdict = session.sasl.admit(api_key, version_supported)
    name = BY_KEY[api_key].name if api_key in BY_KEY else f"API key {api_key}"
    if verdict is Verdict.CLOSE:
        raise DropConnection(f"unexpected {name} request during SASL handshake ({session.sasl.state.value})")
    if verdict is Verdict.REFUSE:
        session.close_after(f"unexpected {name} request during SASL authentication")
        return ErrorCode.illegal_sasl_state
    return None


class RequestDispatcher:
    def __init__(self, broker: Broker, authorizer: Authorizer | None = None) -> None:
        self.broker = broker
        self.authorizer = authorizer  # None: no authorizer.class.name, everyone may do everything
        self.faults = Faults(can_inject_error)
        # the converted APIs' handlers, each given the broker's ports (mypy checks Broker provides them)
        self.served: dict[int, Served] = {key: row.make(broker) for key, row in HANDLERS.items()
                                          if isinstance(row, PortHandler)}
        self.requests: collections.Counter[tuple[str, str]] = collections.Counter()  # (API, client id) -> answered
        self.versions: collections.Counter[tuple[int, int]] = collections.Counter()  # (API key, version) -> answered

    async def handle_frame(self, frame: bytes, client_host: str = "127.0.0.1", connection_id: int = 0,
                           session: Session | None = None) -> bytes | None:
        """Answer one request frame (without its size prefix); None when no answer is due (acks=0).

        Raises codec.MalformedRequest when the connection must be closed: unknown API,
        unsupported version (other than ApiVersions), undecodable bytes; DropConnection
        for a request a SASL listener does not accept before authentication.
        """
        api_key, version, correlation_id = codec.peek_api(frame)
        api = BY_KEY.get(api_key)
        refused = _sasl_gate(session, api_key, api is not None and api.supports(version))
        if api is None:
            raise codec.MalformedRequest(f"unknown API key {api_key}")
        if not api.supports(version):
            if api_key == codec.API_VERSIONS_KEY:
                return unsupported_version_answer(correlation_id)
            raise codec.MalformedRequest(f"{api.name} v{version} is not supported "
                                         f"(range {api.min_version}-{api.max_version})")
        header, decoded = codec.decode_request(frame, api_key, version)
        request = lift(api_key, decoded)
        ctx = RequestContext(self.broker, header, client_host, connection_id, session, self.authorizer)
        caller = ctx.caller
        self.requests[(api.name, caller.client_id)] += 1
        self.versions[(api_key, version)] += 1
        injected = self.faults.take_error(api_key) if refused is None else None
        if injected is None and refused is None and self.authorizer is not None:
            injected = _authorize.refusal(ctx, request)
        if refused is not None:  # an empty answer: nothing (not even topic names) before authentication
            response = codec.error_answer(codec.response_class(api_key, version), refused)
        elif injected is not None:
            response = _error_response(ctx, caller, self.served.get(api_key), request, injected)
        else:
            response = await self.answer(ctx, caller, request)
        if self.faults.latency_ms:
            await asyncio.sleep(self.faults.latency_ms / 1000)
        if self.faults.take_drop(api_key):
            raise DropConnection(f"fault injection: dropped the {api.name} response")
        if response is None:
            return None
        return codec.encode_response(correlation_id, response)

    async def answer(self, ctx: RequestContext, caller: Caller, request: object) -> object:
        """The handler's answer, no gate or fault applied: a converted API's from its ports and the caller,
        the others' from ctx (``direct.DirectBroker`` calls this too)."""
        served = self.served.get(caller.api_key)
        if served is not None:
            return await served.handle(caller, request)
        row = handler(caller.api_key)
        assert isinstance(row, Handler)
        return await row.handle(ctx, request)


__all__ = ["API_TABLE", "RequestDispatcher", "can_inject_error", "handler"]
