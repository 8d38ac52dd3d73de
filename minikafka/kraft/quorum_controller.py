"""A controller's state machine on top of Raft: it owns the cluster's metadata.

``QuorumController`` is Kafka's QuorumController in miniature, sans I/O. The leader turns
BrokerRegistration and BrokerHeartbeat into registration and fencing records (KIP-631), and
the admin requests (CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders) and the
partition leaders' AlterPartition into topic and partition records; AllocateProducerIds hands
brokers blocks of producer ids. ``broker.session.timeout.ms`` (9000 by default in Kafka) is
how long a broker may go without a heartbeat before the leader fences it; fencing a broker
moves its leaderships and takes it out of the ISRs (``Controller.broker_leaving``),
unfencing gives offline partitions a leader back (``Controller.broker_joined``).

The state is a ``MetadataImage``: the registrations and a ``ClusterMetadata`` whose changes
go to the Raft log instead of a file. The rules are the embedded controller's
(``minikafka.controller.Controller``): elections, ISR and ELR, placement; here a broker is
alive when it is registered and unfenced, and brokers hear of changes only from the log.

The leader applies its own changes in memory at once and appends them; an answer waits until
they commit. Followers (and the leader, for records of earlier epochs) apply records once the
high watermark passes them. A new leader serves nothing that changes metadata until it has
applied every record before its epoch. A leader that loses its leadership throws its memory
away and rebuilds from the newest snapshot and the committed log, so its uncommitted changes
vanish (the next leader truncates them from its log). Kafka does the same in spirit but not
by rebuilding: its controller keeps its in-memory structures in snapshot-able "timeline"
collections and reverts them to the last committed offset.

Every controller snapshots its committed state on its own (KIP-630) once
``metadata.log.max.record.bytes.between.snapshots`` of records have been applied since the
last snapshot, and then drops the log below it. A follower too far behind gets the leader's
snapshot with FetchSnapshot and loads it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from ..config import TOPIC_SETTINGS, BrokerConfig, ConfigError, render
from ..controller import NO_LEADER, Controller
from ..errors import ErrorCode, KafkaError
from ..metadata import PRODUCER_ID_BLOCK, ClusterMetadata, PartitionInfo, TopicInfo
from ..resource_configs import BROKER, TOPIC, merge
from . import snapshots
from .brokers import BrokerRegistry, HeartbeatTracker
from .image import MetadataDelta, MetadataImage
from .raft import LEADER, RaftNode
from .records import (
    CHANGE_RECORDS,
    FENCE_BROKER,
    REGISTER_BROKER,
    UNFENCE_BROKER,
    change_record,
    decode,
    metadata_record,
)

SESSION_TIMEOUT_MS = 9000  # broker.session.timeout.ms
SNAPSHOT_BYTES = 20 * 1024 * 1024  # metadata.log.max.record.bytes.between.snapshots


@dataclass(frozen=True)
class HeartbeatAnswer:
    error: ErrorCode
    is_caught_up: bool = False
    is_fenced: bool = True
    should_shut_down: bool = False


@dataclass(frozen=True)
class PartitionAnswer:
    """One partition of an AlterPartition answer: the error, or the partition's new state."""

    error: ErrorCode
    info: PartitionInfo | None = None
    message: str | None = None


class QuorumBrokers:
    """The brokers as the quorum's rules see them: alive means registered and unfenced, and
    telling them anything is nothing (they follow the metadata log)."""

    def __init__(self, registry: BrokerRegistry):
        self.registry = registry

    def __contains__(self, broker_id: int) -> bool:
        broker = self.registry.brokers.get(broker_id)
        return broker is not None and not broker.fenced

    def live(self) -> list[int]:
        return sorted(b.broker_id for b in self.registry.brokers.values() if not b.fenced)

    def publish(self, topic: str, info: PartitionInfo) -> None:
        pass

    def open_replicas(self, topic: TopicInfo) -> None:
        pass

    def drop_replica(self, broker_id: int, topic: str, index: int) -> None:
        pass


class QuorumRules(Controller[QuorumBrokers]):
    """The embedded controller's rules; the quorum's leader is the controller, not a broker."""

    def elect_controller(self) -> None:
        pass


