"""The API floor's view of the broker: the caller of a request and the narrow ports a handler asks.

Issue 27 moved the handlers off the whole ``Broker`` (a service locator, once handed to
every handler) onto two things:

- ``Caller``: who sent the request (principal, client host and id, listener, connection),
  at which API version, with the ACL checks every handler asks (``allowed``, ``allowed_any``,
  ``allowed_cluster``, and KIP-430's ``authorized_operations``) and the builders of the
  answer for that version (``respond``, ``make``, ``has``). It holds no broker.
- small ``typing.Protocol`` ports, one per family of APIs: what those handlers may ask of
  the broker, and nothing else. ``Broker`` implements them structurally (it never imports
  this module: the handlers floor sits above it); ``dispatch`` builds each handler with the
  broker as ``Ports``, which makes mypy check it, and the handler tests use tiny fakes instead.

The module lives in ``handlers/`` (not a new package) because ``minikafka.api`` is already
the course's public surface of the broker. It imports only the wire codec, errors and the
ACL types (and ``security.scram``'s credential), so a converted handler that imports it
stays clear of the broker (an import-linter contract in pyproject.toml says so). What a
port returns that a handler reads field by field (a share group's members, a transaction's
record, a group) is declared here as a read-only ``Protocol`` view, which the broker's own
dataclasses match; the handlers never import ``share/``, ``groups/`` or ``transactions/``. Ports so far:

- ``TransactionsPort``: the five transaction APIs and DescribeTransactions;
- ``ConfigsPort``: DescribeConfigs, AlterConfigs, IncrementalAlterConfigs;
- ``SharePort``: ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch, ShareAcknowledge,
  DescribeShareGroupOffsets (KIP-932), with the few metadata facts their answers carry;
- ``AclsPort``: DescribeAcls, CreateAcls, DeleteAcls;
- ``ScramPort``: DescribeUserScramCredentials, AlterUserScramCredentials (KIP-554);
- ``CoordinatorsPort``: FindCoordinator;
- ``GroupsPort``: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups, ListGroups,
  DeleteGroups (the classic group APIs) and OffsetCommit, OffsetFetch, OffsetDelete;
- ``ConsumerGroupsPort``: ConsumerGroupHeartbeat, ConsumerGroupDescribe (KIP-848);
- ``TopicIdsPort`` (topic ids as text), shared by ``SharePort``, ``GroupsPort``,
  ``ConsumerGroupsPort``, ``ProducePort`` (Produce) and ``FetchPort`` (Fetch, for consumers and for
  follower brokers, reading through ``ReadView``), beside ``OffsetsPort`` (ListOffsets) and
  ``EpochsPort`` (OffsetForLeaderEpoch);
- for topic administration and the cluster view, ``ClusterViewPort`` (Metadata, DescribeCluster,
  DescribeTopicPartitions: brokers, racks, the endpoints of a listener, topics and their
  partition state, cluster and controller ids), ``TopicsPort`` (CreateTopics, DeleteTopics,
  CreatePartitions, DeleteRecords), ``ReassignmentPort`` (ElectLeaders,
  Alter/ListPartitionReassignments), ``LogDirsPort`` (AlterReplicaLogDirs, DescribeLogDirs),
  ``QuorumPort`` (DescribeQuorum), ``SettingsPort`` (ApiVersions' feature levels) and
  ``ConfigResourcesPort`` (ListConfigResources). A topic and its partitions are read through
  ``TopicView`` and ``PartitionView``, read-only protocols the metadata store's records satisfy.
"""

from __future__ import annotations

import asyncio
import datetime
import enum
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from ..errors import ErrorCode, KafkaError
from ..protocol import codec
from ..security.acl import CLUSTER_NAME, OPERATIONS, AclBinding, Operation, ResourceType
from ..security.authorizer import Authorizer
from ..security.scram import ScramCredential

ANONYMOUS = "User:ANONYMOUS"  # the principal of an unauthenticated connection (as security.sasl)
NOT_REQUESTED = -(2**31)  # KIP-430's authorized operations when the client did not ask for them

# What a handler answers: a kio response entity of the negotiated version (``Caller.respond`` picks
# its class, which differs from version to version); None: no answer (acks=0).
Response = Any

