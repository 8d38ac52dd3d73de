"""One broker as its own process: the ``Broker`` behind a listener, registered with the controller quorum.

The broker's life, as KIP-631 tells it:

1. it starts fenced, registers with the active controller (BrokerRegistration: its id, a new
   incarnation id for this start, its listener and rack) and gets a broker epoch;
2. it follows the metadata log (``observer``) and heartbeats every
   ``broker.heartbeat.interval.ms`` (2000, Kafka's default) with the offset it has applied;
   the controller unfences it, and fences it again if the heartbeats stop for
   ``broker.session.timeout.ms``. A heartbeat answered STALE_BROKER_EPOCH or
   BROKER_ID_NOT_REGISTERED (a controller that lost it) makes it register again;
3. on SIGTERM it shuts down under control: it heartbeats with ``want_shut_down`` until the
   controller answers ``should_shut_down`` (its leaderships moved), then stops, flushes its logs
   and leaves the clean-shutdown marker, so the next start does not check every segment.

Requests that change metadata (CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders and
the others of ``FORWARDED``) go to the active controller as they came, and its answer goes
back to the client, when the controller serves that API (its ApiVersions); otherwise this
broker answers them itself, as the embedded cluster does. Producer ids come in blocks from
the controller (AllocateProducerIds) when it hands them out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..broker import INTERNAL_REPLICATION_FACTOR, Broker
from ..config import BrokerConfig
from ..controller import Controller
from ..errors import ErrorCode, KafkaError
from ..handlers.dispatch import RequestDispatcher
from ..kraft.brokers import BrokerRegistry
from ..kraft.image import MetadataDelta, MetadataImage
from ..metadata import ClusterMetadata, TopicInfo
from ..protocol import codec
from ..protocol.apis import BY_KEY
from ..replica.peers import Peers
from ..replica.sources import NetworkSource
from ..transactions.channel import InProcessTxnPeers
from ..transactions.network import NetworkTxnPeers
from ..server import Listener
from .observer import MetadataObserver
from .quorum_client import NoController, QuorumClient
from .remote import CREATE_TOPICS, QuorumIsrChannel, create_topic_request, update_in_place

log = logging.getLogger("minikafka.brokerproc")

BROKER_REGISTRATION, BROKER_HEARTBEAT, ALLOCATE_PRODUCER_IDS = 62, 63, 67
HEARTBEAT_INTERVAL_MS = 2000  # broker.heartbeat.interval.ms
CONTROLLED_SHUTDOWN_MS = 30_000
# How long a forwarded request may look for an active controller: long enough for an election
# (a silent leader is noticed after controller.quorum.fetch.timeout.ms, then a vote), shorter
# than the clients' own request timeouts (30 s)
FORWARD_TIMEOUT_MS = 15_000  # how long a stopping broker waits for the controller's go-ahead
# What changes metadata: forwarded to the active controller when it serves the API (Kafka 4 forwards them all).
FORWARDED = frozenset({
    19,  # CreateTopics
    20,  # DeleteTopics
    37,  # CreatePartitions
    43,  # ElectLeaders
    45,  # AlterPartitionReassignments
    30, 31,  # CreateAcls, DeleteAcls
    33, 44,  # AlterConfigs, IncrementalAlterConfigs
    51,  # AlterUserScramCredentials
    55,  # DescribeQuorum: the quorum's own answer (voters, observers, lag), not the embedded cluster's picture
})


@dataclass(frozen=True)
class BrokerSettings:
    node_id: int
    host: str
    port: int
    controllers: dict[int, tuple[str, int]]
    log_dir: Path
    cluster_id: str = "minikafka-kraft"
    config: dict[str, str] = field(default_factory=dict)
    heartbeat_interval_ms: int = HEARTBEAT_INTERVAL_MS
    request_timeout_ms: int = 2000
    advertised: tuple[str, int] | None = None  # the address clients are told (a proxy's); None: where it listens
    # broker id -> where this broker reaches it (Kafka's inter-broker listener; a proxy of its own when the
    # cluster's links are proxied); a broker not named here is reached at the address it registered
    peers: dict[int, tuple[str, int]] = field(default_factory=dict)


class BrokerMetadata(ClusterMetadata):
    """The broker's own copy of the cluster metadata, fed by the metadata log; producer ids come
    from the controller's blocks when it hands them out (``blocks``), else from this copy."""

    def __init__(self, config: BrokerConfig):
        super().__init__(config, None)
        self.blocks: list[tuple[int, int]] = []  # (next id, end) of the blocks the controller gave
        self.from_controller = False  # the controller allocates producer ids (AllocateProducerIds)
        self.wanted = asyncio.Event()  # set when the blocks run low

    def remaining_ids(self) -> int:
        return sum(end - start for start, end in self.blocks)

    def next_producer_id(self) -> int:
        if not self.from_controller:
            return super().next_producer_id()
        while self.blocks and self.blocks[0][0] >= self.blocks[0][1]:
            self.blocks.pop(0)
        if self.remaining_ids() < 100:
            self.wanted.set()
        if not self.blocks:
            raise KafkaError(ErrorCode.coordinator_load_in_progress,
                             "This broker is waiting for a block of producer ids from the controller.")
        start, end = self.blocks[0]
        self.blocks[0] = (start + 1, end)
        return start