class QuorumController:
    def __init__(
        self,
        node: RaftNode,
        session_timeout_ms: int = SESSION_TIMEOUT_MS,
        snapshot_bytes: int = SNAPSHOT_BYTES,
        now: int = 0,
        config: BrokerConfig | None = None,
    ):
        self.node, self.snapshot_bytes, self._since_snapshot, self._now = node, snapshot_bytes, 0, now
        self.registry = BrokerRegistry()
        self.metadata = ClusterMetadata(config or BrokerConfig(), sink=self._append_change)
        self.image = MetadataImage(self.registry, self.metadata)
        self.rules = QuorumRules(self.metadata, QuorumBrokers(self.registry))
        self.heartbeats = HeartbeatTracker(session_timeout_ms)
        self.intended_fenced: dict[int, bool] = {}  # appended by this leader, maybe not committed yet
        self._led_epoch = -1
        self._ready_epoch = -1  # the epoch in which this leader applied everything before its own records
        self._applying = False
        self.last_appended = -1  # offset of the newest record this leader appended
        node.on_commit = self._apply_committed
        node.read_snapshot = self._read_snapshot
        node.on_snapshot = self._load_snapshot
        self._recover(now)

    def _recover(self, now: int) -> None:
        """At start: load the newest snapshot; the log starts where it ends."""
        directory = self.node.log.directory
        latest = snapshots.latest(directory) if directory is not None else None
        if latest is None or directory is None or latest[0] < self.node.log.start_offset:
            return
        if latest[0] > self.node.log.start_offset:  # a crash between writing it and cutting the log
            self.node.log.restart_at(*latest)
        self._load_snapshot(latest[0], latest[1], snapshots.read(directory, *latest) or b"")

    def _read_snapshot(self, end_offset: int, epoch: int) -> bytes | None:
        directory = self.node.log.directory
        return snapshots.read(directory, end_offset, epoch) if directory is not None else None

    def _load_snapshot(self, end_offset: int, epoch: int, data: bytes) -> None:
        directory = self.node.log.directory
        if directory is not None and not (directory / snapshots.file_name(end_offset, epoch)).exists():
            snapshots.write(directory, end_offset, epoch, data)
        self.image.load_snapshot(snapshots.records_of(data), end_offset)
        self._since_snapshot = 0

    def _maybe_snapshot(self, epoch: int, now: int) -> None:
        """Snapshot the committed state and drop the log below it, past the configured bytes.
        A leader with uncommitted changes in memory waits until they commit."""
        directory, end = self.node.log.directory, self.registry.applied_offset + 1
        if directory is None or self._since_snapshot < self.snapshot_bytes or end <= self.node.log.start_offset:
            return
        if self.is_active and self.node.log.end_offset != end:
            return
        data = snapshots.encode(self.image.snapshot_records(now), end, epoch, now)
        snapshots.write(directory, end, epoch, data)
        self.node.log.restart_at(end, epoch)
        self._since_snapshot = 0

    @property
    def is_active(self) -> bool:
        return self.node.state == LEADER

    @property
    def is_ready(self) -> bool:
        """The active controller, caught up with every record before its epoch: it may change metadata."""
        return self.is_active and self._ready_epoch == self.node.epoch

    def _apply_committed(self, high_watermark: int = -1) -> None:
        """Apply every record below the high watermark that is not applied yet.

        Records this leader appended in its own epoch are in its memory already; it only
        counts them. A fencing or unfencing that commits while it leads moves leaderships.
        """
        if self._applying:
            return  # a record appended while applying advanced the high watermark: the loop below goes on
        self._check_leadership()
        self._applying = True
        try:
            self._apply_loop()
        finally:
            self._applying = False
        self._check_ready()

    def _apply_loop(self) -> None:
        while self.registry.applied_offset + 1 < self.node.high_watermark:
            data = self.node.log.read(self.registry.applied_offset + 1, 1)
            if not data:
                return
            progressed, epoch = False, -1
            for record in decode(data):
                if not self.registry.applied_offset < record.offset < self.node.high_watermark:
                    continue
                own = self.is_active and record.epoch == self.node.epoch and record.type in CHANGE_RECORDS
                if own:
                    self.registry.applied_offset = record.offset
                    self.metadata.end_offset = record.offset + 1
                else:
                    self._react(self.image.apply(record))
                self._since_snapshot += len(str(record.data)) + len(record.type)
                progressed, epoch = True, record.epoch
            if not progressed:
                return
            if self.registry.applied_offset + 1 == self.node.high_watermark:
                self._maybe_snapshot(epoch, self._now)

    def _react(self, delta: MetadataDelta) -> None:
        """The leader's part in a committed fencing: leaderships move (KIP-631)."""
        if not self.is_ready:
            return
        for broker_id in sorted(delta.fenced):
            self.rules.broker_leaving(broker_id)
        for broker_id in sorted(delta.unfenced):
            self.rules.broker_joined(broker_id)

    def _check_leadership(self) -> None:
        """A leader that lost its epoch forgets what it did not commit: rebuild from the log."""
        if self._ready_epoch != -1 and (not self.is_active or self.node.epoch != self._ready_epoch):
            self._ready_epoch = -1
            self.image.reset()
            self._since_snapshot = 0
            self._recover(self._now)
            self._applying = True
            try:
                self._apply_loop()
            finally:
                self._applying = False

    def _check_ready(self) -> None:
        """A new leader becomes ready once its leader-change record is applied: everything before is too.
        Then it puts right what a previous leader may have left half done."""
        leader = self.node.leader_state
        if not self.is_active or self._ready_epoch == self.node.epoch or leader is None:
            return
        if self.registry.applied_offset < leader.epoch_start_offset:
            return
        self._ready_epoch = self.node.epoch
        for broker in sorted(self.registry.brokers.values(), key=lambda b: b.broker_id):
            placed = [info for _, info in self.rules.partitions() if broker.broker_id in info.replicas]
            if broker.fenced and any(i.leader == broker.broker_id or (len(i.isr) > 1 and broker.broker_id in i.isr)
                                     for i in placed):
                self.rules.broker_leaving(broker.broker_id)
            elif not broker.fenced and any(i.leader == NO_LEADER for i in placed):
                self.rules.broker_joined(broker.broker_id)

    def tick(self, now: int) -> None:
        self._now = now
        self.node.tick(now)
        self._check_leadership()
        self._check_ready()
        if not self.is_active:
            return
        if self._led_epoch != self.node.epoch:  # a new term: every broker's session starts now
            self._led_epoch, self.intended_fenced = self.node.epoch, {}
            self.heartbeats.last_seen.clear()
        for broker in self.heartbeats.expired(self.registry, now):
            if not self.intended_fenced.get(broker.broker_id, broker.fenced):
                self._set_fenced(broker.broker_id, broker.broker_epoch, True, now)

    # -- the leader's changes

    def _append_change(self, change: dict) -> None:
        """ClusterMetadata's sink: one change becomes one record in the leader's log."""
        if change["type"] == "leader_change":
            return  # the quorum's own LeaderChangeMessage says who controls
        if change["type"] == "partition":  # every change of a partition bumps its partition epoch
            topic = self.metadata.topics.get(change["topic"])
            index = change["partition"]["index"]
            if topic is not None and index < len(topic.partitions):
                info = topic.partitions[index]
                info.partition_epoch += 1
                change["partition"]["partition_epoch"] = info.partition_epoch
        self.last_appended = self.node.append([change_record(change, self._now)], self._now)

    def _check_active(self) -> None:
        if not self.is_ready:
            raise KafkaError(ErrorCode.not_controller, "This controller is not the active controller.")

    def create_topic(
        self,
        name: str,
        partitions: int = -1,
        replication_factor: int = -1,
        configs: dict | None = None,
        assignment: dict[int, list[int]] | None = None,
        validate_only: bool = False,
    ) -> TopicInfo:
        """CreateTopics for one topic: placed over the unfenced brokers, or as assigned."""
        self._check_active()
        topic = self.metadata.plan_topic(name, partitions, replication_factor, configs, assignment)
        if not validate_only:
            self.metadata.add_topic(topic)
        return topic

    def delete_topic(self, name: str) -> None:
        self._check_active()
        if name not in self.metadata.topics:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"Topic {name!r} does not exist.")
        self.metadata.remove_topic(name)

    def add_partitions(
        self, name: str, total: int, validate_only: bool = False, assignments: list[list[int]] | None = None
    ) -> None:
        """CreatePartitions: grow ``name`` to ``total`` partitions."""
        self._check_active()
        self.metadata.grow_topic(name, total, assignments, validate_only)

    def elect(self, topic: str, index: int, unclean: bool) -> None:
        """ElectLeaders (KIP-460) for one partition."""
        self._check_active()
        found = self.metadata.topics.get(topic)
        if found is None or not 0 <= index < len(found.partitions):
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"{topic}-{index} does not exist.")
        self.rules.requested_election(topic, found.partitions[index], unclean)

    def alter_configs(
        self, resource_type: int, name: str, changes: list[tuple[int, str, str | None]], validate_only: bool
    ) -> None:
        """IncrementalAlterConfigs (KIP-339) of a topic, or of the brokers' dynamic settings (KIP-226):
        (operation, setting, value) changes, the other settings kept."""
        self._check_active()
        try:
            if resource_type == TOPIC:
                topic = self.metadata.topics.get(name)
                if topic is None:
                    raise KafkaError(ErrorCode.unknown_topic_or_partition, f"Topic {name!r} does not exist.")
                current = {k: render(v) for k, v in topic.overrides.items()}
                config = self.metadata.topic_config(name)
                for op, setting, value in changes:
                    merge(current, op, setting, value, render(config[setting]) if setting in TOPIC_SETTINGS else "")
                self.metadata.replace_topic_overrides(name, current, validate_only)
            elif resource_type == BROKER:
                current = self.metadata.broker_configs.strings(name)
                for op, setting, value in changes:
                    merge(current, op, setting, value)
                self.metadata.broker_configs.replace(name, current, validate_only)
            else:
                raise KafkaError(ErrorCode.invalid_request, f"Resource type {resource_type} cannot be altered here.")
        except ConfigError as e:
            raise KafkaError(ErrorCode.invalid_config, str(e)) from None

    def allocate_producer_ids(self, broker_id: int, broker_epoch: int) -> tuple[ErrorCode, int, int]:
        """AllocateProducerIds (KIP-730): the next block of ids, as (error, first id, length)."""
        if not self.is_ready:
            return ErrorCode.not_controller, -1, 0
        error = self.check_broker(broker_id, broker_epoch)
        if error != ErrorCode.none:
            return error, -1, 0
        return ErrorCode.none, self.metadata.allocate_producer_ids(PRODUCER_ID_BLOCK), PRODUCER_ID_BLOCK

    def check_broker(self, broker_id: int, broker_epoch: int) -> ErrorCode:
        broker = self.registry.brokers.get(broker_id)
        if broker is None:
            return ErrorCode.broker_id_not_registered
        if broker_epoch != -1 and broker.broker_epoch != broker_epoch:
            return ErrorCode.stale_broker_epoch
        return ErrorCode.none

    def alter_partition(
        self, broker_id: int, broker_epoch: int, topic: str, index: int, leader_epoch: int,
        partition_epoch: int, new_isr: list[int],
    ) -> PartitionAnswer:
        """AlterPartition (KIP-497): the leader's new ISR, checked against the partition's state.

        Refused as Kafka refuses: a leader epoch other than the current one (FENCED_LEADER_EPOCH,
        or NOT_LEADER_OR_FOLLOWER when it is newer than the controller knows), a request not from
        the leader (INVALID_REQUEST), a partition epoch other than the current
        (INVALID_UPDATE_VERSION), an ISR without the leader or naming non-replicas (INVALID_REQUEST),
        an ISR naming a fenced or unregistered broker (INELIGIBLE_REPLICA).
        """
        found = self.metadata.topics.get(topic)
        if found is None or not 0 <= index < len(found.partitions):
            return PartitionAnswer(ErrorCode.unknown_topic_or_partition, message=f"{topic}-{index} does not exist.")
        info = found.partitions[index]
        if leader_epoch > info.leader_epoch:
            return PartitionAnswer(ErrorCode.not_leader_or_follower,
                                   message=f"Leader epoch {leader_epoch} is newer than {info.leader_epoch}.")
        if leader_epoch < info.leader_epoch:
            return PartitionAnswer(ErrorCode.fenced_leader_epoch,
                                   message=f"Leader epoch {leader_epoch} is older than {info.leader_epoch}.")
        if broker_id != info.leader:
            return PartitionAnswer(ErrorCode.invalid_request,
                                   message=f"Broker {broker_id} does not lead {topic}-{index}; {info.leader} does.")
        if partition_epoch != info.partition_epoch:
            return PartitionAnswer(ErrorCode.invalid_update_version,
                                   message=f"Partition epoch {partition_epoch} is not the current "
                                           f"{info.partition_epoch}.")
        distinct = len(set(new_isr)) == len(new_isr)
        if broker_id not in new_isr or any(b not in info.replicas for b in new_isr) or not distinct:
            return PartitionAnswer(ErrorCode.invalid_request,
                                   message=f"ISR {new_isr} must hold the leader and only distinct replicas "
                                           f"{info.replicas}.")
        ineligible = [b for b in new_isr if b not in info.isr and b not in self.rules.peers]
        if ineligible:
            return PartitionAnswer(ErrorCode.ineligible_replica,
                                   message=f"Broker(s) {ineligible} are fenced or not registered.")
        if sorted(new_isr) == sorted(info.isr):
            return PartitionAnswer(ErrorCode.none, info)
        self.rules.set_isr(topic, info, new_isr)
        return PartitionAnswer(ErrorCode.none, info)

    def _set_fenced(self, broker_id: int, broker_epoch: int, fenced: bool, now: int) -> None:
        kind = FENCE_BROKER if fenced else UNFENCE_BROKER
        self.node.append([metadata_record(kind, now, id=broker_id, epoch=broker_epoch)], now)
        self.intended_fenced[broker_id] = fenced

    # -- brokers

    def register(
        self, broker_id: int, incarnation_id: uuid.UUID | None, listeners: list[dict], rack: str | None, now: int
    ) -> tuple[ErrorCode, int]:
        """Append a RegisterBrokerRecord; the answer waits until its offset (the broker epoch) commits."""
        if not self.is_active:
            return ErrorCode.not_controller, -1
        known = self.registry.brokers.get(broker_id)
        if known is not None and known.incarnation_id == str(incarnation_id):
            return ErrorCode.none, known.broker_epoch  # the same broker asking again
        epoch = self.node.log.end_offset
        record = metadata_record(
            REGISTER_BROKER,
            now,
            brokerId=broker_id,
            brokerEpoch=epoch,
            incarnationId=str(incarnation_id),
            endPoints=listeners,
            rack=rack,
            fenced=True,
        )
        self.node.append([record], now)
        self.intended_fenced[broker_id] = True
        self.heartbeats.heard(broker_id, now)
        return ErrorCode.none, epoch

    def heartbeat(
        self, broker_id: int, broker_epoch: int, metadata_offset: int, want_fence: bool, want_shut_down: bool, now: int
    ) -> HeartbeatAnswer:
        """A live broker: unfence it (or fence it if it asks), and say what it is now."""
        if not self.is_active:
            return HeartbeatAnswer(ErrorCode.not_controller)
        broker = self.registry.brokers.get(broker_id)
        if broker is None:
            return HeartbeatAnswer(ErrorCode.broker_id_not_registered)
        if broker.broker_epoch != broker_epoch:
            return HeartbeatAnswer(ErrorCode.stale_broker_epoch)
        self.heartbeats.heard(broker_id, now)
        want = want_fence or want_shut_down
        if self.intended_fenced.get(broker_id, broker.fenced) != want:
            self._set_fenced(broker_id, broker_epoch, want, now)
        done = want_shut_down and broker.fenced and not self._leads_committed(broker_id)
        return HeartbeatAnswer(ErrorCode.none, metadata_offset >= broker.broker_epoch, broker.fenced, done)

    def _leads_committed(self, broker_id: int) -> bool:
        """Whether the broker still leads a partition, or its leaderships moved in records not yet
        committed: a controlled shutdown is over only once they have (KIP-631)."""
        leads = any(info.leader == broker_id for _, info in self.rules.partitions())
        return leads or self.node.high_watermark <= self.last_appended
