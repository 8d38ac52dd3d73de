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
from .faults import Faults
from .log import PartitionLog
from .metadata import ClusterMetadata, TopicInfo
from .partition import Partition, now_ms
from .protocol import codec
from .protocol.apis import BY_KEY, handler_for
from .protocol.context import RequestContext

log = logging.getLogger("minikafka.broker")

API_VERSIONS_KEY = 18


class Broker:
    def __init__(self, node_id: int, config: BrokerConfig, metadata: ClusterMetadata,
                 data_dir: Path | None, host: str = "127.0.0.1", port: int = 0):
        self.node_id, self.config, self.metadata = node_id, config, metadata
        self.data_dir = data_dir
        self.host, self.port = host, port
        self.partitions: dict[tuple[str, int], Partition] = {}
        self.faults = Faults()
        self.started_ms = now_ms()
        self._tasks: list[asyncio.Task] = []
        self.groups = None  # the group coordinator, attached by start()
        self.transactions = None  # the transaction coordinator, attached by start()

    # -- lifecycle ------------------------------------------------------------
    def load(self) -> None:
        """Open the local replicas of every known topic (recovering their logs)."""
        for topic in self.metadata.topics.values():
            self.open_replicas(topic)

    def start_background(self) -> None:
        self._tasks.append(asyncio.get_running_loop().create_task(self._housekeeping()))
        from .groups.coordinator import attach as attach_groups  # noqa: PLC0415 (optional while groups are built)
        attach_groups(self)

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for p in self.partitions.values():
            p.notify()
            p.log.close()
        self.partitions.clear()

    # -- replicas -------------------------------------------------------------
    def open_replicas(self, topic: TopicInfo) -> None:
        config = self.metadata.topic_config(topic.name)
        for p in topic.partitions:
            if self.node_id in p.replicas and (topic.name, p.index) not in self.partitions:
                directory = self.data_dir / f"{topic.name}-{p.index}" if self.data_dir else None
                plog = PartitionLog(directory, config, topic=topic.name, partition=p.index)
                part = Partition(topic.name, p.index, plog, config)
                part.leader_epoch = p.leader_epoch
                self.partitions[(topic.name, p.index)] = part

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
        if info.partitions[index].leader != self.node_id or (topic, index) not in self.partitions:
            raise KafkaError(ErrorCode.not_leader_or_follower, f"Broker {self.node_id} does not lead {topic}-{index}.")
        return self.partitions[(topic, index)]

    # -- replication (a single broker is its own ISR) -------------------------------
    def check_min_insync(self, part: Partition) -> None:
        """acks=all is refused when the ISR is smaller than min.insync.replicas."""
        isr = self.metadata.topics[part.topic].partitions[part.index].isr
        need = part.config["min.insync.replicas"]
        if len(isr) < need:
            raise KafkaError(ErrorCode.not_enough_replicas,
                             f"{part.topic}-{part.index} has {len(isr)} in-sync replica(s); min.insync.replicas={need}.")

    async def wait_for_replicas(self, part: Partition, offset: int, timeout) -> None:
        """Wait until the high watermark reaches ``offset`` (every ISR member has it)."""
        deadline = asyncio.get_running_loop().time() + timeout.total_seconds()
        while part.high_watermark < offset:
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise KafkaError(ErrorCode.not_enough_replicas_after_append)
            try:
                await asyncio.wait_for(part.waiter(), remaining)
            except asyncio.TimeoutError:
                pass

    def replica_for_follower(self, topic: str, index: int) -> Partition:
        raise KafkaError(ErrorCode.not_leader_or_follower, "Replica fetches need a multi-broker cluster.")

    def follower_read(self, part: Partition, replica_id: int, offset: int, max_bytes: int) -> bytes:
        raise KafkaError(ErrorCode.not_leader_or_follower)

    # -- topics ---------------------------------------------------------------
    def create_topic(self, name: str, partitions: int = -1, replication_factor: int = -1,
                     configs: dict | None = None, assignment: dict | None = None,
                     validate_only: bool = False) -> TopicInfo:
        topic = self.metadata.plan_topic(name, partitions, replication_factor, configs, assignment)
        if not validate_only:
            self.metadata.add_topic(topic)
            self.open_replicas(topic)
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
        self.drop_replicas(name)

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
            self.open_replicas(topic)

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
            if api_key == API_VERSIONS_KEY:
                from .handlers.api_versions import unsupported_version_answer
                return unsupported_version_answer(correlation_id)
            raise codec.MalformedRequest(f"{api.name} v{version} is not supported (range {api.min_version}-{api.max_version})")
        header, request = codec.decode_request(frame, api_key, version)
        ctx = RequestContext(self, header, client_host, connection_id)
        response = await handler_for(api_key)(ctx, request)
        if self.faults.latency_ms:
            await asyncio.sleep(self.faults.latency_ms / 1000)
        if response is None or self.faults.take_drop(api_key):
            return None
        return codec.encode_response(correlation_id, response)

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
