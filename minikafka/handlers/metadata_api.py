"""Metadata (the API, key 3): brokers, controller, and per-partition leader, replicas and ISR.

Clients start here. When a client asks for a topic that does not exist and
``auto.create.topics.enable`` is true (Kafka's default, and what librdkafka's own
tests expect), the topic is created with ``num.partitions`` partitions. The brokers'
addresses are those of the listener the request came in on. (The cluster metadata store
the answer is read from is ``minikafka.metadata``; this handler sees it only through its
``ports.ClusterViewPort``.)
"""

from __future__ import annotations

import uuid
from collections.abc import Container
from typing import Any

from kio.schema.metadata.v13.request import MetadataRequest

from ..errors import ErrorCode, KafkaError
from ..security.acl import CLUSTER_NAME, Operation, ResourceType
from .ports import NOT_REQUESTED, Caller, ClusterViewPort, PartitionView, Response, TopicView


def _partition(caller: Caller, p: PartitionView, live: Container[int]) -> Any:
    offline = tuple(b for b in p.replicas if b not in live)
    leader = p.leader if p.leader in live else -1
    return caller.make("MetadataResponsePartition",
                       error_code=ErrorCode.none if leader >= 0 else ErrorCode.leader_not_available,
                       partition_index=p.index, leader_id=leader, leader_epoch=p.leader_epoch,
                       replica_nodes=tuple(p.replicas), isr_nodes=tuple(b for b in p.isr if b in live),
                       offline_replicas=offline)


def _missing(caller: Caller, name: str, code: ErrorCode) -> Any:
    return caller.make("MetadataResponseTopic", error_code=code, name=name, topic_id=uuid.UUID(int=0),
                       is_internal=False, partitions=())


def _may_create(caller: Caller, name: str) -> bool:
    """Auto-creation needs CREATE on the cluster or on the topic, as a CreateTopics request would."""
    return (caller.allowed(Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)
            or caller.allowed(Operation.CREATE, ResourceType.TOPIC, name))


def _cluster_operations(caller: Caller) -> int:
    """v8-10's cluster_authorized_operations (KIP-430), for a principal that may DESCRIBE the
    cluster. The newest request no longer has the flag that asks for them, so they are given
    whenever that version is used."""
    if caller.allowed(Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return caller.authorized_operations(ResourceType.CLUSTER)
    return NOT_REQUESTED


class Metadata:
    """The Metadata API over the broker's ``ClusterViewPort``."""

    def __init__(self, cluster: ClusterViewPort) -> None:
        self.cluster = cluster

    async def handle(self, caller: Caller, request: MetadataRequest) -> Response:
        names = self._requested_names(request)
        ops = request.include_topic_authorized_operations
        if names is None or (caller.api_version == 0 and not names):  # v0: empty list means all topics
            # topics the principal may not describe are left out, as Kafka does
            topics = tuple(self._topic(caller, t, ops) for t in self.cluster.topics().values()
                           if caller.allowed(Operation.DESCRIBE, ResourceType.TOPIC, t.name))
        else:
            auto = request.allow_auto_topic_creation
            topics = tuple(self._lookup(caller, n, auto, ops) for n in names)
        return self._respond(caller, topics)

    def error_response(self, caller: Caller, request: MetadataRequest, code: ErrorCode) -> Response:
        """The fault API's answer: the brokers as usual, every requested topic failing with ``code``."""
        names = self._requested_names(request)
        return self._respond(caller, tuple(_missing(caller, n, code) for n in (names or self.cluster.topics())))

    def _requested_names(self, request: MetadataRequest) -> list[str] | None:
        if request.topics is None:
            return None
        names: list[str] = []
        for t in request.topics:
            name: str | None = t.name
            if name is None and t.topic_id:
                found = self.cluster.topic_by_id(str(t.topic_id))
                name = found.name if found else None
            if name is not None:
                names.append(name)
        return names

    def _topic(self, caller: Caller, topic: TopicView, with_operations: bool = False) -> Any:
        live = self.cluster.broker_endpoints(caller.listener)
        operations = (caller.authorized_operations(ResourceType.TOPIC, topic.name) if with_operations
                      else NOT_REQUESTED)
        return caller.make("MetadataResponseTopic", error_code=ErrorCode.none, name=topic.name,
                           topic_id=uuid.UUID(topic.topic_id), is_internal=topic.internal,
                           partitions=tuple(_partition(caller, p, live) for p in topic.partitions),
                           topic_authorized_operations=operations)

    def _lookup(self, caller: Caller, name: str, auto_create: bool, with_operations: bool = False) -> Any:
        try:
            self.cluster.validate_topic_name(name)
        except KafkaError as e:
            return _missing(caller, name, e.code)
        if not caller.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name):
            return _missing(caller, name, ErrorCode.topic_authorization_failed)
        topic = self.cluster.topics().get(name)
        if topic is None and auto_create and not _may_create(caller, name):
            return _missing(caller, name, ErrorCode.topic_authorization_failed)
        if topic is None and auto_create:
            try:
                topic = self.cluster.auto_create(name)
            except KafkaError as e:
                return _missing(caller, name, e.code)
        if topic is None:
            return _missing(caller, name, ErrorCode.unknown_topic_or_partition)
        return self._topic(caller, topic, with_operations)

    def _respond(self, caller: Caller, topics: tuple[Any, ...]) -> Response:
        cluster = self.cluster
        brokers = tuple(caller.make("MetadataResponseBroker", node_id=i, host=h, port=p, rack=cluster.rack_of(i))
                        for i, (h, p) in sorted(cluster.broker_endpoints(caller.listener).items()))
        operations = _cluster_operations(caller) if 8 <= caller.api_version <= 10 else NOT_REQUESTED
        return caller.respond(brokers=brokers, cluster_id=cluster.cluster_id(), controller_id=cluster.controller_id(),
                              topics=topics, cluster_authorized_operations=operations, error_code=ErrorCode.none)
