"""Where a follower's fetches go (``fetcher.FetchSource``): a method call, or a Fetch over TCP.

``InProcessSource`` is the embedded cluster's default: the brokers share one event loop,
so a fetch is a call on the leader broker's replica (through ``Peers``), and waiting for
data is waiting on the leader's partition. It is what the notebooks run: no encoding,
no socket. ``NetworkSource`` sends what Kafka's replica fetcher sends: one Fetch request
per leader for every partition this broker follows there, with ``ReplicaState.ReplicaId``
set to this broker's id (KIP-903), on one persistent connection to the leader's address
in the cluster metadata (or to the address given for that broker in ``peers``: Kafka's
inter-broker listener, a proxy of its own when the cluster's links are proxied), sized and
timed by Kafka's ``replica.fetch.*`` and ``replica.socket.timeout.ms`` settings. Either way
the leader answers with the same rules (``fetcher.serve_follower``), reached by the Fetch
handler over the network.
"""

from __future__ import annotations

import asyncio
import datetime
import uuid
from collections.abc import Mapping
from typing import Any

from kio.schema.fetch.v18.request import FetchPartition, FetchRequest, FetchTopic, ReplicaState
from kio.schema.types import BrokerId
from kio.static.primitive import i8, i32, i32Timedelta, i64

from ..clock import now_ms
from ..config import BrokerConfig
from ..errors import ErrorCode, KafkaError
from ..protocol.channel import PeerChannel
from ..metadata import ClusterMetadata
from .fetcher import PartitionAnswer, PartitionFetch, leader_throttled, serve_follower
from .partition import Partition
from .peers import Peers

TRANSPORTS = ("in-process", "network")


class InProcessSource:
    """Fetches as method calls on the leader broker, which shares this process and its loop."""

    def __init__(self, peers: Peers, config: BrokerConfig):
        self.peers, self.config = peers, config

    async def fetch(self, follower_id: int, leader_id: int, wanted: list[PartitionFetch]) -> list[PartitionAnswer]:
        answers, leaders = self._read(follower_id, leader_id, wanted)
        if any(a.records or a.diverging or a.error != ErrorCode.none for a in answers) or not leaders:
            return answers
        waiters = [part.waiter() for part in leaders]  # a long poll: until the leader has something new
        _, pending = await asyncio.wait(waiters, timeout=self.config["replica.fetch.wait.max.ms"] / 1000,
                                        return_when=asyncio.FIRST_COMPLETED)
        for fut in pending:
            fut.cancel()
        return self._read(follower_id, leader_id, wanted)[0]

    def _read(self, follower_id: int, leader_id: int,
              wanted: list[PartitionFetch]) -> tuple[list[PartitionAnswer], list[Partition]]:
        host = self.peers.get(leader_id)
        budget, now = self.config["replica.fetch.response.max.bytes"], now_ms()
        answers, leaders = [], []
        for w in wanted:
            part = host.local_replica(w.topic, w.index) if host is not None else None
            if part is None:
                answers.append(PartitionAnswer(ErrorCode.not_leader_or_follower))
                continue
            leaders.append(part)
            assert host is not None
            throttled = leader_throttled(part, follower_id)
            limit = min(w.max_bytes, max(budget, 0), host.leader_quota.allowance(now) if throttled else w.max_bytes)
            try:
                read = serve_follower(part, follower_id, w.current_leader_epoch, w.fetch_offset,
                                      w.last_fetched_epoch, limit) if limit > 0 else None
            except KafkaError as e:
                answers.append(PartitionAnswer(e.code, b"", part.high_watermark, part.log_start_offset))
                continue
            if read is None:
                answers.append(PartitionAnswer(ErrorCode.none, b"", part.high_watermark, part.log_start_offset))
                continue
            if throttled:
                host.leader_quota.record(len(read.records), now)
            budget -= len(read.records)
            answers.append(PartitionAnswer.of(read))
        return answers, leaders

    def close(self) -> None:
        pass


