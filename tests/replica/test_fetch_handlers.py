"""Fetch and OffsetForLeaderEpoch alone (issue 27): each handler gets a ``Caller`` and a fake port, never a
broker, a socket or a Cluster. Requests are built at a client's (or a follower broker's) version and lifted
as dispatch lifts them."""

from __future__ import annotations

import asyncio
import datetime
import uuid
from dataclasses import dataclass, field
from typing import Any

from kio.schema.fetch.v4 import request as v4
from kio.schema.fetch.v12 import request as v12
from kio.schema.fetch.v18 import request as v18
from kio.schema.offset_for_leader_epoch.v4 import request as ofle

from minikafka.broker import Broker
from minikafka.errors import ErrorCode, KafkaError
from minikafka.handlers.dispatch import lift
from minikafka.handlers.fetch import Fetch
from minikafka.handlers.offset_for_leader_epoch import OffsetForLeaderEpoch
from minikafka.handlers.ports import Caller, EpochsPort, FetchPort
from minikafka.security.acl import Operation, ResourceType
from tests.fake_authorizer import Acls
from tests.port_checks import assert_provides

TOPIC_ID = uuid.uuid4()
WAIT = datetime.timedelta(milliseconds=0)


@dataclass
class View:
    """A replica holding ``data`` from offset 10, high watermark 12, last stable offset 11."""

    data: bytes = b"batches"
    high_watermark: int = 12
    last_stable_offset: int = 11
    log_start_offset: int = 3
    reads: list[tuple[int, int, bool]] = field(default_factory=list)

    def read(self, offset: int, max_bytes: int, *, committed_only: bool = False) -> bytes:
        self.reads.append((offset, max_bytes, committed_only))
        return self.data[:max_bytes]

    def aborted_transactions(self, start: int, end: int) -> list[tuple[int, int]]:
        return [(7, start)]

    def waiter(self) -> asyncio.Future[Any]:
        return asyncio.get_running_loop().create_future()


@dataclass
class Read:
    records: bytes
    diverging: tuple[int, int] | None = None


class FakeReplicas:
    def __init__(self, preferred: int = -1, error: KafkaError | None = None,
                 diverging: tuple[int, int] | None = None) -> None:
        self.view, self.preferred, self.error, self.diverging = View(), preferred, error, diverging
        self.calls: list[tuple[Any, ...]] = []

    def topic_name_of(self, topic_id: str) -> str | None:
        return "orders" if topic_id == str(TOPIC_ID) else None

    def topic_id_of(self, topic: str) -> str | None:
        return str(TOPIC_ID) if topic == "orders" else None

    def consumer_replica(self, topic: str, index: int, rack_id: str | None, fetch_offset: int) -> tuple[View, int]:
        self.calls.append(("consumer", topic, index, rack_id))
        if self.error is not None:
            raise self.error
        return self.view, self.preferred

    def follower_replica(self, topic: str, index: int) -> View:
        self.calls.append(("follower", topic, index))
        return self.view

    def follower_read(self, topic: str, index: int, follower: int, current_leader_epoch: int, fetch_offset: int,
                      last_fetched_epoch: int, max_bytes: int) -> Read:
        self.calls.append(("read", follower, current_leader_epoch, fetch_offset, last_fetched_epoch))
        if self.error is not None:
            raise self.error
        return Read(b"" if self.diverging else b"replicated", self.diverging)

    def monotonic_ms(self) -> int:
        return 0  # the clock stands still: every fetch here waits 0 ms (WAIT)

    def epoch_end_offset(self, topic: str, index: int, current_leader_epoch: int, leader_epoch: int
                         ) -> tuple[int, int]:
        if self.error is not None:
            raise self.error
        return min(leader_epoch, 4), 40


def run(handler: Any, api_key: int, request: Any, authorizer: Any = None) -> Any:
    caller = Caller(api_key, request.__version__, client_id="test", authorizer=authorizer)
    return asyncio.run(handler.handle(caller, lift(api_key, request)))


def test_broker_and_the_fake_provide_the_fetch_ports():
    assert_provides(FetchPort, Broker, FakeReplicas)
    assert_provides(EpochsPort, Broker, FakeReplicas)


def old_fetch(isolation: int = 0) -> Any:
    part = v4.FetchPartition(partition=0, fetch_offset=10, partition_max_bytes=5)
    return v4.FetchRequest(replica_id=-1, max_wait=WAIT, min_bytes=1, max_bytes=100, isolation_level=isolation,
                           topics=(v4.FetchTopic(topic="orders", partitions=(part,)),))


def test_a_consumer_reads_its_partition_within_the_partition_limit():
    port = FakeReplicas()
    (topic,) = run(Fetch(port), 1, old_fetch()).responses
    (part,) = topic.partitions
    assert (part.error_code, part.records, part.high_watermark, part.last_stable_offset) == (0, b"batch", 12, 11)
    assert port.view.reads == [(10, 5, False)] and port.calls == [("consumer", "orders", 0, None)]  # v4: no rack


def test_read_committed_reads_to_the_last_stable_offset_with_the_aborted_transactions():
    port = FakeReplicas()
    (part,) = run(Fetch(port), 1, old_fetch(isolation=1)).responses[0].partitions
    assert port.view.reads == [(10, 5, True)]
    assert [(a.producer_id, a.first_offset) for a in part.aborted_transactions] == [(7, 10)]