# One described setting (``ConfigsPort``): (name, value, source code, type code, read-only, documentation,
# synonyms as (name, value, source code)), the codes as DescribeConfigs carries them.
Described = tuple[str, str | None, int, int, bool, str, tuple[tuple[str, str | None, int], ...]]

# A broker's address on a listener: (host, port).
Endpoint = tuple[str, int]

# One replica in a log directory (``LogDirsPort``): (directory, or None for a log kept in memory, topic,
# partition, size in bytes, offset lag, whether it is the future log a move is filling).
Placement = tuple[str | None, str, int, int, int, bool]

# One log directory of a broker (``LogDirsPort``): (path, total bytes, usable bytes, offline).
LogDirState = tuple[str, int, int, bool]

# One offset a transaction commits for a group: (topic, partition, offset, leader epoch, metadata).
TxnOffset = tuple[str, int, int, int, str]

NOT_REQUESTED = -(2**31)  # KIP-430's authorized operations when the client did not ask for them


class SaslExchangeView(Protocol):
    """One connection's SASL exchange (``security.sasl.SaslExchange``): handshake, then tokens."""

    @property
    def complete(self) -> bool: ...
    @property
    def mechanisms(self) -> tuple[str, ...]: ...
    @property
    def principal(self) -> str: ...

    def handshake(self, mechanism: str) -> bool:
        """True when ``mechanism`` is enabled; False: answer UNSUPPORTED_SASL_MECHANISM and close."""
        ...

    def authenticate(self, token: bytes) -> bytes:
        """The server's token; ``security.mechanisms.AuthenticationFailed`` with the client's sentence."""
        ...


class ConnectionView(Protocol):
    """The connection a request came on, as the SASL APIs act on it (``security.sasl.Session``)."""

    @property
    def sasl(self) -> SaslExchangeView | None:
        """None: this listener does not use SASL."""
        ...

    def close_after(self, reason: str) -> None:
        """Close the connection once this request's answer is sent."""
        ...


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
    connection: ConnectionView | None = None  # the SASL APIs act on it; None: a request without one (tests)

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

    def allowed_cluster(self, operation: Operation) -> bool:
        """Whether this request's principal may do ``operation`` on the cluster (the admin APIs' check)."""
        return self.allowed(operation, ResourceType.CLUSTER, CLUSTER_NAME)

    def authorized_operations(self, resource_type: ResourceType, name: str = CLUSTER_NAME) -> int:
        """KIP-430's bit field of what the principal may do to a resource (everything without ACLs)."""
        bits = 0
        for op in OPERATIONS[resource_type]:
            if self.allowed(op, resource_type, name):
                bits |= 1 << int(op)
        return bits

    def requested_operations(self, asked: bool, resource_type: ResourceType, name: str = CLUSTER_NAME) -> int:
        """KIP-430 for one resource of a describe request: its operations if the client ``asked``, else
        NOT_REQUESTED."""
        return self.authorized_operations(resource_type, name) if asked else NOT_REQUESTED


class TransactionView(Protocol):
    """One transactional id as its coordinator keeps it (``transactions.txnlog.TxnMetadata`` is one)."""

    @property
    def transactional_id(self) -> str: ...
    @property
    def producer_id(self) -> int: ...
    @property
    def producer_epoch(self) -> int: ...
    @property
    def timeout_ms(self) -> int: ...
    @property
    def state(self) -> enum.Enum:
        """Its state; the member's name (PREPARE_COMMIT) is the wire's in capitalised words (PrepareCommit)."""
        ...
    @property
    def partitions(self) -> set[tuple[str, int]]: ...
    @property
    def start_ms(self) -> int:
        """When the open transaction started (ms since the epoch); -1: none is open."""
        ...


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

    def describe_transaction(self, transactional_id: str) -> TransactionView:
        """DescribeTransactions (KIP-664): what the coordinator knows of the id; TRANSACTIONAL_ID_NOT_FOUND,
        NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS as ``KafkaError``."""
        ...


class TxnMarkersPort(Protocol):
    """What WriteTxnMarkers asks of a partition leader (KIP-98): end a producer's transaction there."""

    async def write_txn_marker(self, topic: str, index: int, producer_id: int, producer_epoch: int,
                               commit: bool) -> ErrorCode:
        """NONE once the marker is written; NOT_LEADER_OR_FOLLOWER where this broker does not lead the
        partition; UNKNOWN_TOPIC_OR_PARTITION where it does not exist."""
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


