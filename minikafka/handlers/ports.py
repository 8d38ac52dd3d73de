"""The API floor's view of the broker: the caller of a request and the narrow ports a handler asks.

Issue 27 moves the handlers off ``RequestContext.broker`` (the whole ``Broker``, a service
locator) onto two things:

- ``Caller``: who sent the request (principal, client host and id, listener, connection),
  at which API version, with the ACL checks (``allowed``) and the builders of the answer
  for that version (``respond``, ``make``, ``has``). It holds no broker.
- small ``typing.Protocol`` ports, one per family of APIs: what those handlers may ask of
  the broker, and nothing else. ``Broker`` implements them structurally (it never imports
  this module: the handlers floor sits above it); ``tests/handlers/test_ports.py`` holds the
  assignment that makes mypy check it, and the handler tests use tiny fakes instead.

The module lives in ``handlers/`` (not a new package) because ``minikafka.api`` is already
the course's public surface of the broker. It imports only the wire codec, errors and the
ACL types, so a converted handler that imports it stays clear of the broker (an
import-linter contract in pyproject.toml says so). Ports so far: ``TransactionsPort`` (the
five transaction APIs) and ``ConfigsPort`` (DescribeConfigs, AlterConfigs,
IncrementalAlterConfigs). Next: groups, topics, share groups, ACLs, the cluster view.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from ..errors import ErrorCode
from ..protocol import codec
from ..security.acl import Operation, ResourceType
from ..security.authorizer import Authorizer

ANONYMOUS = "User:ANONYMOUS"  # the principal of an unauthenticated connection (as security.sasl)

# What a handler answers: a kio response entity of the negotiated version (``Caller.respond`` picks
# its class, which differs from version to version); None: no answer (acks=0).
Response = Any

# One described setting (``ConfigsPort``): (name, value, source code, type code, read-only, documentation,
# synonyms as (name, value, source code)), the codes as DescribeConfigs carries them.
Described = tuple[str, str | None, int, int, bool, str, tuple[tuple[str, str | None, int], ...]]

# One offset a transaction commits for a group: (topic, partition, offset, leader epoch, metadata).
TxnOffset = tuple[str, int, int, int, str]


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sent this request and at which version; what it may do (ACLs); how its answer is built."""

    api_key: int
    api_version: int
    client_id: str = ""
    client_host: str = "127.0.0.1"
    principal: str = ANONYMOUS
    listener: str | None = None  # the listener's name (SASL_PLAINTEXT, ...); None: the only one
    connection_id: int = 0
    authorizer: Authorizer | None = None  # None: no authorizer, everyone may do everything

    @property
    def schema(self) -> ModuleType:
        """The kio response module of this request's API version."""
        return codec.response_module(self.api_key, self.api_version)

    def make(self, name: str, /, **values: Any) -> Any:
        """Build a nested response entity by class name, for this version (``codec.entity``)."""
        return codec.entity(self.schema, name, **values)

    def has(self, name: str) -> bool:
        """Whether this version's response has the nested entity ``name`` at all."""
        return hasattr(self.schema, name)

    def respond(self, **values: Any) -> Any:
        """The top-level response for this version (``codec.downgrade``: what it lacks is dropped)."""
        return codec.downgrade(codec.response_class(self.api_key, self.api_version), **values)

    def allowed(self, operation: Operation, resource_type: ResourceType, name: str) -> bool:
        """Whether this request's principal may do ``operation`` on the resource (ACLs)."""
        if self.authorizer is None:
            return True
        return self.authorizer.authorize(self.principal, self.client_host, operation, resource_type, name)

    def allowed_any(self, operation: Operation, resource_type: ResourceType) -> bool:
        """Whether some resource of the type allows ``operation`` (KIP-679)."""
        if self.authorizer is None:
            return True
        return self.authorizer.authorize_any(self.principal, self.client_host, operation, resource_type)


class TransactionsPort(Protocol):
    """What the transaction APIs ask (KIP-98, KIP-890): the transaction coordinator this broker
    hosts, and the group coordinator for TxnOffsetCommit. Each raises ``KafkaError``."""

    async def init_producer_id(self, transactional_id: str | None, timeout_ms: int, producer_id: int,
                               producer_epoch: int) -> tuple[int, int]:
        """A producer id and epoch; a transactional one bumps the epoch (fencing older instances)."""
        ...

    async def add_partitions_to_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                            partitions: list[tuple[str, int]]) -> None: ...

    async def add_offsets_to_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                         group_id: str) -> None: ...

    async def end_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool,
                              bump_epoch: bool) -> tuple[int, int]:
        """Commit or abort; the producer id and epoch to use next (bumped with ``bump_epoch``, KIP-890)."""
        ...

    def verify_transaction_producer(self, transactional_id: str, producer_id: int, producer_epoch: int) -> None: ...

    def verify_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int, topic: str,
                           index: int) -> None:
        """Whether the partition is in the producer's ongoing transaction."""
        ...

    async def commit_transaction_offsets(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                         group_id: str, member_id: str, instance_id: str | None, generation_id: int,
                                         offsets: list[TxnOffset], may_add: bool) -> dict[tuple[str, int], ErrorCode]:
        """TxnOffsetCommit: each partition's error; ``may_add``: this version may add the group's offsets
        partition to the transaction itself (where the cluster runs transaction protocol v2)."""
        ...


class ConfigsPort(Protocol):
    """What the config APIs ask of a broker (``minikafka.resource_configs``): a resource is a topic (2),
    a broker (4: its id, or "" for the cluster-wide defaults), a broker's loggers (8, KIP-412) or a
    group (32). Each raises ``KafkaError`` (unknown resource, invalid value); ACLs are the handlers'."""

    def describe_resource_configs(self, resource_type: int, name: str) -> list[Described]: ...

    def replace_resource_configs(self, resource_type: int, name: str, overrides: dict[str, str],
                                 validate_only: bool) -> None:
        """AlterConfigs: ``overrides`` become the resource's only ones (checked, not kept, if ``validate_only``)."""
        ...

    def alter_resource_configs(self, resource_type: int, name: str, changes: list[tuple[int, str, str | None]],
                               validate_only: bool) -> None:
        """IncrementalAlterConfigs (KIP-339): (operation: SET 0, DELETE 1, APPEND 2, SUBTRACT 3, setting, value)."""
        ...


class Ports(TransactionsPort, ConfigsPort, Protocol):
    """Every port a converted handler may be given: what ``Broker`` provides to the registry."""
