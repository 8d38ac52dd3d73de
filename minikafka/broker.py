"""One Kafka broker: its partition replicas, its coordinators, and its topic administration.

A broker holds the replicas the controller placed on it, leads some of them and follows
the others (``replica.fetcher``), keeps the ISR of what it leads honest, runs the log
cleaner, and hosts a group coordinator and a transaction coordinator for the internal
partitions it leads. It never reaches into another broker: what brokers ask of each
other goes through ``replica.peers`` (the ``ReplicaHost`` methods below), and a transaction's
markers and verification through ``transactions.channel`` (``TxnHost``). Requests
reach it through the handlers (``minikafka.handlers.dispatch``); sockets are the
server's business. All state is owned by one asyncio event loop, so nothing here locks.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from collections.abc import Sequence
from pathlib import Path

from .clock import SYSTEM, Clock, now_ms
from .config import SOURCE_CODES, BrokerConfig, TopicConfig, describe_topic
from .controller import Controller
from .errors import ErrorCode, KafkaError
from .groups.consumer.group import ConsumerGroup, HeartbeatResult
from .groups.consumer.group import Heartbeat as ConsumerHeartbeat
from .groups.coordinator import GroupCoordinator
from .groups.group import Group
from .groups.member import JoinRequest, JoinResult, SyncResult
from .groups.offsets import TOPIC as OFFSETS_TOPIC
from .groups.offsets import CommittedOffset
from .groups.offsets_topic import OffsetsTopic
from .log import PartitionLog
from .log.dirs import LogDirs
from .metadata import INTERNAL_TOPICS, PartitionInfo, TopicInfo, check_topic_name
from .replica.fetcher import FetchSource, ReplicaFetcher
from .replica.isr import IsrChannel, isr_changes, proposed_isr
from .replica.log_dir_move import LogDirMove
from .replica.partition import FollowerState, Partition
from .replica.peers import Peers
from .replica.sources import InProcessSource
from .replica.throttle import ByteRate
from .fetch_access import FetchAccess
from .record_access import RecordAccess
from .resource_configs import ResourceConfigs
from .security.acl import AclBinding
from .security.scram import ScramCredential
from .share.coordinator import ShareGroupCoordinator
from .share.group import Heartbeat, ShareGroup, ShareMember
from .share.manager import Fetched, SharePartitionManager
from .share.partition import AckBatch
from .share.sessions import ShareSession
from .share.state_topic import ShareStateTopic
from .transactions.channel import InProcessTxnPeers, TxnPeers
from .transactions.coordinator import TOPIC as TXN_TOPIC
from .transactions.coordinator import TransactionCoordinator
from .transactions.txnlog import TxnMetadata
from .transactions.verification import add_offset_commit, implicit_adds, verify_offset_commit

log = logging.getLogger("minikafka.broker")

INTERNAL_REPLICATION_FACTOR = {"__consumer_offsets": "offsets.topic.replication.factor",
                               "__transaction_state": "transaction.state.log.replication.factor",
                               "__share_group_state": "share.coordinator.state.topic.replication.factor"}

MARKER_REPLICATION_TIMEOUT = datetime.timedelta(seconds=10)


CLEAN_SHUTDOWN = ".kafka_cleanshutdown"  # Kafka's name for the marker


class ControllerIsrChannel:
    """The embedded cluster's ``IsrChannel``: AlterPartition as a call on the in-process controller."""

    def __init__(self, controller: Controller):
        self.controller = controller

    async def alter_partition(self, topic: str, index: int, leader_epoch: int, new_isr: list[int]) -> PartitionInfo:
        found = self.controller.metadata.topics.get(topic)
        if found is None or not 0 <= index < len(found.partitions):
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"{topic}-{index} does not exist.")
        info = found.partitions[index]
        if leader_epoch != info.leader_epoch:
            raise KafkaError(ErrorCode.fenced_leader_epoch, f"Leader epoch {leader_epoch} of {topic}-{index} "
                                                            f"is not the current one, {info.leader_epoch}.")
        for broker_id in [b for b in info.isr if b not in new_isr]:
            self.controller.shrink_isr(topic, info, broker_id)
        for broker_id in [b for b in new_isr if b not in info.isr]:
            self.controller.expand_isr(topic, info, broker_id)
        return info