# -- share groups (KIP-932) ----------------------------------------------------------------------

SharePartition = tuple[str, int]  # (topic name, partition index)
# One acknowledgement batch of a share request: (first offset, last offset, acknowledge types: one for the
# whole range or one per offset; 0 gap, 1 accept, 2 release, 3 reject, 4 renew).
Ack = tuple[int, int, tuple[int, ...]]


class ShareMemberView(Protocol):
    """A share group's member as its coordinator keeps it (``share.group.ShareMember`` is one)."""

    @property
    def member_id(self) -> str: ...
    @property
    def member_epoch(self) -> int: ...
    @property
    def client_id(self) -> str: ...
    @property
    def client_host(self) -> str: ...
    @property
    def rack_id(self) -> str | None: ...
    @property
    def subscribed(self) -> tuple[str, ...]: ...
    @property
    def assignment(self) -> Mapping[str, tuple[int, ...]]:
        """Topic name -> the member's partitions."""
        ...


class ShareGroupView(Protocol):
    """A share group for ShareGroupDescribe (``share.group.ShareGroup`` is one)."""

    @property
    def state(self) -> str: ...
    @property
    def group_epoch(self) -> int: ...
    @property
    def assignment_epoch(self) -> int: ...
    @property
    def members(self) -> Mapping[str, ShareMemberView]: ...


class ShareSessionView(Protocol):
    """A member's share session (``share.sessions.ShareSession``): handed back to the port as it came."""

    @property
    def group_id(self) -> str: ...
    @property
    def member_id(self) -> str: ...


class AcquiredView(Protocol):
    """A run of offsets acquired for the member in one ShareFetch answer, with their delivery count."""

    @property
    def first_offset(self) -> int: ...
    @property
    def last_offset(self) -> int: ...
    @property
    def delivery_count(self) -> int: ...


class FetchedView(Protocol):
    """One partition of a ShareFetch answer (``share.manager.Fetched`` is one)."""

    @property
    def error(self) -> ErrorCode: ...
    @property
    def records(self) -> bytes: ...
    @property
    def acquired(self) -> Sequence[AcquiredView]: ...


class TopicIdsPort(Protocol):
    """Topic ids (KIP-516), as text, for the APIs that name topics by id (share groups, KIP-848's
    consumer groups, OffsetCommit and OffsetFetch v10)."""

    def topic_name_of(self, topic_id: str) -> str | None:
        """The name of the topic with this id; None: no such topic."""
        ...

    def topic_id_of(self, topic: str) -> str | None:
        """The id of the topic of this name; None: no such topic."""
        ...


class SharePort(TopicIdsPort, Protocol):
    """What the five share-group APIs ask (KIP-932): the share group coordinator, the share-partition
    manager, and the few facts of the cluster metadata their answers carry (topic ids, leaders, the
    brokers' addresses). Each raises ``KafkaError``; ACLs are the handlers' (and dispatch's)."""

    def share_group_heartbeat(self, group_id: str, member_id: str, member_epoch: int,
                              subscribed: tuple[str, ...] | None, rack_id: str | None, client_id: str,
                              client_host: str) -> tuple[ShareMemberView, bool, int]:
        """The member, whether its assignment is news to it, and the heartbeat interval (ms)."""
        ...

    def describe_share_group(self, group_id: str) -> ShareGroupView: ...

    def share_group_start_offsets(self, group_id: str,
                                  wanted: dict[str, list[int]] | None) -> list[tuple[str, int, int, int]]:
        """(topic, partition, start offset, lag) of the group's share-partitions, the ``wanted`` ones or all."""
        ...

    async def open_share_fetch(self, group_id: str, member_id: str, epoch: int, added: set[SharePartition],
                               forgotten: set[SharePartition], has_acks: bool,
                               connection_id: int) -> ShareSessionView:
        """The share session a ShareFetch belongs to: opened (epoch 0), advanced, or about to close (-1)."""
        ...

    def share_acknowledge_session(self, group_id: str, member_id: str, epoch: int) -> ShareSessionView:
        """ShareAcknowledge's session: an open one (epoch 0 is INVALID_SHARE_SESSION_EPOCH)."""
        ...

    async def acknowledge_share_records(self, group_id: str, member_id: str, acks: dict[SharePartition, list[Ack]]
                                        ) -> dict[SharePartition, KafkaError | None]:
        """Apply acknowledgements; per partition, its error or None (written before the answer)."""
        ...

    async def acquire_share_records(self, session: ShareSessionView, max_records: int, max_bytes: int,
                                    max_wait_ms: int, record_limit: bool) -> Mapping[SharePartition, FetchedView]:
        """Records acquired for the session's member, waiting up to ``max_wait_ms`` for some."""
        ...

    async def close_share_session(self, session: ShareSessionView) -> None:
        """Epoch -1: forget the session and release what its member still holds."""
        ...

    def share_lock_duration_ms(self, group_id: str) -> int:
        """The group's ``share.record.lock.duration.ms``."""
        ...

    def partition_leader(self, topic: str, index: int) -> tuple[int, int] | None:
        """(leader id, leader epoch) of a partition; None: no such partition."""
        ...

    def broker_address(self, node_id: int) -> tuple[str, int] | None:
        """A live broker's (host, port); None: not a live broker."""
        ...


