"""Handlers called directly on one in-process broker (``minikafka.assembly``): no socket, no
thread, no Cluster. The wire tests cover the same APIs end to end with real clients; these
show a handler's answer on its own, version by version."""

from __future__ import annotations

import datetime
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from minikafka.errors import ErrorCode
from minikafka.handlers.api_versions import FEATURES
from minikafka import assembly
from minikafka.assembly import DirectBroker
from minikafka.protocol import codec
from minikafka.protocol.apis import API_TABLE

API_VERSIONS, METADATA, CREATE_TOPICS, SASL_HANDSHAKE, ADD_PARTITIONS = 18, 3, 19, 17, 24


def run(check: Callable[[DirectBroker], Awaitable[Any]]) -> Any:
    return assembly.run(check, {"auto.create.topics.enable": "false"})


def create_topics(version: int, *names: str, partitions: int = 2, validate_only: bool = False) -> Any:
    module = codec.request_module(CREATE_TOPICS, version)
    topics = tuple(codec.entity(module, "CreatableTopic", name=n, num_partitions=partitions, replication_factor=1,
                                assignments=(), configs=()) for n in names)
    return codec.downgrade(codec.request_class(CREATE_TOPICS, version), topics=topics, validate_only=validate_only)


def metadata(version: int, *names: str) -> Any:
    module = codec.request_module(METADATA, version)
    topics = tuple(codec.entity(module, "MetadataRequestTopic", name=n, topic_id=None) for n in names)
    return codec.downgrade(codec.request_class(METADATA, version), topics=topics, allow_auto_topic_creation=False,
                           include_cluster_authorized_operations=False, include_topic_authorized_operations=False)


@pytest.mark.parametrize("version", [0, 3, 4])
def test_api_versions_lists_the_api_table_and_from_v3_the_features(version):
    request = codec.downgrade(codec.request_class(API_VERSIONS, version), client_software_name="direct",
                              client_software_version="1")
    answer = run(lambda b: b.call(request))
    assert type(answer) is codec.response_class(API_VERSIONS, version)
    assert answer.error_code == ErrorCode.none
    assert {(a.api_key, a.min_version, a.max_version) for a in answer.api_keys} == {
        (api.key, *api.advertised_range) for api in API_TABLE}
    if version >= 3:
        assert {f.name: (f.min_version, f.max_version) for f in answer.supported_features} == {
            name: (low, high) for name, (low, high, _) in FEATURES.items()}


def test_create_topics_creates_once_then_answers_topic_already_exists():
    async def check(broker: DirectBroker) -> tuple[Any, Any, Any]:
        first = await broker.call(create_topics(7, "orders", partitions=3))
        again = await broker.call(create_topics(7, "orders"))
        dry = await broker.call(create_topics(7, "planned", validate_only=True))
        return first.topics[0], again.topics[0], (dry.topics[0], "planned" in broker.metadata.topics)

    created, again, (dry, planned_exists) = run(check)
    assert (created.name, created.error_code, created.num_partitions, created.replication_factor) == (
        "orders", ErrorCode.none, 3, 1)
    assert again.error_code == ErrorCode.topic_already_exists and again.error_message
    assert dry.error_code == ErrorCode.none and not planned_exists  # validate_only creates nothing


@pytest.mark.parametrize("version", [0, 1, 9, 12])
def test_metadata_names_the_broker_and_the_created_topics_leaders(version):
    async def check(broker: DirectBroker) -> Any:
        await broker.call(create_topics(7, "orders", partitions=2))
        return await broker.call(metadata(version, "orders", "missing"))

    answer = run(check)
    assert type(answer) is codec.response_class(METADATA, version)
    assert [(b.node_id, b.host, b.port) for b in answer.brokers] == [(1, "127.0.0.1", 9092)]
    by_name = {t.name: t for t in answer.topics}
    assert by_name["missing"].error_code == ErrorCode.unknown_topic_or_partition
    orders = by_name["orders"]
    assert orders.error_code == ErrorCode.none
    assert sorted((p.partition_index, p.leader_id, tuple(p.replica_nodes)) for p in orders.partitions) == [
        (0, 1, (1,)), (1, 1, (1,))]


def test_a_request_of_an_unsupported_version_is_refused():
    request = codec.make(codec.request_class(SASL_HANDSHAKE, 0), mechanism="PLAIN")  # v0 is not offered
    with pytest.raises(ValueError, match="SaslHandshakeRequest v0"):
        run(lambda b: b.call(request))


def test_add_partitions_to_txn_v4_adds_then_verifies_each_partition():
    """KIP-890's batched version, as a partition leader sends it: the verify call once lacked the
    producer epoch and raised TypeError for every partition."""
    async def check(broker: DirectBroker) -> tuple[Any, Any]:
        await broker.call(create_topics(7, "orders", partitions=2))
        init = await broker.call(codec.make(codec.request_class(22, 5), transactional_id="t1", producer_id=-1,
                                            producer_epoch=-1, transaction_timeout=datetime.timedelta(seconds=60)))
        module = codec.request_module(ADD_PARTITIONS, 5)

        def transaction(verify_only: bool, *partitions: int) -> Any:
            topic = codec.entity(module, "AddPartitionsToTxnTopic", name="orders", partitions=partitions)
            return codec.entity(module, "AddPartitionsToTxnTransaction", transactional_id="t1",
                                producer_id=init.producer_id, producer_epoch=init.producer_epoch,
                                verify_only=verify_only, topics=(topic,))

        added = await broker.call(codec.make(codec.request_class(ADD_PARTITIONS, 5),
                                             transactions=(transaction(False, 0),)))
        verified = await broker.call(codec.make(codec.request_class(ADD_PARTITIONS, 5),
                                                transactions=(transaction(True, 0, 1),)))
        return added, verified

    def codes(answer: Any) -> dict[int, ErrorCode]:
        [result] = answer.results_by_transaction
        return {p.partition_index: p.partition_error_code for t in result.topic_results
                for p in t.results_by_partition}

    added, verified = run(check)
    assert codes(added) == {0: ErrorCode.none}
    assert codes(verified) == {0: ErrorCode.none, 1: ErrorCode.invalid_txn_state}  # 1 was never added