class ProcessBroker(Broker):
    """A ``Broker`` whose own topic creations (``__consumer_offsets`` on a group's first need, a topic
    auto-created by Metadata) go to the active controller as CreateTopics, once it serves them:
    the caller hears LEADER_NOT_AVAILABLE (retriable) and the topic arrives by the metadata log."""

    create_remotely: Callable[[str, int, int, dict[str, object]], None] | None = None

    def create_topic(self, name: str, partitions: int = -1, replication_factor: int = -1,
                     configs: dict | None = None, assignment: dict | None = None,
                     validate_only: bool = False) -> TopicInfo:
        if self.create_remotely is None or validate_only or assignment:
            return super().create_topic(name, partitions, replication_factor, configs, assignment, validate_only)
        self.create_remotely(name, partitions, replication_factor, dict(configs or {}))
        raise KafkaError(ErrorCode.leader_not_available, f"Topic {name!r} is being created by the controller.")

    def create_internal_topic(self, name: str, partitions: int, configs: dict[str, object]) -> None:
        if name in self.metadata.topics:
            return
        wanted = self.config[INTERNAL_REPLICATION_FACTOR[name]] if name in INTERNAL_REPLICATION_FACTOR else 3
        live = max(1, len(self.metadata.brokers))
        if self.create_remotely is None:
            super().create_internal_topic(name, partitions, configs)
        else:  # the coordinator answers COORDINATOR_NOT_AVAILABLE until the topic arrives
            self.create_remotely(name, partitions, max(1, min(wanted, live)), dict(configs))


