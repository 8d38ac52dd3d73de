"""Transactions between broker processes: WriteTxnMarkers and KIP-890's questions over TCP.

``NetworkTxnPeers`` is ``channel.TxnPeers`` for brokers that run as processes of their own
(``minikafka.brokerproc``). It sends what a Kafka broker sends, with this broker's own client
(``protocol.channel.PeerChannel``) to the address the cluster metadata gives for the other broker
(or the one ``peers`` gives for it, the inter-broker route, as the replica fetcher does):

- the transaction coordinator's WriteTxnMarkers (v1) to a partition's leader, one request for all
  the partitions that broker leads; an answer it does not get (a broker down, a timeout) counts as
  a marker not written, which the coordinator sends again at its next tick to whichever broker
  leads the partition by then, as Kafka's ``TransactionMarkerChannelManager`` re-enqueues it;
- a partition leader's AddPartitionsToTxn (v5, ``verify_only``) to the transactional id's
  coordinator before a transaction's first write to the partition, and the group coordinator's
  for TxnOffsetCommit, about the group's ``__consumer_offsets`` partition (KIP-890 part 1);
- with transaction protocol v2 the same request without ``verify_only``: add the partition.

Markers and questions use separate connections, so a question never waits behind a marker
whose leader is waiting for its in-sync replicas. A request for this broker itself is a method
call (``local``). A coordinator that cannot answer a produce's question leaves the write refused
with NOT_ENOUGH_REPLICAS, which every producer retries (Kafka answers older clients so).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ..config import BrokerConfig
from ..errors import ErrorCode, KafkaError
from ..groups import offsets
from ..metadata import ClusterMetadata
from ..protocol import codec
from ..protocol.channel import PeerChannel
from ..replica.sources import broker_address
from .channel import Marker, TopicPartition, TxnPeers, unreachable

log = logging.getLogger("minikafka.transactions")

WRITE_TXN_MARKERS, MARKERS_VERSION = 27, 1
ADD_PARTITIONS_TO_TXN, VERIFY_VERSION = 24, 5
MARKERS, QUESTIONS = "markers", "questions"
# what a coordinator answers while it cannot decide; a produce is told NOT_ENOUGH_REPLICAS instead (retriable)
NOT_DECIDED = frozenset({ErrorCode.coordinator_not_available, ErrorCode.not_coordinator,
                         ErrorCode.coordinator_load_in_progress, ErrorCode.concurrent_transactions})
NETWORK_ERRORS = (OSError, TimeoutError, ConnectionError, EOFError)


class NetworkTxnPeers:
    def __init__(self, node_id: int, local: TxnPeers, metadata: ClusterMetadata, config: BrokerConfig,
                 peers: Mapping[int, tuple[str, int]] | None = None):
        self.node_id, self.local, self.metadata, self.config = node_id, local, metadata, config
        self.peers = dict(peers or {})
        self._channels: dict[tuple[int, str], tuple[tuple[str, int], PeerChannel]] = {}

    def _channel(self, broker_id: int, kind: str) -> PeerChannel:
        address = broker_address(broker_id, self.peers, self.metadata)
        known = self._channels.get((broker_id, kind))
        if known is not None and known[0] == address:
            return known[1]
        if known is not None:
            known[1].close()
        channel = PeerChannel(address[0], address[1], self.config["replica.socket.timeout.ms"])
        self._channels[broker_id, kind] = (address, channel)
        return channel

    # -- the coordinator's markers ---------------------------------------------------------
    async def write_markers(self, broker_id: int, marker: Marker,
                            partitions: list[TopicPartition]) -> dict[TopicPartition, ErrorCode]:
        if broker_id == self.node_id:
            return await self.local.write_markers(broker_id, marker, partitions)
        try:
            answer = await self._channel(broker_id, MARKERS).call(markers_request(marker, partitions))
        except NETWORK_ERRORS as e:
            log.info("WriteTxnMarkers to broker %d failed (%r); the coordinator sends it again", broker_id, e)
            return dict.fromkeys(partitions, ErrorCode.network_exception)
        found = {(t.name, int(p.partition_index)): ErrorCode(p.error_code)
                 for m in answer.markers for t in m.topics for p in t.partitions}
        return {tp: found.get(tp, ErrorCode.unknown_server_error) for tp in partitions}

    # -- the leaders' and group coordinators' questions ---------------------------------------
    async def verify(self, coordinator_id: int, transactional_id: str, producer_id: int, producer_epoch: int,
                     topic: str, index: int) -> None:
        if coordinator_id == self.node_id:
            return await self.local.verify(coordinator_id, transactional_id, producer_id, producer_epoch, topic, index)
        try:
            await self._ask(coordinator_id, transactional_id, producer_id, producer_epoch, (topic, index), True)
        except KafkaError as e:
            if e.code in NOT_DECIDED:
                raise KafkaError(ErrorCode.not_enough_replicas, f"The transaction coordinator could not verify "
                                                                f"the write yet ({e.code.name}); retry.") from None
            raise

    async def verify_offsets(self, coordinator_id: int, transactional_id: str, producer_id: int,
                             producer_epoch: int, group_id: str) -> None:
        if coordinator_id == self.node_id:
            return await self.local.verify_offsets(coordinator_id, transactional_id, producer_id, producer_epoch,
                                                   group_id)
        partition = self._offsets_partition(group_id)
        await self._ask(coordinator_id, transactional_id, producer_id, producer_epoch, partition, True)

    async def add_partition(self, coordinator_id: int, transactional_id: str, producer_id: int, producer_epoch: int,
                            topic: str, index: int) -> None:
        if coordinator_id == self.node_id:
            return await self.local.add_partition(coordinator_id, transactional_id, producer_id, producer_epoch,
                                                  topic, index)
        await self._ask(coordinator_id, transactional_id, producer_id, producer_epoch, (topic, index), False)

    async def add_offsets(self, coordinator_id: int, transactional_id: str, producer_id: int, producer_epoch: int,
                          group_id: str) -> None:
        if coordinator_id == self.node_id:
            return await self.local.add_offsets(coordinator_id, transactional_id, producer_id, producer_epoch,
                                                group_id)
        partition = self._offsets_partition(group_id)
        await self._ask(coordinator_id, transactional_id, producer_id, producer_epoch, partition, False)

    def _offsets_partition(self, group_id: str) -> TopicPartition:
        topic = self.metadata.topics.get(offsets.TOPIC)
        if topic is None:
            raise KafkaError(ErrorCode.coordinator_not_available, f"{offsets.TOPIC} does not exist yet.")
        return offsets.TOPIC, offsets.partition_for(group_id, len(topic.partitions))

    async def _ask(self, coordinator_id: int, transactional_id: str, producer_id: int, producer_epoch: int,
                   partition: TopicPartition, verify_only: bool) -> None:
        request = add_partitions_request(transactional_id, producer_id, producer_epoch, partition, verify_only)
        try:
            answer = await self._channel(coordinator_id, QUESTIONS).call(request)
        except NETWORK_ERRORS:
            raise unreachable(coordinator_id) from None
        code = first_error(answer)
        if code != ErrorCode.none:
            raise KafkaError(code, f"The transaction coordinator, broker {coordinator_id}, answered {code.name} "
                                   f"for {partition[0]}-{partition[1]} of transactional id {transactional_id!r}.")

    def close(self) -> None:
        for _, channel in self._channels.values():
            channel.close()
        self._channels.clear()


def markers_request(marker: Marker, partitions: list[TopicPartition]) -> Any:
    module = codec.request_module(WRITE_TXN_MARKERS, MARKERS_VERSION)
    by_topic: dict[str, list[int]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(index)
    topics = tuple(codec.entity(module, "WritableTxnMarkerTopic", name=name, partition_indexes=tuple(indexes))
                   for name, indexes in by_topic.items())
    entry = codec.entity(module, "WritableTxnMarker", producer_id=marker.producer_id,
                         producer_epoch=marker.producer_epoch, transaction_result=marker.commit, topics=topics,
                         coordinator_epoch=marker.coordinator_epoch)
    return codec.make(codec.request_class(WRITE_TXN_MARKERS, MARKERS_VERSION), markers=(entry,))


def add_partitions_request(transactional_id: str, producer_id: int, producer_epoch: int, partition: TopicPartition,
                           verify_only: bool) -> Any:
    module = codec.request_module(ADD_PARTITIONS_TO_TXN, VERIFY_VERSION)
    topic = codec.entity(module, "AddPartitionsToTxnTopic", name=partition[0], partitions=(partition[1],))
    transaction = codec.entity(module, "AddPartitionsToTxnTransaction", transactional_id=transactional_id,
                               producer_id=producer_id, producer_epoch=producer_epoch, verify_only=verify_only,
                               topics=(topic,))
    return codec.make(codec.request_class(ADD_PARTITIONS_TO_TXN, VERIFY_VERSION), transactions=(transaction,))


def first_error(answer: Any) -> ErrorCode:
    """The request's error, else the first partition's that is not NONE."""
    if answer.error_code != ErrorCode.none:
        return ErrorCode(answer.error_code)
    for result in answer.results_by_transaction:
        for topic in result.topic_results:
            for p in topic.results_by_partition:
                if p.partition_error_code != ErrorCode.none:
                    return ErrorCode(p.partition_error_code)
    return ErrorCode.none