def test_a_denied_topic_is_never_read():
    port = FakeReplicas()
    answer = run(Fetch(port), 1, old_fetch(), Acls((Operation.WRITE, ResourceType.TOPIC, "orders")))
    assert answer.responses[0].partitions[0].error_code == ErrorCode.topic_authorization_failed
    assert port.calls == []


def rack_fetch(rack: str) -> Any:
    part = v12.FetchPartition(partition=0, current_leader_epoch=-1, fetch_offset=10, last_fetched_epoch=-1,
                              log_start_offset=-1, partition_max_bytes=100)
    return v12.FetchRequest(cluster_id=None, replica_id=-1, max_wait=WAIT, min_bytes=1, max_bytes=100,
                            isolation_level=0, session_id=0, session_epoch=-1,
                            topics=(v12.FetchTopic(topic="orders", partitions=(part,)),), forgotten_topics_data=(),
                            rack_id=rack)


def test_a_leader_sends_a_consumer_of_another_rack_to_its_follower_without_records():
    port = FakeReplicas(preferred=3)
    (part,) = run(Fetch(port), 1, rack_fetch("rack-b")).responses[0].partitions
    assert (part.preferred_read_replica, part.records, part.error_code) == (3, b"", 0)
    assert port.calls == [("consumer", "orders", 0, "rack-b")] and port.view.reads == []


def test_a_partition_this_broker_does_not_serve_answers_the_ports_error():
    port = FakeReplicas(error=KafkaError(ErrorCode.not_leader_or_follower))
    (part,) = run(Fetch(port), 1, rack_fetch("")).responses[0].partitions
    assert (part.error_code, part.high_watermark, part.records) == (ErrorCode.not_leader_or_follower, -1, b"")


def follower_fetch(topic_id: uuid.UUID = TOPIC_ID, replica: int = 2) -> Any:
    part = v18.FetchPartition(partition=0, current_leader_epoch=5, fetch_offset=10, last_fetched_epoch=4,
                              log_start_offset=-1, partition_max_bytes=100, replica_directory_id=uuid.UUID(int=0),
                              high_watermark=-1)
    return v18.FetchRequest(cluster_id=None, replica_state=v18.ReplicaState(replica_id=replica, replica_epoch=-1),
                            max_wait=WAIT, min_bytes=1, max_bytes=100, isolation_level=0, session_id=0,
                            session_epoch=-1, topics=(v18.FetchTopic(topic_id=topic_id, partitions=(part,)),),
                            forgotten_topics_data=(), rack_id="")


def test_a_follower_brokers_fetch_goes_by_the_replication_rules_and_may_be_told_it_diverged():
    port = FakeReplicas()
    answer = run(Fetch(port), 1, follower_fetch())
    assert answer.responses[0].topic_id == TOPIC_ID and answer.responses[0].partitions[0].records == b"replicated"
    assert port.calls == [("follower", "orders", 0), ("read", 2, 5, 10, 4)]
    port = FakeReplicas(diverging=(3, 8))
    (part,) = run(Fetch(port), 1, follower_fetch()).responses[0].partitions
    assert (part.diverging_epoch.epoch, part.diverging_epoch.end_offset) == (3, 8)


def test_a_follower_fetch_needs_cluster_action_and_a_known_topic_id():
    port = FakeReplicas()
    denied = run(Fetch(port), 1, follower_fetch(), Acls((Operation.READ, ResourceType.TOPIC, "orders")))
    assert denied.responses[0].partitions[0].error_code == ErrorCode.topic_authorization_failed and port.calls == []
    unknown = run(Fetch(port), 1, follower_fetch(topic_id=uuid.uuid4()))
    assert unknown.responses[0].partitions[0].error_code == ErrorCode.unknown_topic_id


def epochs_request(replica_id: int = -1) -> Any:
    part = ofle.OffsetForLeaderPartition(partition=0, current_leader_epoch=5, leader_epoch=6)
    return ofle.OffsetForLeaderEpochRequest(replica_id=replica_id,
                                            topics=(ofle.OffsetForLeaderTopic(topic="orders", partitions=(part,)),))


def test_offset_for_leader_epoch_answers_where_the_epoch_ended_or_the_ports_error():
    (part,) = run(OffsetForLeaderEpoch(FakeReplicas()), 23, epochs_request()).topics[0].partitions
    assert (part.error_code, part.leader_epoch, part.end_offset) == (0, 4, 40)
    fenced = FakeReplicas(error=KafkaError(ErrorCode.fenced_leader_epoch))
    (part,) = run(OffsetForLeaderEpoch(fenced), 23, epochs_request()).topics[0].partitions
    assert (part.error_code, part.leader_epoch, part.end_offset) == (ErrorCode.fenced_leader_epoch, -1, -1)


def test_a_broker_asking_offset_for_leader_epoch_needs_cluster_action():
    acls = Acls((Operation.DESCRIBE, ResourceType.TOPIC, "orders"))
    (part,) = run(OffsetForLeaderEpoch(FakeReplicas()), 23, epochs_request(replica_id=2), acls).topics[0].partitions
    assert part.error_code == ErrorCode.topic_authorization_failed
    (part,) = run(OffsetForLeaderEpoch(FakeReplicas()), 23, epochs_request(), acls).topics[0].partitions
    assert part.error_code == ErrorCode.none  # a consumer needs DESCRIBE on the topic only