class BrokerProcess:
    def __init__(self, settings: BrokerSettings):
        self.settings = s = settings
        config = dict(s.config)
        self.config = BrokerConfig(config)
        self.metadata = BrokerMetadata(self.config)
        self.metadata.cluster_id = s.cluster_id
        self.hosts: dict[int, Broker] = {}  # this broker alone: the others are reached over TCP
        self.peers = Peers(self.hosts)
        self.controller = Controller(self.metadata, self.peers)
        s.log_dir.mkdir(parents=True, exist_ok=True)
        self.quorum = QuorumClient(s.controllers, s.request_timeout_ms)
        self.broker_epoch = -1
        isr_channel = QuorumIsrChannel(s.node_id, self.quorum, self.metadata, lambda: self.broker_epoch)
        broker_config = self.metadata.broker_config(s.node_id)
        # Fetch, WriteTxnMarkers and KIP-890's AddPartitionsToTxn go to the other brokers over TCP
        txn_peers = NetworkTxnPeers(s.node_id, InProcessTxnPeers(self.hosts), self.metadata, broker_config, s.peers)
        self.broker = ProcessBroker(s.node_id, broker_config, self.controller, self.peers, [s.log_dir], isr_channel,
                                    fetch_source=NetworkSource(self.metadata, broker_config, s.peers),
                                    txn_peers=txn_peers)
        self.dispatcher = RequestDispatcher(self.broker)
        self.listener = Listener(self.handle_frame, s.host, s.port,
                                 idle_ms=self.config["connections.max.idle.ms"])
        self.image = MetadataImage(BrokerRegistry(), self.metadata, on_change=self._on_delta)
        self.observer = MetadataObserver(s.node_id, self.quorum, s.cluster_id, self.image,
                                         on_snapshot=self._on_snapshot)
        self._creating: set[str] = set()  # topics this broker asked the controller to create
        self.incarnation_id = uuid.uuid4()
        self.fenced = True
        self.stopping = asyncio.Event()
        self.shutting_down = False  # controlled shutdown under way: heartbeats say want_shut_down
        self.shutdown_granted = asyncio.Event()
        self._wake = asyncio.Event()  # cuts a heartbeat interval short
        self.closing = False  # shutdown() is stopping the background loops
        self._tasks: list[asyncio.Task] = []

    # -- requests ---------------------------------------------------------------------------
    async def handle_frame(self, frame: bytes, client_host: str, connection_id: int, *session: Any) -> bytes | None:
        """The dispatcher's answer, or the active controller's for a request that changes metadata."""
        api_key, version, _ = codec.peek_api(frame)
        api = BY_KEY.get(api_key)
        if api_key not in FORWARDED or api is None or not api.supports(version):
            return await self.dispatcher.handle_frame(frame, client_host, connection_id, *session)
        codec.decode_request(frame, api_key, version)  # a malformed frame closes this connection, here, as
        # any other request's would: the controller never sees it (nor is asked again and again for 15 s)
        # Never answered here: a change made on this broker's copy of the metadata alone would leave
        # the brokers disagreeing. No active controller: REQUEST_TIMED_OUT, as a Kafka broker's
        # forwarding answers; an API the quorum does not keep yet: INVALID_REQUEST, and a log line.
        try:
            if await self.quorum.serves_within(api_key, version, FORWARD_TIMEOUT_MS):
                return await self.quorum.forward(frame, FORWARD_TIMEOUT_MS)
            log.warning("broker %d: the controller quorum does not serve API %d v%d; refusing it (broker "
                        "processes keep ACLs, SCRAM users and reassignments in no metadata log yet)",
                        self.settings.node_id, api_key, version)
            code = ErrorCode.invalid_request
        except NoController as e:
            log.warning("broker %d: %s", self.settings.node_id, e)
            code = ErrorCode.request_timed_out
        return await self.dispatcher.handle_frame(frame, client_host, connection_id, *session, refuse=code)

    # -- the loop ---------------------------------------------------------------------------
    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self.stopping.set)
        await self.start()
        await self.stopping.wait()
        await self.shutdown()

    async def start(self) -> None:
        s = self.settings
        await self.listener.start()
        self.broker.listeners_setting = (f"PLAINTEXT://{s.host}:{self.listener.port}", False)
        self.hosts[s.node_id] = self.broker
        self.broker.load()
        self.broker.start_background()
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self.observer.run()), loop.create_task(self._lifecycle()),
                       loop.create_task(self._producer_ids()), loop.create_task(self._capabilities())]
        log.info("broker %d listening on %s:%d, controllers %s, log dir %s", s.node_id, s.host, self.listener.port,
                 sorted(s.controllers), s.log_dir)

    async def shutdown(self) -> None:
        """Controlled shutdown (want_shut_down until the controller agrees), then a clean stop."""
        s = self.settings
        if self.broker_epoch >= 0:
            self.shutting_down = True
            self._wake.set()
            try:
                await asyncio.wait_for(self.shutdown_granted.wait(), CONTROLLED_SHUTDOWN_MS / 1000)
            except TimeoutError:
                log.warning("broker %d: the controller did not agree to the shutdown in time; stopping",
                            s.node_id)
        self.observer.stopped = self.closing = True
        for task in self._tasks:
            task.cancel()
        # Python 3.11's wait_for may swallow a cancellation that races an answer: the loops also
        # read ``closing``, and none is waited for long
        _, stuck = await asyncio.wait(self._tasks, timeout=5) if self._tasks else (set(), set())
        for task in stuck:
            log.warning("broker %d: a task did not stop: %s", s.node_id, task.get_coro())
        await self.listener.stop()
        self.hosts.pop(s.node_id, None)
        await self.broker.close(flush=True)  # flushes the logs and leaves the clean-shutdown marker
        self.quorum.close()
        log.info("broker %d stopped cleanly", s.node_id)

    # -- the metadata log's news reaches the broker (as LeaderAndIsr and StopReplica did) -----
    def _on_delta(self, delta: MetadataDelta) -> None:
        self._sync(delta.topics | {topic for topic, _ in delta.partitions}, delta.removed_topics)
        self._name_controller()

    def _on_snapshot(self) -> None:
        """A snapshot replaced the metadata: every replica is checked against it."""
        held = {topic for topic, _ in self.broker.partitions}
        self._sync(set(self.metadata.topics), held - set(self.metadata.topics))
        self._name_controller()

    def _name_controller(self) -> None:
        """Metadata answers name a live broker as the controller (Kafka 4 does: clients send it
        CreateTopics and the like, which it forwards)."""
        live = sorted(self.metadata.brokers)
        self.metadata.controller_id = (self.settings.node_id if self.settings.node_id in live
                                       else live[0] if live else -1)

    def _sync(self, names: set[str], removed: set[str]) -> None:
        broker, node_id = self.broker, self.settings.node_id
        for name in removed:
            broker.drop_replicas(name)
        for name in sorted(names - removed):
            topic = self.metadata.topics.get(name)
            if topic is None:
                broker.drop_replicas(name)
                continue
            self._creating.discard(name)
            for i, info in enumerate(topic.partitions):
                part = broker.partitions.get((name, info.index))
                if part is None:
                    continue
                if node_id not in info.replicas:
                    broker.drop_replica(name, info.index)
                    continue
                if part.info is not info:  # the replica holds the metadata's object: change that one
                    update_in_place(part.info, info)
                    topic.partitions[i] = part.info
                broker.on_partition_change(name, part.info)
            broker.open_replicas(topic)

    def _create_remotely(self, name: str, partitions: int, replication_factor: int,
                         configs: dict[str, object]) -> None:
        if name in self._creating:
            return
        self._creating.add(name)

        async def create() -> None:
            try:
                answer = await self.quorum.call(create_topic_request(name, partitions, replication_factor, configs),
                                                timeout_ms=FORWARD_TIMEOUT_MS)
                code = answer.topics[0].error_code if answer.topics else answer.error_code
                if code not in (ErrorCode.none, ErrorCode.topic_already_exists):
                    log.warning("broker %d: creating %s answered %s", self.settings.node_id, name, ErrorCode(code).name)
                    self._creating.discard(name)
            except NoController as e:
                log.warning("broker %d: creating %s: %s", self.settings.node_id, name, e)
                self._creating.discard(name)

        task = asyncio.get_running_loop().create_task(create())
        self._tasks.append(task)

    async def _capabilities(self) -> None:
        """Once the active controller serves CreateTopics, this broker's own creations go there."""
        while self.broker.create_remotely is None and not self.closing:
            if await self.quorum.serves(CREATE_TOPICS, 7):
                self.broker.create_remotely = self._create_remotely
                return
            await asyncio.sleep(1)

    # -- registration and heartbeats --------------------------------------------------------
    async def _lifecycle(self) -> None:
        s = self.settings
        while not self.closing:
            try:
                if self.broker_epoch < 0:
                    await self._register()
                    continue
                answer = await self._heartbeat()
            except NoController as e:
                log.info("broker %d: %s", s.node_id, e)
                await asyncio.sleep(0.2)
                continue
            if answer.error_code in (ErrorCode.stale_broker_epoch, ErrorCode.broker_id_not_registered):
                log.warning("broker %d: heartbeat answered %s; registering again", s.node_id,
                            ErrorCode(answer.error_code).name)
                self.broker_epoch = -1
                continue
            if answer.error_code == ErrorCode.none:
                if self.fenced != answer.is_fenced:
                    log.info("broker %d is %s", s.node_id, "fenced" if answer.is_fenced else "unfenced")
                self.fenced = answer.is_fenced
                if self.shutting_down and answer.should_shut_down:
                    self.shutdown_granted.set()
                    return
            interval = s.heartbeat_interval_ms / 1000
            if self.shutting_down:
                interval = min(interval, 0.1)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), interval)
            self._wake.clear()

    async def _register(self) -> None:
        s = self.settings
        version = 1
        module = codec.request_module(BROKER_REGISTRATION, version)
        rack = self.config["broker.rack"] or None
        host, port = s.advertised or (s.host, self.listener.port)
        request = codec.make(
            codec.request_class(BROKER_REGISTRATION, version),
            broker_id=s.node_id,
            cluster_id=s.cluster_id,
            incarnation_id=self.incarnation_id,
            listeners=(codec.entity(module, "Listener", name="PLAINTEXT", host=host, port=port, security_protocol=0),),
            features=(),
            rack=rack,
        )
        answer = await self.quorum.call(request, timeout_ms=s.request_timeout_ms * 3)
        if answer.error_code != ErrorCode.none:
            log.warning("broker %d: registration answered %s", s.node_id, ErrorCode(answer.error_code).name)
            await asyncio.sleep(0.5)
            return
        self.broker_epoch = answer.broker_epoch
        log.info("broker %d registered (incarnation %s, broker epoch %d)", s.node_id, self.incarnation_id,
                 self.broker_epoch)

    async def _heartbeat(self) -> Any:
        request = codec.make(
            codec.request_class(BROKER_HEARTBEAT, 1),
            broker_id=self.settings.node_id,
            broker_epoch=self.broker_epoch,
            current_metadata_offset=self.observer.applied_offset,
            want_fence=False,
            want_shut_down=self.shutting_down,
            offline_log_dirs=(),
        )
        return await self.quorum.call(request)

    # -- producer ids -----------------------------------------------------------------------
    async def _producer_ids(self) -> None:
        """Keep a block of producer ids in hand, when the controller hands them out."""
        meta = self.metadata
        while not self.closing:
            if self.broker_epoch < 0:
                await asyncio.sleep(0.1)
                continue
            if not await self.quorum.serves(ALLOCATE_PRODUCER_IDS, 0):
                await asyncio.sleep(1)
                continue
            meta.from_controller = True
            if meta.remaining_ids() >= 100:
                meta.wanted.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(meta.wanted.wait(), 5)
                continue
            request = codec.make(codec.request_class(ALLOCATE_PRODUCER_IDS, 0), broker_id=self.settings.node_id,
                                 broker_epoch=self.broker_epoch)
            try:
                answer = await self.quorum.call(request)
            except NoController:
                await asyncio.sleep(0.2)
                continue
            if answer.error_code == ErrorCode.none and answer.producer_id_len > 0:
                meta.blocks.append((answer.producer_id_start, answer.producer_id_start + answer.producer_id_len))
            else:
                await asyncio.sleep(0.2)