class Broker(ResourceConfigs, RecordAccess, FetchAccess):  # the ports of the config APIs, Produce/ListOffsets, Fetch

    def __init__(self, node_id: int, config: BrokerConfig, controller: Controller, peers: Peers,
                 data_dir: Path | Sequence[Path] | None, isr_channel: IsrChannel | None = None,
                 fetch_source: FetchSource | None = None, txn_peers: TxnPeers | None = None,
                 clock: Clock = SYSTEM):
        self.node_id, self.config, self.clock = node_id, config, clock  # the coordinators' clock (``clock``)
        self.controller, self.metadata, self.peers = controller, controller.metadata, peers
        self.isr_channel: IsrChannel = isr_channel or ControllerIsrChannel(controller)  # AlterPartition
        roots = [] if data_dir is None else [data_dir] if isinstance(data_dir, Path) else list(data_dir)
        self.log_dirs = LogDirs(roots) if roots else None  # Kafka's log.dirs; None: in memory
        self.data_dir = self.log_dirs.online[0] if self.log_dirs else None
        self.log_dir_moves: dict[tuple[str, int], LogDirMove] = {}  # AlterReplicaLogDirs in progress
        # listeners and advertised.listeners as DescribeConfigs shows them: (value, set in the file?);
        # the Cluster fills them in once it has opened this broker's listeners
        self.listeners_setting: tuple[str, bool] = ("", False)
        self.advertised_listeners_setting: tuple[str | None, bool] = (None, False)
        self.preferred_log_dirs: dict[tuple[str, int], Path] = {}  # asked for before the replica existed
        self._move_wanted = asyncio.Event()
        self.partitions: dict[tuple[str, int], Partition] = {}
        self.leader_quota = ByteRate(lambda: self.config["leader.replication.throttled.rate"])  # KIP-73
        # where followers fetch from: method calls on the other brokers unless told (replica.sources)
        self.fetcher = ReplicaFetcher(node_id, self.partitions, fetch_source or InProcessSource(peers, config), config,
                                      ByteRate(lambda: self.config["follower.replication.throttled.rate"]))
        self.groups = GroupCoordinator(node_id, config, OffsetsTopic(self), clock)
        # markers and KIP-890 questions: method calls on the brokers of this process unless told
        self.txn_peers: TxnPeers = txn_peers or InProcessTxnPeers({node_id: self})
        self.transactions = TransactionCoordinator(self, self.txn_peers, self.groups.ensure_offsets_topic, clock)
        share_state = ShareStateTopic(self, peers)  # share groups, KIP-932
        self.share_groups = ShareGroupCoordinator(node_id, config, self.metadata, share_state,
                                                  self.groups.coordinator_id, self._classic_group_type, clock)
        self.share_partitions = SharePartitionManager(self, share_state, clock)
        self._tasks: list[asyncio.Task] = []
        self._unclean_start = False

    # -- lifecycle ------------------------------------------------------------
    def load(self) -> None:
        """Open the local replicas of every known topic (recovering their logs).

        As in Kafka, a clean shutdown leaves a ``.kafka_cleanshutdown`` marker. Without it
        (a crash, a kill) every segment is checked batch by batch, CRC included, and a log
        is cut at its first bad batch, later segments deleted with it: what follows a hole
        cannot be trusted (a follower refetches it from its leader). After a clean shutdown
        only the active segment is scanned; a byte flipped later in an old segment is found
        by the consumers, which check each batch's CRC.
        """
        for root in self.log_dirs.online if self.log_dirs else []:
            marker = root / CLEAN_SHUTDOWN
            has_logs = any(p.is_dir() for p in root.iterdir())
            self._unclean_start |= has_logs and not marker.exists()
            marker.unlink(missing_ok=True)  # until the next clean shutdown, a crash must be noticed
        if self._unclean_start:
            log.warning("broker %d did not shut down cleanly: checking every log segment", self.node_id)
        self._delete_strays()
        for topic in list(self.metadata.topics.values()):
            self.open_replicas(topic)

    def _delete_strays(self) -> None:
        """Future logs of moves that a stop interrupted, and replicas reassigned away while
        this broker was down: neither is this broker's any more."""
        for found in list(self.log_dirs.partition_dirs()) if self.log_dirs else []:
            topic = self.metadata.topics.get(found.topic)
            info = topic.partitions[found.index] if topic and found.index < len(topic.partitions) else None
            if found.future or (info is not None and self.node_id not in info.replicas):
                log.info("broker %d deletes %s (no longer one of its replicas)", self.node_id, found.path)
                LogDirs.remove(found.path)

    def start_background(self) -> None:
        """Start the fetcher, the ISR watch, the log cleaner and the coordinators' timers."""
        loop = asyncio.get_running_loop()
        self.groups.load_led_partitions()
        self._tasks += [loop.create_task(self._housekeeping()), loop.create_task(self.fetcher.run()),
                        loop.create_task(self._watch_isr()), loop.create_task(self.groups.run()),
                        loop.create_task(self.transactions.run()), loop.create_task(self.share_groups.run()),
                        loop.create_task(self.share_partitions.run()), loop.create_task(self._move_log_dirs())]

    async def close(self, flush: bool = True) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)  # let them finish cancelling
        self._tasks.clear()
        self.txn_peers.close()
        for move in self.log_dir_moves.values():
            move.future.close()  # left on disk: the next start deletes it
        self.log_dir_moves.clear()
        for p in self.partitions.values():
            p.notify()
            if flush:
                p.log.flush()
            p.log.close()
        self.partitions.clear()
        for root in self.log_dirs.online if flush and self.log_dirs else []:
            (root / CLEAN_SHUTDOWN).touch()

    # -- replicas (LocalReplicas, for this broker's coordinators) --------------------------
    def local_replica(self, topic: str, index: int) -> Partition | None:
        return self.partitions.get((topic, index))

    def leader_replica(self, topic: str, index: int) -> Partition:
        """The local leader replica, or the Kafka error a client should see."""
        info = self.metadata.topics.get(topic)
        if info is None or not 0 <= index < len(info.partitions):
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"{topic}-{index} does not exist.")
        part = self.partitions.get((topic, index))
        if part is None or not part.is_leader:
            raise KafkaError(ErrorCode.not_leader_or_follower, f"Broker {self.node_id} does not lead {topic}-{index}.")
        return part

    def create_internal_topic(self, name: str, partitions: int, configs: dict[str, object]) -> None:
        """An internal topic, created on first need with the replication factor its setting
        names (``offsets.topic.replication.factor``, ``transaction.state.log.replication.factor``),
        at most one replica per live broker."""
        if name not in self.metadata.topics:
            wanted = self.config[INTERNAL_REPLICATION_FACTOR[name]] if name in INTERNAL_REPLICATION_FACTOR else 3
            self.create_topic(name, partitions, max(1, min(wanted, len(self.peers))), configs)

    # -- replicas (ReplicaHost, what other brokers ask) ---------------------------------
    def open_replicas(self, topic: TopicInfo) -> None:
        config = TopicConfig(self.config, topic.overrides)  # this broker's dynamic settings included
        for info in topic.partitions:
            if self.node_id in info.replicas and (topic.name, info.index) not in self.partitions:
                directory = self._place(topic.name, info.index)
                plog = PartitionLog(directory, config, topic=topic.name, partition=info.index,
                                    check_all=self._unclean_start)
                part = Partition(topic.name, info, plog, config, self.node_id)
                self.partitions[(topic.name, info.index)] = part
                if part.is_leader:
                    self._became_leader(part)

    def drop_replicas(self, topic: str) -> None:
        for name, index in [k for k in self.partitions if k[0] == topic]:
            self.drop_replica(name, index)

    def drop_replica(self, topic: str, index: int) -> None:
        """Delete this broker's replica of a partition, files and all (StopReplica, delete=true)."""
        part = self.partitions.pop((topic, index), None)
        move = self.log_dir_moves.pop((topic, index), None)
        if move is not None:
            move.abandon()
        if part is None:
            return
        part.notify()
        part.log.close()
        if part.log.directory is not None:
            LogDirs.remove(part.log.directory)

    def on_partition_change(self, topic: str, info: PartitionInfo) -> None:
        """The controller changed a partition's leader or ISR (LeaderAndIsr, in Kafka)."""
        part = self.partitions.get((topic, info.index))
        if part is None:
            return
        if part.is_leader and part.epochs.latest < info.leader_epoch:
            self._became_leader(part)
        elif not part.is_leader:
            part.followers.clear()
            part.needs_truncation = True
        part.update_high_watermark()
        part.notify()  # long polls on a former leader return and learn the news

    async def write_txn_marker(self, topic: str, index: int, producer_id: int, producer_epoch: int,
                               commit: bool) -> ErrorCode:
        """WriteTxnMarkers: end a producer's transaction on a partition this broker leads.

        NOT_LEADER_OR_FOLLOWER when this broker does not lead it (the coordinator retries with the
        leader it learns of), UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist.
        """
        found = self.metadata.topics.get(topic)
        if found is None or not 0 <= index < len(found.partitions):
            return ErrorCode.unknown_topic_or_partition
        part = self.partitions.get((topic, index))
        if part is None or not part.is_leader:
            return ErrorCode.not_leader_or_follower
        offset = part.write_marker(producer_id, producer_epoch, commit)
        if topic == OFFSETS_TOPIC:
            self.groups.complete_transaction(index, producer_id, commit)
        try:
            await part.wait_for_replicas(offset + 1, MARKER_REPLICATION_TIMEOUT)
        except KafkaError:
            log.warning("marker on %s-%d not yet on all in-sync replicas", topic, index)
        return ErrorCode.none

    def verify_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int, topic: str,
                           index: int) -> None:
        """A partition leader checks a transactional write with this coordinator (KIP-890)."""
        self.transactions.verify(transactional_id, producer_id, producer_epoch, topic, index)

    def verify_transaction_producer(self, transactional_id: str, producer_id: int, producer_epoch: int) -> None:
        """A group coordinator checks TxnOffsetCommit's producer with this coordinator."""
        self.transactions.verify_producer(transactional_id, producer_id, producer_epoch)

    async def add_to_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                 topic: str, index: int) -> None:
        """A partition leader adds a partition to a producer's transaction (transaction protocol v2)."""
        await self.transactions.add_partitions(transactional_id, producer_id, producer_epoch, [(topic, index)])

    async def add_offsets_to_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                         group_id: str) -> None:
        """A group coordinator adds a group's offsets to a transaction (TxnOffsetCommit v5, protocol v2)."""
        await self.transactions.add_offsets(transactional_id, producer_id, producer_epoch, group_id)

    # -- the transaction APIs' port (handlers.ports.TransactionsPort) ---------------------------
    async def init_producer_id(self, transactional_id: str | None, timeout_ms: int, producer_id: int,
                               producer_epoch: int) -> tuple[int, int]:
        """InitProducerId: from the transaction coordinator, or a fresh idempotent producer id."""
        if transactional_id is None:
            return self.metadata.next_producer_id(), 0
        return await self.transactions.init_producer_id(transactional_id, timeout_ms, producer_id, producer_epoch)

    async def add_partitions_to_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                            partitions: list[tuple[str, int]]) -> None:
        await self.transactions.add_partitions(transactional_id, producer_id, producer_epoch, partitions)

    async def end_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool,
                              bump_epoch: bool) -> tuple[int, int]:
        return await self.transactions.end_txn(transactional_id, producer_id, producer_epoch, commit, bump_epoch)

    async def commit_transaction_offsets(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                         group_id: str, member_id: str, instance_id: str | None, generation_id: int,
                                         offsets: list[tuple[str, int, int, int, str]],
                                         may_add: bool) -> dict[tuple[str, int], ErrorCode]:
        """TxnOffsetCommit: check (or, protocol v2, add) the producer with its coordinator, then commit."""
        if implicit_adds(self.config["transaction.version"], may_add):
            await add_offset_commit(transactional_id, producer_id, producer_epoch, group_id, self.metadata,
                                    self.txn_peers)
        else:
            await verify_offset_commit(transactional_id, producer_id, producer_epoch, group_id, self.metadata,
                                       self.txn_peers)
        stamp = self.clock.wall_ms()
        commits = [(t, p, CommittedOffset(offset, epoch, metadata, stamp)) for t, p, offset, epoch, metadata in offsets]
        return await self.groups.commit_transactional(group_id, producer_id, producer_epoch, member_id, instance_id,
                                                      generation_id, commits)

    def describe_transaction(self, transactional_id: str) -> TxnMetadata:
        """DescribeTransactions: the coordinator's record of the id."""
        return self.transactions.describe(transactional_id)

    def _became_leader(self, part: Partition) -> None:
        part.epochs.assign(part.leader_epoch, part.log_end_offset)
        part.followers = {b: FollowerState(0) for b in part.info.isr if b != self.node_id}
        part.pending_isr = set()  # the controller's ISR for this epoch is the truth; an older request is settled
        self.groups.on_become_leader(part)
        self.transactions.on_become_leader(part)

    # -- log directories (KIP-113) -------------------------------------------------------
    def _place(self, topic: str, index: int) -> Path | None:
        if self.log_dirs is None:
            return None
        def load() -> dict[Path, int]:
            count: dict[Path, int] = {}
            for part in self.partitions.values():
                if part.log.directory is not None:
                    count[part.log.directory.parent] = count.get(part.log.directory.parent, 0) + 1
            return count
        return self.log_dirs.place(topic, index, load, self.preferred_log_dirs.pop((topic, index), None))

    def alter_replica_log_dir(self, topic: str, index: int, path: str) -> None:
        """AlterReplicaLogDirs for one replica: start moving it (or raise Kafka's error)."""
        if self.log_dirs is None:
            raise KafkaError(ErrorCode.log_dir_not_found, "This broker keeps its logs in memory, not in log.dirs.")
        root = self.log_dirs.lookup(path)
        info = self.metadata.topics.get(topic)
        if info is None or not 0 <= index < len(info.partitions):
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"{topic}-{index} does not exist.")
        part = self.partitions.get((topic, index))
        if part is None:  # Kafka remembers the wish for when the replica arrives
            self.preferred_log_dirs[(topic, index)] = root
            raise KafkaError(ErrorCode.replica_not_available, f"Broker {self.node_id} holds no replica of "
                                                              f"{topic}-{index}; it will be created in {path}.")
        move = self.log_dir_moves.pop((topic, index), None)
        if move is not None:
            if move.destination == root:
                self.log_dir_moves[(topic, index)] = move
                return
            move.abandon()
        if part.log.directory is not None and part.log.directory.parent != root:
            self.log_dir_moves[(topic, index)] = LogDirMove(part, root)
            self._move_wanted.set()

    async def _move_log_dirs(self) -> None:
        """Copy each moving replica a step at a time; swap it in once caught up."""
        while True:
            for key, move in list(self.log_dir_moves.items()):
                try:
                    if move.copy_some():
                        del self.log_dir_moves[key]
                        move.finish()
                except OSError:
                    log.exception("moving %s-%d to %s failed", key[0], key[1], move.destination)
                    self.log_dir_moves.pop(key, None)
                    move.abandon()
            if self.log_dir_moves:
                await asyncio.sleep(0.01)  # other work goes first
            else:
                await self._move_wanted.wait()
                self._move_wanted.clear()

    # -- topics ---------------------------------------------------------------
    def create_topic(self, name: str, partitions: int = -1, replication_factor: int = -1,
                     configs: dict | None = None, assignment: dict | None = None,
                     validate_only: bool = False) -> TopicInfo:
        topic = self.metadata.plan_topic(name, partitions, replication_factor, configs, assignment)
        if not validate_only:
            self.metadata.add_topic(topic)
            self.peers.open_replicas(topic)
        return topic

    def auto_create(self, name: str) -> TopicInfo | None:
        """Create a topic on first use when ``auto.create.topics.enable`` (Kafka's default)."""
        if name in self.metadata.topics:
            return self.metadata.topics[name]
        if not self.config["auto.create.topics.enable"]:
            return None
        return self.create_topic(name)

    def delete_topic(self, name: str) -> None:
        if name not in self.metadata.topics:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"Topic {name!r} does not exist.")
        self.metadata.remove_topic(name)
        self.peers.drop_replicas(name)

    def add_partitions(self, name: str, total: int, validate_only: bool = False,
                       assignments: list[list[int]] | None = None) -> None:
        """CreatePartitions: grow ``name`` to ``total`` partitions, placed round-robin or as
        ``assignments`` says (one replica list per new partition, leader first)."""
        topic = self.metadata.grow_topic(name, total, assignments, validate_only)
        if not validate_only:
            self.peers.open_replicas(topic)

    # -- the topic and cluster-view APIs' ports (handlers.ports: ClusterViewPort, TopicsPort, ...) -----
    def topics(self) -> dict[str, TopicInfo]:
        return self.metadata.topics

    def topic_by_id(self, topic_id: str) -> TopicInfo | None:
        return self.metadata.topic_by_id(topic_id)

    def live_brokers(self) -> dict[int, tuple[str, int]]:
        return self.metadata.brokers

    def broker_endpoints(self, listener: str | None) -> dict[int, tuple[str, int]]:
        """The live brokers' addresses on ``listener`` (the default ones for None or a name it does not know)."""
        meta = self.metadata
        if listener is None or listener not in meta.listener_endpoints:
            return meta.brokers
        on_listener = meta.listener_endpoints[listener]
        return {i: on_listener[i] for i in meta.brokers if i in on_listener}

    def rack_of(self, node_id: int) -> str | None:
        return self.metadata.racks.get(node_id)

    def cluster_id(self) -> str:
        return self.metadata.cluster_id

    def controller_id(self) -> int:
        return self.metadata.controller_id

    def validate_topic_name(self, name: str) -> None:
        check_topic_name(name)

    def topic_settings(self, name: str) -> list[tuple[str, str | None, int]]:
        return [(e.name, e.value, SOURCE_CODES[e.source]) for e in describe_topic(self.metadata.topic_config(name))]

    def topic_deletion_enabled(self) -> bool:
        return bool(self.config["delete.topic.enable"])

    def is_internal_topic(self, name: str) -> bool:
        return name in INTERNAL_TOPICS

    def delete_records(self, topic: str, index: int, offset: int) -> int:
        """DeleteRecords for one partition this broker leads: the new low watermark."""
        part = self.leader_replica(topic, index)
        offset = part.high_watermark if offset == -1 else offset
        if offset < 0 or offset > part.high_watermark:
            raise KafkaError(ErrorCode.offset_out_of_range,
                             f"Offset {offset} is past the high watermark {part.high_watermark}.")
        return part.log.delete_records_before(offset)

    def _partition_info(self, topic: str, index: int) -> PartitionInfo:
        info = self.metadata.topics.get(topic)
        if info is None or not 0 <= index < len(info.partitions):
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"{topic}-{index} does not exist.")
        return info.partitions[index]

    def elect_leader(self, topic: str, index: int, unclean: bool) -> None:
        self.controller.requested_election(topic, self._partition_info(topic, index), unclean)

    def reassign_partition(self, topic: str, index: int, target: list[int] | None,
                           allow_replication_factor_change: bool) -> None:
        self.controller.reassign(topic, self._partition_info(topic, index), target, allow_replication_factor_change)

    def log_dir_states(self) -> list[tuple[str, int, int, bool]] | None:
        dirs = self.log_dirs
        if dirs is None:
            return None
        return [(str(root), *dirs.space(root), root in dirs.offline) for root in dirs.roots]

    def replica_placements(self) -> list[tuple[str | None, str, int, int, int, bool]]:
        rows: list[tuple[str | None, str, int, int, int, bool]] = []
        for (topic, index), part in sorted(self.partitions.items()):
            root = str(part.log.directory.parent) if part.log.directory is not None else None
            rows.append((root, topic, index, part.log.size_bytes(), max(part.high_watermark - part.log_end_offset, 0),
                         False))
            move = self.log_dir_moves.get((topic, index))
            if move is not None:
                rows.append((str(move.destination), topic, index, move.size_bytes(), move.lag, True))
        return rows

    def controller_epoch(self) -> int:
        return self.metadata.controller_epoch

    def metadata_end_offset(self) -> int:
        return self.metadata.end_offset

    def quorum_voters(self) -> list[int]:
        return sorted(self.controller.registered)

    def departed_voter(self, node_id: int) -> tuple[int, int] | None:
        return self.controller.departed.get(node_id)

    def clock_ms(self) -> int:
        return self.clock.wall_ms()

    def int_setting(self, name: str) -> int:
        return int(self.config[name])

    def known_group_ids(self) -> set[str]:
        groups = {g.group_id for g in self.groups.list_groups()}
        groups |= {g.group_id for g in self.share_groups.list_groups()}
        return groups | set(self.metadata.group_configs)

    def _classic_group_type(self, group_id: str) -> str | None:
        """Whether the group coordinator knows ``group_id`` (a share group may not take it)."""
        return "consumer" if group_id in self.groups.groups else None

    # -- the share-group APIs' port (handlers.ports.SharePort, KIP-932) ---------------------------
    def share_group_heartbeat(self, group_id: str, member_id: str, member_epoch: int,
                              subscribed: tuple[str, ...] | None, rack_id: str | None, client_id: str,
                              client_host: str) -> tuple[ShareMember, bool, int]:
        hb = Heartbeat(member_id, member_epoch, subscribed, rack_id, client_id, client_host)
        return self.share_groups.heartbeat(group_id, hb)

    def describe_share_group(self, group_id: str) -> ShareGroup:
        return self.share_groups.describe(group_id)

    def share_group_start_offsets(self, group_id: str,
                                  wanted: dict[str, list[int]] | None) -> list[tuple[str, int, int, int]]:
        """DescribeShareGroupOffsets: the lag runs up to the high watermark of each partition's leader."""
        def high_watermark(topic: str, index: int) -> int | None:
            info = self.metadata.topics.get(topic)
            if info is None or not 0 <= index < len(info.partitions):
                return None
            part = self.peers.leader_replica(topic, info.partitions[index])
            return part.high_watermark if part is not None else None
        return self.share_groups.start_offsets(group_id, wanted, high_watermark)

    async def open_share_fetch(self, group_id: str, member_id: str, epoch: int, added: set[tuple[str, int]],
                               forgotten: set[tuple[str, int]], has_acks: bool, connection_id: int) -> ShareSession:
        return await self.share_partitions.fetch_session(group_id, member_id, epoch, added, forgotten, has_acks,
                                                         connection_id)

    def share_acknowledge_session(self, group_id: str, member_id: str, epoch: int) -> ShareSession:
        return self.share_partitions.acknowledge_session(group_id, member_id, epoch)

    async def acknowledge_share_records(self, group_id: str, member_id: str,
                                        acks: dict[tuple[str, int], list[tuple[int, int, tuple[int, ...]]]]
                                        ) -> dict[tuple[str, int], KafkaError | None]:
        batches = {tp: [AckBatch(*b) for b in bs] for tp, bs in acks.items()}
        return await self.share_partitions.acknowledge(group_id, member_id, batches)

    async def acquire_share_records(self, session: object, max_records: int, max_bytes: int,
                                    max_wait_ms: int, record_limit: bool) -> dict[tuple[str, int], Fetched]:
        return await self.share_partitions.fetch(self._share_session(session), max_records, max_bytes, max_wait_ms,
                                                 record_limit)

    async def close_share_session(self, session: object) -> None:
        await self.share_partitions.close(self._share_session(session))

    @staticmethod
    def _share_session(session: object) -> ShareSession:
        """The session ``open_share_fetch`` gave: the port types it by a view (the handlers only hand it back)."""
        assert isinstance(session, ShareSession), session
        return session

    def share_lock_duration_ms(self, group_id: str) -> int:
        return int(self.share_partitions.group_config(group_id)["share.record.lock.duration.ms"])

    def topic_name_of(self, topic_id: str) -> str | None:
        info = self.metadata.topic_by_id(topic_id)
        return info.name if info is not None else None

    def topic_id_of(self, topic: str) -> str | None:
        info = self.metadata.topics.get(topic)
        return info.topic_id if info is not None else None

    def partition_leader(self, topic: str, index: int) -> tuple[int, int] | None:
        info = self.metadata.topics.get(topic)
        if info is None or not 0 <= index < len(info.partitions):
            return None
        part = info.partitions[index]
        return part.leader, part.leader_epoch

    def broker_address(self, node_id: int) -> tuple[str, int] | None:
        return self.metadata.brokers.get(node_id)

    # -- the ACL and SCRAM APIs' ports (handlers.ports.AclsPort, ScramPort): the cluster metadata's records --
    def acls(self) -> list[AclBinding]:
        return self.metadata.security.acls()

    def add_acl(self, acl: AclBinding) -> None:
        self.metadata.security.add_acl(acl)

    def remove_acl(self, acl: AclBinding) -> None:
        self.metadata.security.remove_acl(acl)

    def scram_credentials(self) -> dict[tuple[str, str], ScramCredential]:
        return self.metadata.security.credentials()

    def scram_credential(self, user: str, mechanism: str) -> ScramCredential | None:
        return self.metadata.security.credential(user, mechanism)

    def set_scram_credential(self, user: str, mechanism: str, credential: ScramCredential) -> None:
        self.metadata.security.set_credential(user, mechanism, credential)

    def remove_scram_credential(self, user: str, mechanism: str) -> None:
        self.metadata.security.remove_credential(user, mechanism)

    # -- the group APIs' ports (handlers.ports: CoordinatorsPort, GroupsPort, ConsumerGroupsPort) ----------
    def group_coordinator(self, group_id: str) -> int:
        return self.groups.coordinator_id(group_id)

    def transaction_coordinator(self, transactional_id: str) -> int:
        index = self.transactions.partition_of(transactional_id)
        return self.metadata.topics[TXN_TOPIC].partitions[index].leader

    def listener_address(self, node_id: int, listener: str | None) -> tuple[str, int] | None:
        if listener is None or listener not in self.metadata.listener_endpoints:
            return self.metadata.brokers.get(node_id)
        return self.metadata.listener_endpoints[listener].get(node_id) if node_id in self.metadata.brokers else None

    def is_share_group(self, group_id: str) -> bool:
        return self.share_groups.is_share_group(group_id)

    async def join_group(self, group_id: str, member_id: str, instance_id: str | None, client_id: str,
                         client_host: str, session_timeout_ms: int, rebalance_timeout_ms: int, protocol_type: str,
                         protocols: tuple[tuple[str, bytes], ...], require_known_member_id: bool) -> JoinResult:
        return await self.groups.join(group_id, JoinRequest(
            member_id=member_id, group_instance_id=instance_id, client_id=client_id, client_host=client_host,
            session_timeout_ms=session_timeout_ms, rebalance_timeout_ms=rebalance_timeout_ms,
            protocol_type=protocol_type, protocols=protocols, require_known_member_id=require_known_member_id))

    async def sync_group(self, group_id: str, member_id: str, instance_id: str | None, generation_id: int,
                         assignments: dict[str, bytes], protocol_type: str | None,
                         protocol_name: str | None) -> SyncResult:
        return await self.groups.sync(group_id, member_id, instance_id, generation_id, assignments, protocol_type,
                                      protocol_name)

    def heartbeat_group(self, group_id: str, member_id: str, instance_id: str | None, generation_id: int) -> None:
        self.groups.heartbeat(group_id, member_id, instance_id, generation_id)

    def leave_group(self, group_id: str, members: list[tuple[str, str | None]]) -> list[ErrorCode]:
        return self.groups.leave(group_id, members)

    def describe_group(self, group_id: str) -> Group | None:
        return self.groups.describe(group_id)

    def list_groups(self, states: set[str], types: set[str]) -> list[tuple[str, str, str, str]]:
        return [(g.group_id, g.protocol_type or "", str(g.state), g.group_type)
                for g in self.groups.list_groups(states, types)]

    def list_share_groups(self) -> list[tuple[str, str]]:
        return [(g.group_id, g.state) for g in self.share_groups.list_groups()]

    def delete_group(self, group_id: str) -> None:
        self.groups.delete_group(group_id)

    async def commit_offsets(self, group_id: str, member_id: str, instance_id: str | None,
                             generation_id_or_member_epoch: int, offsets: list[tuple[str, int, int, int, str]],
                             api_version: int) -> dict[tuple[str, int], ErrorCode]:
        stamp = self.clock.wall_ms()  # offset retention compares it with the coordinator's clock
        commits = [(t, p, CommittedOffset(offset, epoch, metadata, stamp)) for t, p, offset, epoch, metadata in offsets]
        return await self.groups.commit(group_id, member_id, instance_id, generation_id_or_member_epoch, commits,
                                        api_version)

    def fetch_offsets(self, group_id: str, partitions: list[tuple[str, int]] | None, require_stable: bool,
                      member_id: str | None, member_epoch: int
                      ) -> list[tuple[str, int, tuple[int, int, str] | None, ErrorCode]]:
        return [(t, p, None if c is None else (c.offset, c.leader_epoch, c.metadata), code) for t, p, c, code
                in self.groups.fetch(group_id, partitions, require_stable, member_id, member_epoch)]

    def delete_offsets(self, group_id: str, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], ErrorCode]:
        return self.groups.delete_offsets(group_id, partitions)

    def consumer_group_heartbeat(self, group_id: str, member_id: str, member_epoch: int, instance_id: str | None,
                                 rack_id: str | None, rebalance_timeout_ms: int,
                                 subscribed_topic_names: tuple[str, ...] | None, subscribed_topic_regex: str | None,
                                 server_assignor: str | None, owned: frozenset[tuple[str, int]] | None,
                                 client_id: str, client_host: str) -> HeartbeatResult:
        return self.groups.consumer_heartbeat(group_id, ConsumerHeartbeat(
            member_id=member_id, member_epoch=member_epoch, instance_id=instance_id, rack_id=rack_id,
            rebalance_timeout_ms=rebalance_timeout_ms, subscribed_topic_names=subscribed_topic_names,
            subscribed_topic_regex=subscribed_topic_regex, server_assignor=server_assignor, owned=owned,
            client_id=client_id, client_host=client_host))

    def describe_consumer_group(self, group_id: str) -> ConsumerGroup:
        return self.groups.consumer_describe(group_id)

    # -- what a teacher may look at ------------------------------------------------------
    def transaction_state(self, transactional_id: str) -> str | None:
        """The state name of a transactional id this broker coordinates, else None."""
        return self.transactions.state_of(transactional_id)

    # -- keeping the ISR honest ----------------------------------------------------------
    async def _watch_isr(self) -> None:
        while True:
            lag_max = self.config["replica.lag.time.max.ms"]
            await asyncio.sleep(min(max(lag_max / 4000, 0.05), 1.0))
            await self.check_isr(lag_max)

    async def check_isr(self, lag_max: int) -> None:
        """Ask the controller (``isr_channel``, AlterPartition) for each ISR change the lag rule wants."""
        now = now_ms()  # the replicas stamp fetches with the system clock (``clock.now_ms``), not the injected one
        for part in list(self.partitions.values()):
            if not part.is_leader:
                continue
            drop, add = isr_changes(part, lag_max, now)
            if not drop and not add:
                continue
            # the maximal ISR (KIP-497): the followers asked for count from now until the answer, or
            # until the metadata log shows what became of a request whose answer was lost
            if not part.pending_isr:
                part.pending_isr_epoch = part.info.partition_epoch
            part.pending_isr |= set(add)
            try:
                await self.isr_channel.alter_partition(part.topic, part.index, part.leader_epoch,
                                                       proposed_isr(part, drop, add))
            except KafkaError as e:
                if e.code in (ErrorCode.ineligible_replica, ErrorCode.invalid_request):
                    # judged against the partition as this leader knows it: nothing was committed
                    part.pending_isr = set()
                # else (fenced, a stale partition epoch, no controller): a newer state is committed or
                # on its way; it arrives by on_partition_change and ends the pending request
                log.info("ISR change of %s-%d refused: %s", part.topic, part.index, e.message)
            except OSError as e:  # maybe committed, maybe not: the metadata log will tell
                log.warning("ISR change of %s-%d not answered: %s", part.topic, part.index, e)
            else:
                part.pending_isr = set()  # the answer is the committed ISR, applied to part.info
            part.update_high_watermark()

    # -- housekeeping ---------------------------------------------------------
    async def _housekeeping(self) -> None:
        """Retention and compaction, every ``log.retention.check.interval.ms``."""
        while True:
            await asyncio.sleep(self.config["log.retention.check.interval.ms"] / 1000)
            self.run_log_cleaner()

    def run_log_cleaner(self) -> None:
        now = now_ms()  # segment and record times are the log's, on the system clock
        for part in list(self.partitions.values()):
            try:
                if part.config.deletes:
                    part.log.apply_retention(now)
                if part.config.compacted:
                    part.log.compact(now)
            except Exception:  # a cleaner bug must not take the broker down
                log.exception("log cleaner failed on %s-%d", part.topic, part.index)