# -- ACLs and SCRAM credentials (kept in the cluster metadata) ------------------------------------

class AclsPort(Protocol):
    """What the ACL APIs ask: the cluster's ACLs (``security.store``); changes go to the metadata log."""

    def acls(self) -> list[AclBinding]: ...

    def add_acl(self, acl: AclBinding) -> None:
        """Store an ACL (one that exists already changes nothing)."""
        ...

    def remove_acl(self, acl: AclBinding) -> None: ...


class ScramPort(Protocol):
    """What the SCRAM credential APIs ask (KIP-554): the users' credentials by (user, mechanism name)."""

    def scram_credentials(self) -> dict[tuple[str, str], ScramCredential]: ...

    def scram_credential(self, user: str, mechanism: str) -> ScramCredential | None: ...

    def set_scram_credential(self, user: str, mechanism: str, credential: ScramCredential) -> None: ...

    def remove_scram_credential(self, user: str, mechanism: str) -> None: ...


class PartitionView(Protocol):
    """One partition's state as the metadata store records it (read-only)."""

    @property
    def index(self) -> int: ...
    @property
    def leader(self) -> int: ...
    @property
    def leader_epoch(self) -> int: ...
    @property
    def replicas(self) -> Sequence[int]: ...
    @property
    def isr(self) -> Sequence[int]: ...
    @property
    def elr(self) -> Sequence[int]:
        """Eligible leader replicas (KIP-966)."""
        ...
    @property
    def last_known_elr(self) -> Sequence[int]: ...
    @property
    def adding_replicas(self) -> Sequence[int]:
        """A reassignment in progress (KIP-455): replicas being added, and those to be removed."""
        ...
    @property
    def removing_replicas(self) -> Sequence[int]: ...


class TopicView(Protocol):
    """One topic as the metadata store records it (read-only); ``topic_id`` is the UUID's text."""

    @property
    def name(self) -> str: ...
    @property
    def topic_id(self) -> str: ...
    @property
    def internal(self) -> bool: ...
    @property
    def partitions(self) -> Sequence[PartitionView]: ...


class TopicLookupPort(Protocol):
    """The cluster's topics, by name (in creation order) and by id (KIP-516)."""

    def topics(self) -> Mapping[str, TopicView]: ...

    def topic_by_id(self, topic_id: str) -> TopicView | None: ...


class ClusterViewPort(TopicLookupPort, Protocol):
    """What Metadata, DescribeCluster and DescribeTopicPartitions read: the live brokers, their racks
    and their endpoints on the caller's listener, the cluster and controller ids, the topics; and
    Metadata's auto-creation of a topic on first use."""

    def live_brokers(self) -> Mapping[int, Endpoint]:
        """Every live broker's default address (the first listener's)."""
        ...

    def broker_endpoints(self, listener: str | None) -> Mapping[int, Endpoint]:
        """The live brokers' addresses on ``listener`` (the default ones for None or an unknown name)."""
        ...

    def rack_of(self, node_id: int) -> str | None: ...

    def cluster_id(self) -> str: ...

    def controller_id(self) -> int: ...

    def validate_topic_name(self, name: str) -> None:
        """INVALID_TOPIC_EXCEPTION (``KafkaError``) for a name no topic may have."""
        ...

    def auto_create(self, name: str) -> TopicView | None:
        """The topic, created now if ``auto.create.topics.enable``; None if it is off (``KafkaError`` if refused)."""
        ...


