"""Request dispatch: frame bytes in, response bytes out, for one broker.

``RequestDispatcher.handle_frame`` is the whole broker as seen from the network: the
server module feeds it from sockets, and tests and the fuzzer can feed it directly.
It finds the API in the table (``protocol.apis``), decodes the request for the
negotiated version and lifts it to the newest version's class (fields an old version
lacks take Kafka's schema defaults, so a handler reads one typed request and probes no
attributes), passes it through the chain of steps every request takes (``middleware``:
injected faults, the SASL gate, injected errors, the request-wide ACL checks), and calls
the API's handler, declared with its optional hooks in ``registry.HANDLERS``. It builds
the request's ``ports.Caller`` once (who asks, on which connection and listener, at which
version); each API's handler (a ``PortHandler`` row, built once per dispatcher from the
broker's ports) gets ``handle(caller, request)``. An injected or refused request is
answered by the API's error hook: its row's, or its handler object's ``error_response``
method where that answer needs the handler's ports (Metadata's).

On a SASL listener the gate's verdict is taken from the frame's header before anything is
decoded (``security.sasl``): a request that must close the connection closes it at once,
one that must be refused is answered by the chain's ``SaslGate``.
"""

from __future__ import annotations

import collections
import dataclasses

from ..broker import Broker
from ..errors import ErrorCode
from ..faults import DropConnection, Faults
from ..protocol import codec
from ..protocol.apis import API_TABLE, BY_KEY
from ..security.authorizer import Authorizer
from ..security.sasl import Session, Verdict
from . import middleware
from .api_versions import unsupported_version_answer
from .middleware import Call
from .ports import ANONYMOUS, Caller
from .registry import HANDLERS, AnswersErrors, Row, Served, has_error_response


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


def _error_response(caller: Caller, served: Served | None, request: object, code: ErrorCode) -> object:
    row = handler(caller.api_key)
    if row.error_response is not None:
        return row.error_response(caller, request, code)  # per-partition or per-topic errors
    if isinstance(served, AnswersErrors):
        return served.error_response(caller, request, code)  # an answer that needs the handler's ports
    return codec.empty(codec.response_class(caller.api_key, caller.api_version), error_code=code)


def _empty_refusal(call: Call, code: ErrorCode) -> object:
    return codec.error_answer(codec.response_class(call.caller.api_key, call.caller.api_version), code)


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
        self.faults = Faults(can_inject_error)  # also builds the chain every request passes (``middleware``)
        # every API's handler, each given the broker's ports (mypy checks Broker provides them)
        self.served: dict[int, Served] = {key: row.make(broker) for key, row in HANDLERS.items()}
        self.requests: collections.Counter[tuple[str, str]] = collections.Counter()  # (API, client id) -> answered
        self.versions: collections.Counter[tuple[int, int]] = collections.Counter()  # (API key, version) -> answered

    @property
    def faults(self) -> Faults:
        """The faults injected into this broker's answers (kept across a restart by ``Cluster``)."""
        return self._faults

    @faults.setter
    def faults(self, faults: Faults) -> None:
        self._faults = faults
        # every request passes these steps, outermost first, before its handler
        self.middleware = middleware.standard(faults, self.authorizer, self._refusal, _empty_refusal, self.broker)
        self._chain = middleware.chain(self.middleware, self._handle)

    async def handle_frame(self, frame: bytes, client_host: str = "127.0.0.1", connection_id: int = 0,
                           session: Session | None = None, *, refuse: ErrorCode | None = None) -> bytes | None:
        """Answer one request frame (without its size prefix); None when no answer is due (acks=0).
        ``refuse``: answer with the API's error answer carrying this code instead of asking the handler
        (a broker process that could not hand a request on to the controller).

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
        caller = Caller(api_key, version, header.client_id or "", client_host,
                        session.principal if session is not None else ANONYMOUS,
                        session.listener if session is not None else None, connection_id, self.authorizer, session)
        call = Call(caller, lift(api_key, decoded), refused)
        self.requests[(api.name, call.caller.client_id)] += 1
        self.versions[(api_key, version)] += 1
        response = self._refusal(call, refuse) if refuse is not None else await self._chain(call)
        if response is None:
            return None
        return codec.encode_response(correlation_id, response)

    def _refusal(self, call: Call, code: ErrorCode) -> object:
        return _error_response(call.caller, self.served.get(call.caller.api_key), call.request, code)

    async def _handle(self, call: Call) -> object:
        return await self.answer(call.caller, call.request)

    async def answer(self, caller: Caller, request: object) -> object:
        """The handler's answer from its ports and the caller, no gate or fault applied
        (``assembly.Assembly.call`` calls this too)."""
        return await self.served[caller.api_key].handle(caller, request)


__all__ = ["API_TABLE", "RequestDispatcher", "can_inject_error", "handler"]
