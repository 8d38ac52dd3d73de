"""What a handler gets besides the decoded request: its broker's services, the caller,
and the response classes of the negotiated version.

The caller is a client host and, on a secured broker, a session (its listener and
principal) and the authorizer, which a handler asks through ``allowed`` whether the
principal may do an operation on a resource; with no authorizer everything is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ..broker import Broker
from ..metadata import TopicInfo
from ..protocol import codec
from ..security.acl import Operation, ResourceType
from ..security.authorizer import Authorizer
from ..security.sasl import ANONYMOUS, Session
from .ports import Caller

# What a handler answers: a kio response entity of the negotiated version. Its class differs
# from version to version (``respond`` picks it), so no one class names it; None: no answer (acks=0).
Response = Any


@dataclass(slots=True)
class RequestContext:
    """An old-style handler's view (during the move to ports, see ``registry``): the broker, and the
    caller (``ports.Caller``), through which the response is built and ACLs are asked."""

    broker: Broker
    header: codec.RequestHeader
    client_host: str
    connection_id: int
    session: Session | None = None
    authorizer: Authorizer | None = None
    caller: Caller = field(init=False)

    def __post_init__(self) -> None:
        session, header = self.session, self.header
        self.caller = Caller(header.api_key, header.api_version, header.client_id or "", self.client_host,
                             session.principal if session is not None else ANONYMOUS,
                             session.listener if session is not None else None, self.connection_id, self.authorizer,
                             session)

    @property
    def api_version(self) -> int:
        return self.header.api_version

    @property
    def client_id(self) -> str:
        return self.caller.client_id

    @property
    def schema(self) -> ModuleType:
        """The kio response module of this request's API version."""
        return self.caller.schema

    def make(self, name: str, /, **values: Any) -> Any:
        """Build a nested response entity by class name, for this version (``codec.downgrade``)."""
        return self.caller.make(name, **values)

    def has(self, name: str) -> bool:
        """Whether this version's response has the nested entity ``name`` at all."""
        return self.caller.has(name)

    def respond(self, **values: Any) -> Any:
        """Build the top-level response for this version: fields it lacks but a newer version has are
        dropped, a name no version has raises ``codec.UnknownField``."""
        return self.caller.respond(**values)

    @property
    def principal(self) -> str:
        return self.caller.principal

    def allowed(self, operation: Operation, resource_type: ResourceType, name: str) -> bool:
        """Whether this request's principal may do ``operation`` on the resource (ACLs)."""
        return self.caller.allowed(operation, resource_type, name)

    def allowed_any(self, operation: Operation, resource_type: ResourceType) -> bool:
        """Whether some resource of the type allows ``operation`` (KIP-679)."""
        return self.caller.allowed_any(operation, resource_type)

    @property
    def broker_endpoints(self) -> dict[int, tuple[str, int]]:
        """The live brokers' addresses on the listener this request came in on."""
        return self.broker.broker_endpoints(self.caller.listener)

    # the ``ports.TopicLookupPort`` that ``_topic_ids`` reads, for the handlers not yet converted
    def topics(self) -> dict[str, TopicInfo]:
        return self.broker.topics()

    def topic_by_id(self, topic_id: str) -> TopicInfo | None:
        return self.broker.topic_by_id(topic_id)