class TopicsPort(TopicLookupPort, Protocol):
    """What CreateTopics, DeleteTopics, CreatePartitions and DeleteRecords ask. Each raises ``KafkaError``
    with Kafka's code (INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR, TOPIC_ALREADY_EXISTS,
    UNKNOWN_TOPIC_OR_PARTITION, ...); the ACL checks are the handlers'."""

    def create_topic(self, name: str, partitions: int, replication_factor: int, configs: dict[str, str | None],
                     assignment: dict[int, list[int]] | None, validate_only: bool) -> TopicView:
        """The topic as planned (and created, unless ``validate_only``); -1: the broker's default count."""
        ...

    def topic_settings(self, name: str) -> list[tuple[str, str | None, int]]:
        """A topic's effective settings: (name, value, source code as DescribeConfigs carries it)."""
        ...

    def topic_deletion_enabled(self) -> bool:
        """``delete.topic.enable``."""
        ...

    def is_internal_topic(self, name: str) -> bool:
        """Whether ``name`` is one of the broker's internal topics (``__consumer_offsets``, ...)."""
        ...

    def delete_topic(self, name: str) -> None: ...

    def add_partitions(self, name: str, total: int, validate_only: bool,
                       assignments: list[list[int]] | None) -> None:
        """Grow the topic to ``total`` partitions, placed as ``assignments`` says (one list per new one)."""
        ...

    def delete_records(self, topic: str, index: int, offset: int) -> int:
        """Move the led partition's log start to ``offset`` (-1: the high watermark); the new low watermark."""
        ...


class ReassignmentPort(TopicLookupPort, Protocol):
    """What ElectLeaders and the partition reassignment APIs (KIP-455) ask of the controller. Each raises
    ``KafkaError`` (UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT, ELECTION_NOT_NEEDED, ...)."""

    def elect_leader(self, topic: str, index: int, unclean: bool) -> None: ...

    def reassign_partition(self, topic: str, index: int, target: list[int] | None,
                           allow_replication_factor_change: bool) -> None:
        """Move the partition to ``target`` replicas; None cancels the move in progress."""
        ...


class LogDirsPort(Protocol):
    """What AlterReplicaLogDirs and DescribeLogDirs ask of this broker's log directories (KIP-113)."""

    @property
    def node_id(self) -> int: ...

    def log_dir_states(self) -> list[LogDirState] | None:
        """Each directory of ``log.dirs``, in order; None for a broker that keeps its logs in memory."""
        ...

    def replica_placements(self) -> list[Placement]:
        """Every replica of this broker (and each future log being filled), by topic and partition."""
        ...

    def alter_replica_log_dir(self, topic: str, index: int, path: str) -> None:
        """Start moving a replica to ``path`` (``KafkaError``: LOG_DIR_NOT_FOUND, REPLICA_NOT_AVAILABLE, ...)."""
        ...


class QuorumPort(ClusterViewPort, Protocol):
    """What DescribeQuorum asks of the controller quorum (KIP-595) besides the cluster view."""

    def controller_epoch(self) -> int: ...

    def metadata_end_offset(self) -> int: ...

    def quorum_voters(self) -> list[int]:
        """Every broker that has joined, in id order."""
        ...

    def departed_voter(self, node_id: int) -> tuple[int, int] | None:
        """A stopped voter's (metadata log end offset, time in ms) when it stopped; None while it is live."""
        ...

    def clock_ms(self) -> int: ...


class SettingsPort(Protocol):
    """A broker's integer setting by name (``KeyError`` for an unknown one), for ApiVersions' feature levels."""

    def int_setting(self, name: str) -> int: ...


class ConfigResourcesPort(ClusterViewPort, Protocol):
    """What ListConfigResources asks besides the cluster view: the groups that have settings to describe."""

    def known_group_ids(self) -> set[str]:
        """The groups this broker knows (classic, consumer and share) and those with settings."""
        ...


