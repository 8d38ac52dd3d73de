"""The API floor's view of the broker: the caller of a request and the narrow ports a handler asks.

Issue 27 moves the handlers off ``RequestContext.broker`` (the whole ``Broker``, a service
locator) onto two things:

- ``Caller``: who sent the request (principal, client host and id, listener, connection),
  at which API version, with the ACL checks (``allowed``) and the builders of the answer
  for that version (``respond``, ``make``, ``has``). It holds no broker.
- small ``typing.Protocol`` ports, one per family of APIs: what those handlers may ask of
  the broker, and nothing else. ``Broker`` implements them structurally (it never imports
  this module: the handlers floor sits above it). mypy checks it where dispatch builds the
  handlers from the broker (``PortHandler.make`` takes a ``Ports``); each family's handler tests
  (``tests/transactions/test_txn_handlers.py``, ``tests/admin/test_config_handlers.py``,
  ``tests/groups/test_group_handlers.py``) compare signatures and use tiny fakes instead.

The module lives in ``handlers/`` (not a new package) because ``minikafka.api`` is already
the course's public surface of the broker. It imports only the wire codec, errors and the
ACL types, so a converted handler that imports it stays clear of the broker (an
import-linter contract in pyproject.toml says so). Ports so far: ``TransactionsPort`` (the
five transaction APIs), ``ConfigsPort`` (DescribeConfigs, AlterConfigs,
IncrementalAlterConfigs), ``CoordinatorsPort`` (FindCoordinator), ``GroupsPort`` (the classic
group APIs and the committed-offset APIs) and ``ConsumerGroupsPort`` (KIP-848's two APIs), both
with ``TopicIdsPort``. What a port hands back is plain data or a read-only ``Protocol`` the
coordinator's own objects satisfy (``Joined``, ``ClassicGroup``...), so no handler imports
``groups``. Next: topics, share groups, ACLs, the cluster view.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping
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


class CoordinatorsPort(Protocol):
    """What FindCoordinator asks: which broker coordinates a group or a transactional id (-1: none yet;
    the internal topic is created on first need), and where a broker listens."""

    def group_coordinator(self, group_id: str) -> int: ...

    def transaction_coordinator(self, transactional_id: str) -> int: ...

    def broker_address(self, node_id: int, listener: str | None) -> tuple[str, int] | None:
        """(host, port) of a live broker on ``listener`` (None: the only one), None when it has none."""
        ...


class TopicIdsPort(Protocol):
    """Topic ids (KIP-516) for the APIs that name topics by id: None when the cluster has no such topic."""

    def topic_name_of(self, topic_id: uuid.UUID) -> str | None: ...

    def topic_id_of(self, name: str) -> uuid.UUID | None: ...


# One committed offset as OffsetFetch gives it: (offset, leader epoch, metadata).
Committed = tuple[int, int, str]
# OffsetFetch's row: (topic, partition, its committed offset or None, error).
FetchedOffset = tuple[str, int, Committed | None, ErrorCode]
# ListGroups' row: (group id, protocol type, state, group type).
Listed = tuple[str, str, str, str]


class Joined(Protocol):
    """A JoinGroup's outcome: the member's id and generation, the group's protocol and leader, and
    (for the leader only) every member's (member id, instance id, subscription metadata)."""

    @property
    def member_id(self) -> str: ...
    @property
    def generation_id(self) -> int: ...
    @property
    def protocol_type(self) -> str | None: ...
    @property
    def protocol_name(self) -> str | None: ...
    @property
    def leader_id(self) -> str: ...
    @property
    def members(self) -> tuple[tuple[str, str | None, bytes], ...]: ...


class Synced(Protocol):
    """A SyncGroup's outcome: the member's assignment (opaque bytes) and the group's protocol."""

    @property
    def assignment(self) -> bytes: ...
    @property
    def protocol_type(self) -> str | None: ...
    @property
    def protocol_name(self) -> str | None: ...


class ClassicMember(Protocol):
    """A classic group's member as DescribeGroups shows it; ``metadata(protocol)``: its subscription."""

    @property
    def member_id(self) -> str: ...
    @property
    def group_instance_id(self) -> str | None: ...
    @property
    def client_id(self) -> str: ...
    @property
    def client_host(self) -> str: ...
    @property
    def assignment(self) -> bytes: ...

    def metadata(self, protocol: str | None) -> bytes: ...


class ClassicGroup(Protocol):
    """A classic group as DescribeGroups shows it; ``str(state)`` is Kafka's name of the state."""

    @property
    def state(self) -> object: ...
    @property
    def protocol_type(self) -> str | None: ...
    @property
    def protocol_name(self) -> str | None: ...
    @property
    def members(self) -> Mapping[str, ClassicMember]: ...


