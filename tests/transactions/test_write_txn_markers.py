"""WriteTxnMarkers (api 27) alone, with a fake ``TxnMarkersPort``: the inter-broker request a transaction
coordinator sends to partition leaders (KIP-98). Each partition gets the leader's own answer, and only a
principal with CLUSTER_ACTION (a broker) may send it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from kio.schema.write_txn_markers.v1.request import WritableTxnMarker, WritableTxnMarkerTopic
from kio.schema.write_txn_markers.v1.request import WriteTxnMarkersRequest as V1
from kio.schema.write_txn_markers.v2.request import WritableTxnMarker as WritableTxnMarkerV2
from kio.schema.write_txn_markers.v2.request import WritableTxnMarkerTopic as WritableTxnMarkerTopicV2
from kio.schema.write_txn_markers.v2.request import WriteTxnMarkersRequest as V2

from minikafka.broker import Broker
from minikafka.errors import ErrorCode
from minikafka.handlers import registry, write_txn_markers
from minikafka.handlers.dispatch import lift
from minikafka.handlers.ports import Caller, TxnMarkersPort
from minikafka.security.acl import CLUSTER_NAME, Operation, ResourceType
from tests.fake_authorizer import Acls
from tests.port_checks import assert_provides


class FakeLeader:
    """Leads ``("a", 0)`` and ``("b", 1)``; records each marker it writes."""

    def __init__(self) -> None:
        self.written: list[tuple[str, int, int, int, bool]] = []

    async def write_txn_marker(self, topic: str, index: int, producer_id: int, producer_epoch: int,
                               commit: bool) -> ErrorCode:
        if (topic, index) not in {("a", 0), ("b", 1)}:
            return ErrorCode.not_leader_or_follower
        self.written.append((topic, index, producer_id, producer_epoch, commit))
        return ErrorCode.none


def request(version: int) -> Any:
    cls, marker, topic = (V1, WritableTxnMarker, WritableTxnMarkerTopic) if version == 1 else \
        (V2, WritableTxnMarkerV2, WritableTxnMarkerTopicV2)
    return cls(markers=(
        marker(producer_id=7, producer_epoch=2, transaction_result=True, coordinator_epoch=4,
               topics=(topic(name="a", partition_indexes=(0, 1)),)),
        marker(producer_id=8, producer_epoch=0, transaction_result=False, coordinator_epoch=4,
               topics=(topic(name="b", partition_indexes=(1,)),))))


def run(port: FakeLeader, version: int, authorizer: Any = None) -> Any:
    caller = Caller(27, version, client_id="broker-2", principal="User:broker", authorizer=authorizer)
    return asyncio.run(write_txn_markers.WriteTxnMarkers(port).handle(caller, lift(27, request(version))))


def answers(answer: Any) -> dict[tuple[int, str, int], ErrorCode]:
    return {(m.producer_id, t.name, p.partition_index): p.error_code for m in answer.markers for t in m.topics
            for p in t.partitions}


def test_broker_provides_the_markers_port_and_the_registry_builds_the_handler():
    assert_provides(TxnMarkersPort, Broker, FakeLeader)
    row = registry.HANDLERS[27]
    assert isinstance(row.make(FakeLeader()), write_txn_markers.WriteTxnMarkers)  # type: ignore[arg-type]


@pytest.mark.parametrize("version", [1, 2])
def test_each_partition_is_answered_by_its_leader_and_a_moved_one_says_not_leader(version):
    port = FakeLeader()
    answer = run(port, version)
    assert answers(answer) == {(7, "a", 0): ErrorCode.none, (7, "a", 1): ErrorCode.not_leader_or_follower,
                               (8, "b", 1): ErrorCode.none}
    assert port.written == [("a", 0, 7, 2, True), ("b", 1, 8, 0, False)]  # commit for 7, abort for 8


def test_a_principal_without_cluster_action_writes_no_marker():
    port = FakeLeader()
    answer = run(port, 1, Acls((Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME)))
    assert set(answers(answer).values()) == {ErrorCode.cluster_authorization_failed}
    assert port.written == []