def broker_address(broker_id: int, peers: Mapping[int, tuple[str, int]],
                   metadata: ClusterMetadata) -> tuple[str, int]:
    """Where this broker reaches another: the address ``peers`` gives for it (the inter-broker
    route), else the one it registered for clients (raises ConnectionError when it has none)."""
    if broker_id in peers:
        return peers[broker_id]
    address = metadata.brokers.get(broker_id)
    if address is None:
        raise ConnectionError(f"broker {broker_id} has no address in the cluster metadata")
    return address


class NetworkSource:
    """Fetches as Fetch requests (v18) to the leader's listener, one connection per leader."""

    def __init__(self, metadata: ClusterMetadata, config: BrokerConfig,
                 peers: Mapping[int, tuple[str, int]] | None = None):
        self.metadata, self.config, self.peers = metadata, config, dict(peers or {})
        self._channels: dict[int, tuple[tuple[str, int], PeerChannel]] = {}

    def _channel(self, leader_id: int) -> PeerChannel:
        address = broker_address(leader_id, self.peers, self.metadata)
        known = self._channels.get(leader_id)
        if known is not None and known[0] == address:
            return known[1]
        if known is not None:
            known[1].close()
        channel = PeerChannel(address[0], address[1], self.config["replica.socket.timeout.ms"])
        self._channels[leader_id] = (address, channel)
        return channel

    def request(self, follower_id: int, wanted: list[PartitionFetch]) -> FetchRequest:
        """The Fetch a follower sends: by topic id, with its replica id and each partition's epochs."""
        topics: dict[str, list[FetchPartition]] = {}
        for w in wanted:
            topics.setdefault(w.topic, []).append(FetchPartition(
                partition=i32(w.index), current_leader_epoch=i32(w.current_leader_epoch),
                fetch_offset=i64(w.fetch_offset), last_fetched_epoch=i32(w.last_fetched_epoch),
                partition_max_bytes=i32(w.max_bytes)))
        return FetchRequest(
            replica_state=ReplicaState(replica_id=BrokerId(follower_id)),
            max_wait=i32Timedelta.parse(datetime.timedelta(milliseconds=self.config["replica.fetch.wait.max.ms"])),
            min_bytes=i32(self.config["replica.fetch.min.bytes"]),
            max_bytes=i32(self.config["replica.fetch.response.max.bytes"]), isolation_level=i8(0),
            topics=tuple(FetchTopic(topic_id=self._topic_id(name), partitions=tuple(ps))
                         for name, ps in topics.items()),
            forgotten_topics_data=())

    def _topic_id(self, name: str) -> uuid.UUID:
        topic = self.metadata.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"Topic {name!r} does not exist.")
        return uuid.UUID(topic.topic_id)

    async def fetch(self, follower_id: int, leader_id: int, wanted: list[PartitionFetch]) -> list[PartitionAnswer]:
        try:
            request = self.request(follower_id, wanted)
        except KafkaError as e:  # a topic deleted meanwhile: the fetcher drops it with its replica
            return [PartitionAnswer(e.code) for _ in wanted]
        response = await self._channel(leader_id).call(request)
        if response.error_code != ErrorCode.none:
            return [PartitionAnswer(ErrorCode(response.error_code)) for _ in wanted]
        found: dict[tuple[uuid.UUID | None, int], Any] = {
            (t.topic_id, int(p.partition_index)): p for t in response.responses for p in t.partitions}
        return [self._answer(found.get((self._topic_id(w.topic), w.index))) for w in wanted]

    @staticmethod
    def _answer(data: Any) -> PartitionAnswer:
        if data is None:
            return PartitionAnswer(ErrorCode.not_leader_or_follower)
        diverging = data.diverging_epoch
        return PartitionAnswer(ErrorCode(data.error_code), bytes(data.records or b""), int(data.high_watermark),
                               int(data.log_start_offset),
                               (int(diverging.epoch), int(diverging.end_offset)) if diverging.epoch >= 0
                               or diverging.end_offset >= 0 else None)

    def close(self) -> None:
        for _, channel in self._channels.values():
            channel.close()
        self._channels.clear()