class GroupsPort(TopicIdsPort, Protocol):
    """What the classic group APIs ask (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups,
    ListGroups, DeleteGroups) and the committed-offset APIs (OffsetCommit, OffsetFetch, OffsetDelete):
    the group coordinator of this broker. Each raises ``KafkaError`` (NOT_COORDINATOR, UNKNOWN_MEMBER_ID,
    ILLEGAL_GENERATION, GROUP_ID_NOT_FOUND...; JoinGroup v4+'s first join ``errors.MemberIdRequired``);
    ACLs are the handlers'."""

    def is_share_group(self, group_id: str) -> bool:
        """Whether a share group (KIP-932) has this id: one group id, one type of group."""
        ...

    async def join_group(self, group_id: str, member_id: str, instance_id: str | None, client_id: str,
                         client_host: str, session_timeout_ms: int, rebalance_timeout_ms: int, protocol_type: str,
                         protocols: tuple[tuple[str, bytes], ...], require_known_member_id: bool) -> Joined:
        """JoinGroup: answered when the rebalance completes (at once for a consumer group, KIP-848's migration)."""
        ...

    async def sync_group(self, group_id: str, member_id: str, instance_id: str | None, generation_id: int,
                         assignments: dict[str, bytes], protocol_type: str | None,
                         protocol_name: str | None) -> Synced: ...

    def heartbeat_group(self, group_id: str, member_id: str, instance_id: str | None, generation_id: int) -> None: ...

    def leave_group(self, group_id: str, members: list[tuple[str, str | None]]) -> list[ErrorCode]:
        """LeaveGroup: one error per (member id, instance id), in order."""
        ...

    def describe_group(self, group_id: str) -> ClassicGroup | None:
        """A classic group this broker coordinates; None: no such group (a consumer-protocol one is none)."""
        ...

    def list_groups(self, states: set[str], types: set[str]) -> list[Listed]:
        """The classic and consumer groups this broker coordinates that pass the filters (case-insensitive)."""
        ...

    def list_share_groups(self) -> list[tuple[str, str]]:
        """(group id, state) of every share group this broker coordinates."""
        ...

    def delete_group(self, group_id: str) -> None: ...

    async def commit_offsets(self, group_id: str, member_id: str, instance_id: str | None,
                             generation_id_or_member_epoch: int, offsets: list[TxnOffset],
                             api_version: int) -> dict[tuple[str, int], ErrorCode]:
        """OffsetCommit: each partition's error (``api_version``: how a member epoch is checked, KIP-848)."""
        ...

    def fetch_offsets(self, group_id: str, partitions: list[tuple[str, int]] | None, require_stable: bool,
                      member_id: str | None, member_epoch: int) -> list[FetchedOffset]:
        """OffsetFetch: each partition asked, or every committed one when ``partitions`` is None."""
        ...

    def delete_offsets(self, group_id: str, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], ErrorCode]: ...


class Beat(Protocol):
    """A ConsumerGroupHeartbeat's outcome; ``assignment`` None: unchanged since the member's last heartbeat."""

    @property
    def member_id(self) -> str: ...
    @property
    def member_epoch(self) -> int: ...
    @property
    def heartbeat_interval_ms(self) -> int: ...
    @property
    def assignment(self) -> Collection[tuple[str, int]] | None: ...


class ConsumerMember(Protocol):
    """A consumer-protocol group's member as ConsumerGroupDescribe shows it; ``classic``: not None for a
    member that joined with JoinGroup (KIP-848's online migration)."""

    @property
    def member_id(self) -> str: ...
    @property
    def instance_id(self) -> str | None: ...
    @property
    def rack_id(self) -> str | None: ...
    @property
    def member_epoch(self) -> int: ...
    @property
    def client_id(self) -> str: ...
    @property
    def client_host(self) -> str: ...
    @property
    def subscribed_topic_names(self) -> tuple[str, ...]: ...
    @property
    def subscribed_topic_regex(self) -> str | None: ...
    @property
    def assigned(self) -> Collection[tuple[str, int]]: ...
    @property
    def classic(self) -> object | None: ...


class ConsumerGroup(Protocol):
    """A consumer-protocol group (KIP-848): its epochs, assignor, members and their target assignments."""

    @property
    def state(self) -> object: ...
    @property
    def group_epoch(self) -> int: ...
    @property
    def assignment_epoch(self) -> int: ...
    @property
    def assignor(self) -> str: ...
    @property
    def members(self) -> Mapping[str, ConsumerMember]: ...
    @property
    def target(self) -> Mapping[str, Collection[tuple[str, int]]]: ...


class ConsumerGroupsPort(TopicIdsPort, Protocol):
    """What the consumer group protocol's APIs ask (KIP-848: ConsumerGroupHeartbeat, ConsumerGroupDescribe):
    the group coordinator of this broker. Each raises ``KafkaError``; ACLs are the handlers' and dispatch's."""

    def consumer_group_heartbeat(self, group_id: str, member_id: str, member_epoch: int, instance_id: str | None,
                                 rack_id: str | None, rebalance_timeout_ms: int,
                                 subscribed_topic_names: tuple[str, ...] | None, subscribed_topic_regex: str | None,
                                 server_assignor: str | None, owned: frozenset[tuple[str, int]] | None,
                                 client_id: str, client_host: str) -> Beat:
        """Join (epoch 0), heartbeat, or leave (-1, -2 for a static member); None: unchanged."""
        ...

    def describe_consumer_group(self, group_id: str) -> ConsumerGroup:
        """The consumer-protocol group, or GROUP_ID_NOT_FOUND (a classic group is not one)."""
        ...


class Ports(TransactionsPort, ConfigsPort, CoordinatorsPort, GroupsPort, ConsumerGroupsPort, Protocol):
    """Every port a converted handler may be given: what ``Broker`` provides to the registry."""
