"""What a handler gets besides the decoded request: its broker's services, the caller,
and the response classes of the negotiated version."""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..broker import Broker
from ..protocol import codec


@dataclass(slots=True)
class RequestContext:
    broker: Broker
    header: codec.RequestHeader
    client_host: str
    connection_id: int

    @property
    def api_version(self) -> int:
        return self.header.api_version

    @property
    def client_id(self) -> str:
        return self.header.client_id or ""

    @property
    def schema(self) -> ModuleType:
        """The kio response module of this request's API version."""
        return codec.response_module(self.header.api_key, self.header.api_version)

    def make(self, name: str, /, **values: Any) -> Any:
        """Build a nested response entity by class name, for this version."""
        return codec.entity(self.schema, name, **values)

    def has(self, name: str) -> bool:
        """Whether this version's response has the nested entity ``name`` at all."""
        return hasattr(self.schema, name)

    def respond(self, **values: Any) -> Any:
        """Build the top-level response for this version."""
        return codec.make(codec.response_class(self.header.api_key, self.header.api_version), **values)
