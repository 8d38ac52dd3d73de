"""One Kafka broker: its partition replicas, its coordinators, and request dispatch.

``handle_frame`` is the whole broker as seen from the network: request bytes in,
response bytes (or nothing, for ``acks=0``) out. The server module feeds it from
sockets; tests and the fuzzer can feed it directly. All state is owned by one asyncio
event loop, so nothing here takes a lock.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from pathlib import Path

from .config import BrokerConfig
from .errors import ErrorCode, KafkaError
from .faults import DropConnection, Faults
from .log import PartitionLog
from .controller import Controller
from .metadata import TopicInfo
from .partition import FollowerState, Partition, now_ms
from .protocol import codec
from .protocol.apis import BY_KEY, handler_for
from .protocol.context import RequestContext
from .replication import ReplicaFetcher, isr_changes

log = logging.getLogger("minikafka.broker")


class Broker:
    def __init__(self, node_id: int, config: BrokerConfig, controller: Controller,
                 data_dir: Path | None, host: str = "127.0.0.1", port: int = 0):
        self.node_id, self.config = node_id, config
        self.controller, self.metadata = controller, controller.metadata
        self.peers = controller.brokers  # live brokers by id (this one included once started)
        self.data_dir = data_dir
        self.host, self.port = host, port
        self.partitions: dict[tuple[str, int], Partition] = {}
        self.faults = Faults()
        self.started_ms = now_ms()
        self._tasks: list[asyncio.Task] = []
        self.groups = None  # the group coordinator, attached by start_background()
        self.transactions = None  # the transaction coordinator, attached by start_background()
        self.fetcher = ReplicaFetcher(self)
        self.leadership_listeners: list = []  # called with (partition) when this broker becomes its leader

    # -- lifecycle ------------------------------------------------------------
    def load(self) -> None:
        """Open the local replicas of every known topic (recovering their logs)."""
        for topic in self.metadata.topics.values():
            self.open_replicas(topic)

    def start_background(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks += [loop.create_task(self._housekeeping()), loop.create_task(self.fetcher.run()),
                        loop.create_task(self._watch_isr())]
        from .groups.coordinator import attach as attach_groups
        from .transactions.coordinator import attach as attach_transactions
        attach_groups(self)
        attach_transactions(self)

    async def close(self, flush: bool = True) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)  # let them finish cancelling
        self._tasks.clear()
        for p in self.partitions.values():
            p.notify()
            if flush:
                p.log.flush()
            p.log.close()
        self.partitions.clear()

    # -- replicas -------------------------------------------------------------
    def open_replicas(self, topic: TopicInfo) -> None:
        config = self.metadata.topic_config(topic.name)
        for info in topic.partitions:
            if self.node_id in info.replicas and (topic.name, info.index) not in self.partitions:
                directory = self.data_dir / f"{topic.name}-{info.index}" if self.data_dir else None
                plog = PartitionLog(directory, config, topic=topic.name, partition=info.index)
                part = Partition(topic.name, info, plog, config, self.node_id)
                self.partitions[(topic.name, info.index)] = part
                if part.is_leader:
                    self._became_leader(part)

    def drop_replicas(self, topic: str) -> None:
        for key in [k for k in self.partitions if k[0] == topic]:
            part = self.partitions.pop(key)
            part.notify()
            part.log.close()
            if self.data_dir:
                shutil.rmtree(self.data_dir / f"{key[0]}-{key[1]}", ignore_errors=True)

    def partition(self, topic: str, index: int) -> Partition:
        """The local leader replica, or the Kafka error a client should see."""
        info = self.metadata.topics.get(topic)
        if info is None or not 0 <= index < len(info.partitions):
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"{topic}-{index} does not exist.")
        part = self.partitions.get((topic, index))
        if part is None or not part.is_leader:
            raise KafkaError(ErrorCode.not_leader_or_follower, f"Broker {self.node_id} does not lead {topic}-{index}.")
        return part

    def transaction_coordinator_for(self, transactional_id: str):
        """The coordinator (on whichever live broker) that owns a transactional id, if any."""
        from .transactions.coordinator import TOPIC, partition_for_key
        topic = self.metadata.topics.get(TOPIC)
        if topic is None:
            return None
        leader = topic.partitions[partition_for_key(transactional_id, len(topic.partitions))].leader
        peer = self.peers.get(leader)
        return peer.transactions if peer else None

    def on_partition_change(self, topic: str, info) -> None:
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

    def _became_leader(self, part: Partition) -> None:
        part.epochs.assign(part.leader_epoch, part.log_end_offset)
        part.followers = {b: FollowerState(0) for b in part.info.isr if b != self.node_id}
        for listener in self.leadership_listeners:
            listener(part)

    # -- replication -------------------------------------------------------------------
    def check_min_insync(self, part: Partition) -> None:
        """acks=all is refused when the ISR is smaller than min.insync.replicas."""
        isr = self.metadata.topics[part.topic].partitions[part.index].isr
        need = part.config["min.insync.replicas"]
        if len(isr) < need:
            raise KafkaError(ErrorCode.not_enough_replicas,
                             f"{part.topic}-{part.index} has {len(isr)} in-sync replica(s); min.insync.replicas={need}.")

    async def wait_for_replicas(self, part: Partition, offset: int, timeout) -> None:
        """Wait until the high watermark reaches ``offset`` (every ISR member has it).

        As in Kafka, the ISR is checked again when the write completes: if it shrank below
        ``min.insync.replicas`` meanwhile, the write is on the leader but not acknowledged.
        """
        deadline = asyncio.get_running_loop().time() + timeout.total_seconds()
        while part.high_watermark < offset:
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise KafkaError(ErrorCode.request_timed_out,
                                 f"{part.topic}-{part.index}: the in-sync replicas did not copy the write in time.")
            try:
                await asyncio.wait_for(part.waiter(), remaining)
            except asyncio.TimeoutError:
                pass
        need = part.config["min.insync.replicas"]
        if len(part.info.isr) < need:
            raise KafkaError(ErrorCode.not_enough_replicas_after_append,
                             f"{part.topic}-{part.index}: the ISR shrank to {len(part.info.isr)} before the write "
                             f"completed; min.insync.replicas={need}.")

    # -- topics ---------------------------------------------------------------
    def create_topic(self, name: str, partitions: int = -1, replication_factor: int = -1,
                     configs: dict | None = None, assignment: dict | None = None,
                     validate_only: bool = False) -> TopicInfo:
        topic = self.metadata.plan_topic(name, partitions, replication_factor, configs, assignment)
        if not validate_only:
            self.metadata.add_topic(topic)
            for peer in self.peers.values():
                peer.open_replicas(topic)
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
        for peer in self.peers.values():
            peer.drop_replicas(name)

    def add_partitions(self, name: str, total: int, validate_only: bool = False) -> None:
        topic = self.metadata.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"Topic {name!r} does not exist.")
        have = len(topic.partitions)
        if total <= have:
            raise KafkaError(ErrorCode.invalid_partitions,
                             f"Topic {name!r} has {have} partitions; the new count must be larger, not {total}.")
        rf = len(topic.partitions[0].replicas)
        extra = self.metadata.place_replicas(total - have, rf, first_index=have)
        if not validate_only:
            topic.partitions.extend(extra)
            self.metadata.save()
            for peer in self.peers.values():
                peer.open_replicas(topic)

    # -- requests -------------------------------------------------------------
    async def handle_frame(self, frame: bytes, client_host: str = "127.0.0.1", connection_id: int = 0) -> bytes | None:
        """Answer one request frame (without its size prefix).

        Raises codec.MalformedRequest when the connection must be closed: unknown API,
        unsupported version (other than ApiVersions), undecodable bytes.
        """
        api_key, version, correlation_id = codec.peek_api(frame)
        api = BY_KEY.get(api_key)
        if api is None:
            raise codec.MalformedRequest(f"unknown API key {api_key}")
        if not api.supports(version):
            if api_key == codec.API_VERSIONS_KEY:
                from .handlers.api_versions import unsupported_version_answer
                return unsupported_version_answer(correlation_id)
            raise codec.MalformedRequest(f"{api.name} v{version} is not supported (range {api.min_version}-{api.max_version})")
        header, request = codec.decode_request(frame, api_key, version)
        ctx = RequestContext(self, header, client_host, connection_id)
        response = await handler_for(api_key)(ctx, request)
        if self.faults.latency_ms:
            await asyncio.sleep(self.faults.latency_ms / 1000)
        if self.faults.take_drop(api_key):
            raise DropConnection(f"fault injection: dropped the {api.name} response")
        if response is None:
            return None
        return codec.encode_response(correlation_id, response)

    # -- keeping the ISR honest ----------------------------------------------------------
    async def _watch_isr(self) -> None:
        while True:
            lag_max = self.config["replica.lag.time.max.ms"]
            await asyncio.sleep(min(max(lag_max / 4000, 0.05), 1.0))
            self.check_isr(lag_max)

    def check_isr(self, lag_max: int) -> None:
        now = now_ms()
        for part in list(self.partitions.values()):
            if not part.is_leader:
                continue
            drop, add = isr_changes(part, lag_max, now)
            for broker_id in drop:
                self.controller.shrink_isr(part.topic, part.info, broker_id)
            for broker_id in add:
                self.controller.expand_isr(part.topic, part.info, broker_id)

    # -- housekeeping ---------------------------------------------------------
    async def _housekeeping(self) -> None:
        """Retention and compaction, every ``log.retention.check.interval.ms``."""
        while True:
            await asyncio.sleep(self.config["log.retention.check.interval.ms"] / 1000)
            self.run_log_cleaner()

    def run_log_cleaner(self) -> None:
        now = now_ms()
        for part in list(self.partitions.values()):
            try:
                if part.config.deletes:
                    part.log.apply_retention(now)
                if part.config.compacted:
                    part.log.compact(now)
            except Exception:  # a cleaner bug must not take the broker down
                log.exception("log cleaner failed on %s-%d", part.topic, part.index)