class AppendedView(Protocol):
    """Where a produced batch landed (``ProducePort.append_batch``)."""

    @property
    def base_offset(self) -> int: ...

    @property
    def log_append_time(self) -> int:
        """The broker's time stamped on the batch (LogAppendTime topics); -1 where the producer's is kept."""
        ...

    @property
    def log_start_offset(self) -> int: ...


class ProducePort(TopicIdsPort, Protocol):
    """What Produce asks of a broker: append a batch at a partition's leader (v13 names its topics by
    id). Raises ``KafkaError`` (``InvalidRecords`` with the records at fault) with what the client should see."""

    async def append_batch(self, topic: str, index: int, batch: bytes, acks: int, timeout: datetime.timedelta,
                           transactional_id: str | None, may_add_partition: bool) -> AppendedView:
        """``may_add_partition``: this request's version may add the partition to its transaction (protocol v2)."""
        ...


class OffsetsPort(Protocol):
    """What ListOffsets asks: the offset a timestamp names at a partition's leader (``KafkaError`` else)."""

    def list_offset(self, topic: str, index: int, timestamp: int, committed: bool) -> tuple[int, int, int]:
        """(timestamp found, offset, leader epoch); (-1, -1, epoch) where the timestamp names no record."""
        ...


# -- groups (the group coordinator) -----------------------------------------------------------------

class CoordinatorsPort(Protocol):
    """What FindCoordinator asks: which broker coordinates a group or a transactional id (-1: none yet;
    the internal topic is created on first need), and where a broker listens."""

    def group_coordinator(self, group_id: str) -> int: ...

    def transaction_coordinator(self, transactional_id: str) -> int: ...

    def listener_address(self, node_id: int, listener: str | None) -> tuple[str, int] | None:
        """(host, port) of a live broker on ``listener`` (None: the only one), None when it has none."""
        ...


# One committed offset as OffsetFetch gives it: (offset, leader epoch, metadata).
Committed = tuple[int, int, str]
# OffsetFetch's row: (topic, partition, its committed offset or None, error).
FetchedOffset = tuple[str, int, Committed | None, ErrorCode]
# ListGroups' row: (group id, protocol type, state, group type).
Listed = tuple[str, str, str, str]


class JoinedView(Protocol):
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


class SyncedView(Protocol):
    """A SyncGroup's outcome: the member's assignment (opaque bytes) and the group's protocol."""

    @property
    def assignment(self) -> bytes: ...
    @property
    def protocol_type(self) -> str | None: ...
    @property
    def protocol_name(self) -> str | None: ...


class ClassicMemberView(Protocol):
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


class ClassicGroupView(Protocol):
    """A classic group as DescribeGroups shows it; ``str(state)`` is Kafka's name of the state."""

    @property
    def state(self) -> object: ...
    @property
    def protocol_type(self) -> str | None: ...
    @property
    def protocol_name(self) -> str | None: ...
    @property
    def members(self) -> Mapping[str, ClassicMemberView]: ...


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
                         protocols: tuple[tuple[str, bytes], ...], require_known_member_id: bool) -> JoinedView:
        """JoinGroup: answered when the rebalance completes (at once for a consumer group, KIP-848's migration)."""
        ...

    async def sync_group(self, group_id: str, member_id: str, instance_id: str | None, generation_id: int,
                         assignments: dict[str, bytes], protocol_type: str | None,
                         protocol_name: str | None) -> SyncedView: ...

    def heartbeat_group(self, group_id: str, member_id: str, instance_id: str | None, generation_id: int) -> None: ...

    def leave_group(self, group_id: str, members: list[tuple[str, str | None]]) -> list[ErrorCode]:
        """LeaveGroup: one error per (member id, instance id), in order."""
        ...

    def describe_group(self, group_id: str) -> ClassicGroupView | None:
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


class ConsumerBeatView(Protocol):
    """A ConsumerGroupHeartbeat's outcome; ``assignment`` None: unchanged since the member's last heartbeat."""

    @property
    def member_id(self) -> str: ...
    @property
    def member_epoch(self) -> int: ...
    @property
    def heartbeat_interval_ms(self) -> int: ...
    @property
    def assignment(self) -> Collection[tuple[str, int]] | None: ...


class ConsumerMemberView(Protocol):
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


class ConsumerGroupView(Protocol):
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
    def members(self) -> Mapping[str, ConsumerMemberView]: ...
    @property
    def target(self) -> Mapping[str, Collection[tuple[str, int]]]: ...


class ConsumerGroupsPort(TopicIdsPort, Protocol):
    """What the consumer group protocol's APIs ask (KIP-848: ConsumerGroupHeartbeat, ConsumerGroupDescribe):
    the group coordinator of this broker. Each raises ``KafkaError``; ACLs are the handlers' and dispatch's."""

    def consumer_group_heartbeat(self, group_id: str, member_id: str, member_epoch: int, instance_id: str | None,
                                 rack_id: str | None, rebalance_timeout_ms: int,
                                 subscribed_topic_names: tuple[str, ...] | None, subscribed_topic_regex: str | None,
                                 server_assignor: str | None, owned: frozenset[tuple[str, int]] | None,
                                 client_id: str, client_host: str) -> ConsumerBeatView:
        """Join (epoch 0), heartbeat, or leave (-1, -2 for a static member); None: unchanged."""
        ...

    def describe_consumer_group(self, group_id: str) -> ConsumerGroupView:
        """The consumer-protocol group, or GROUP_ID_NOT_FOUND (a classic group is not one)."""
        ...


class ReadView(Protocol):
    """A replica as Fetch reads it (``replica.partition.Partition`` is one): its offsets, its batches,
    the aborted transactions a ``read_committed`` consumer drops, and a future for the long poll."""

    @property
    def high_watermark(self) -> int: ...
    @property
    def last_stable_offset(self) -> int: ...
    @property
    def log_start_offset(self) -> int: ...

    def read(self, offset: int, max_bytes: int, *, committed_only: bool = False) -> bytes: ...

    def aborted_transactions(self, start: int, end: int) -> list[tuple[int, int]]:
        """(producer id, first offset) of each aborted transaction with records in [start, end)."""
        ...

    def waiter(self) -> asyncio.Future[Any]:
        """Done when the replica has something new to read (or is closed)."""
        ...


class FollowerReadView(Protocol):
    """The leader's answer to one partition of a follower's fetch (``replica.fetcher.FollowerRead``)."""

    @property
    def records(self) -> bytes: ...
    @property
    def diverging(self) -> tuple[int, int] | None:
        """(epoch, end offset) where the follower's log left the leader's (KIP-320): it must cut first."""
        ...


class FetchPort(TopicIdsPort, Protocol):
    """What Fetch asks: the replica a consumer reads (and the follower it should read instead, KIP-392),
    and a follower broker's fetch served by the replication rules. Each raises ``KafkaError``."""

    def consumer_replica(self, topic: str, index: int, rack_id: str | None, fetch_offset: int
                         ) -> tuple[ReadView, int]:
        """(the replica, the preferred read replica or -1); ``rack_id`` None: a version before KIP-392."""
        ...

    def follower_replica(self, topic: str, index: int) -> ReadView: ...

    def follower_read(self, topic: str, index: int, follower: int, current_leader_epoch: int, fetch_offset: int,
                      last_fetched_epoch: int, max_bytes: int) -> FollowerReadView: ...

    def monotonic_ms(self) -> int:
        """The broker's monotonic clock in ms (``minikafka.clock``): how long a fetch has waited."""
        ...


class EpochsPort(Protocol):
    """What OffsetForLeaderEpoch asks: where an epoch ended at the partition's leader (KIP-101, KIP-320)."""

    def epoch_end_offset(self, topic: str, index: int, current_leader_epoch: int, leader_epoch: int
                         ) -> tuple[int, int]:
        """(the largest epoch up to ``leader_epoch``, its end offset); (-1, -1) for an epoch older than the log."""
        ...


class Ports(TransactionsPort, TxnMarkersPort, ConfigsPort, SharePort, AclsPort, ScramPort, CoordinatorsPort,
            GroupsPort, ConsumerGroupsPort, QuorumPort, ConfigResourcesPort, ClusterViewPort, TopicsPort,
            ReassignmentPort, LogDirsPort, SettingsPort, ProducePort, OffsetsPort, FetchPort, EpochsPort, Protocol):
    """Every port a converted handler may be given: what ``Broker`` provides to the registry."""
