"""The five share-group handlers alone (issue 27): each gets a ``Caller`` and a fake ``SharePort``
(``FakeShare`` below), never a broker, a socket or a Cluster. Requests are built at a version a
client sends and lifted as dispatch lifts them, so each answer is also checked to fit that version."""

from __future__ import annotations

import asyncio
import datetime
import importlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from minikafka.broker import Broker
from minikafka.errors import ErrorCode, KafkaError
from minikafka.handlers import registry
from minikafka.handlers.describe_share_group_offsets import DescribeShareGroupOffsets
from minikafka.handlers.dispatch import lift
from minikafka.handlers.ports import NOT_REQUESTED, Ack, Caller, SharePort
from minikafka.handlers.share_acknowledge import ShareAcknowledge
from minikafka.handlers.share_fetch import ShareFetch
from minikafka.handlers.share_group_describe import ShareGroupDescribe
from minikafka.handlers.share_group_heartbeat import ShareGroupHeartbeat
from minikafka.security.acl import OPERATIONS, Operation, ResourceType
from minikafka.share.group import ShareGroup, ShareMember
from tests.fake_authorizer import Acls
from tests.port_checks import assert_provides

A_ID, B_ID = uuid.UUID(int=0xA), uuid.UUID(int=0xB)
GONE_ID = uuid.UUID(int=0xDEAD)
TOPICS = {"a": (str(A_ID), [(1, 4), (2, 5)]), "b": (str(B_ID), [(3, 6)])}  # name -> (id, [(leader, epoch)])
BROKERS = {1: ("127.0.0.1", 9001), 2: ("127.0.0.1", 9002), 3: ("127.0.0.1", 9003)}
LOCK_MS = 30_000


@dataclass
class Run:
    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass
class Fetched:
    error: ErrorCode = ErrorCode.none
    records: bytes = b""
    acquired: list[Run] = field(default_factory=list)


@dataclass
class Session:
    group_id: str
    member_id: str


class FakeShare:
    """A SharePort over TOPICS and BROKERS that records what it is asked and answers what it is given."""

    def __init__(self, error: KafkaError | None = None, fetched: Mapping[tuple[str, int], Fetched] | None = None,
                 acked: dict[tuple[str, int], KafkaError | None] | None = None) -> None:
        self.error, self.fetched, self.acked = error, dict(fetched or {}), acked or {}
        self.calls: list[tuple[Any, ...]] = []
        self.member = ShareMember("m1", client_id="c", client_host="h", rack_id="r", subscribed=("a", "gone"),
                                  member_epoch=3, assignment={"a": (0, 1), "gone": (0,)})

    def _call(self, *args: Any) -> None:
        self.calls.append(args)
        if self.error is not None:
            raise self.error

    def share_group_heartbeat(self, group_id: str, member_id: str, member_epoch: int,
                              subscribed: tuple[str, ...] | None, rack_id: str | None, client_id: str,
                              client_host: str) -> tuple[ShareMember, bool, int]:
        self._call("heartbeat", group_id, member_id, member_epoch, subscribed, rack_id, client_id, client_host)
        return self.member, member_epoch == 0, 5000

    def describe_share_group(self, group_id: str) -> ShareGroup:
        self._call("describe", group_id)
        group = ShareGroup(group_id, group_epoch=7)
        group.members["m1"] = self.member
        return group

    def share_group_start_offsets(self, group_id: str,
                                  wanted: dict[str, list[int]] | None) -> list[tuple[str, int, int, int]]:
        self._call("offsets", group_id, wanted)
        return [("b", 0, 10, 2), ("a", 1, -1, -1), ("a", 0, 5, 0)]

    async def open_share_fetch(self, group_id: str, member_id: str, epoch: int, added: set[tuple[str, int]],
                               forgotten: set[tuple[str, int]], has_acks: bool, connection_id: int) -> Session:
        self._call("open", epoch, sorted(added), sorted(forgotten), has_acks, connection_id)
        return Session(group_id, member_id)

    def share_acknowledge_session(self, group_id: str, member_id: str, epoch: int) -> Session:
        self._call("ack session", epoch)
        return Session(group_id, member_id)

    async def acknowledge_share_records(self, group_id: str, member_id: str, acks: dict[tuple[str, int], list[Ack]]
                                        ) -> dict[tuple[str, int], KafkaError | None]:
        self.calls.append(("acknowledge", acks))
        return {tp: self.acked.get(tp) for tp in acks}

    async def acquire_share_records(self, session: object, max_records: int, max_bytes: int, max_wait_ms: int,
                                    record_limit: bool) -> Mapping[tuple[str, int], Fetched]:
        self.calls.append(("acquire", max_records, record_limit))
        return self.fetched

    async def close_share_session(self, session: object) -> None:
        self.calls.append(("close",))

    def share_lock_duration_ms(self, group_id: str) -> int:
        return LOCK_MS

    def topic_name_of(self, topic_id: str) -> str | None:
        return next((n for n, (i, _) in TOPICS.items() if i == topic_id), None)

    def topic_id_of(self, topic: str) -> str | None:
        return TOPICS[topic][0] if topic in TOPICS else None

    def partition_leader(self, topic: str, index: int) -> tuple[int, int] | None:
        leaders = TOPICS[topic][1] if topic in TOPICS else []
        return leaders[index] if 0 <= index < len(leaders) else None

    def broker_address(self, node_id: int) -> tuple[str, int] | None:
        return BROKERS.get(node_id)


def kio(api: str, version: int, side: str = "request") -> Any:
    return importlib.import_module(f"kio.schema.{api}.v{version}.{side}")


def run(handler: Any, api_key: int, request: Any, authorizer: Any = None) -> Any:
    caller = Caller(api_key, request.__version__, client_id="cli", client_host="10.0.0.9", principal="User:alice",
                    connection_id=17, authorizer=authorizer)
    return asyncio.run(handler.handle(caller, lift(api_key, request)))


def test_broker_and_the_fake_provide_the_share_port():
    assert_provides(SharePort, Broker, FakeShare)


def test_the_registry_builds_the_share_handlers_from_ports():
    for key in (76, 77, 78, 79, 90):
        row = registry.HANDLERS[key]
        assert isinstance(row, registry.PortHandler)
        assert isinstance(row.make(FakeShare()), row.make)  # type: ignore[arg-type]


# -- ShareGroupHeartbeat -------------------------------------------------------------------------

def heartbeat(epoch: int, subscribed: tuple[str, ...] | None = None) -> Any:
    return kio("share_group_heartbeat", 1).ShareGroupHeartbeatRequest(
        group_id="g", member_id="m1", member_epoch=epoch, rack_id="r", subscribed_topic_names=subscribed)


def test_heartbeat_passes_the_callers_client_and_answers_the_assignment_by_topic_id_when_news():
    port = FakeShare()
    answer = run(ShareGroupHeartbeat(port), 76, heartbeat(0, ("a",)))
    assert (answer.error_code, answer.member_id, answer.member_epoch) == (ErrorCode.none, "m1", 3)
    assert answer.heartbeat_interval == datetime.timedelta(seconds=5)
    # "gone" is assigned but no longer a topic: left out, not an error
    assert [(t.topic_id, t.partitions) for t in answer.assignment.topic_partitions] == [(A_ID, (0, 1))]
    assert port.calls == [("heartbeat", "g", "m1", 0, ("a",), "r", "cli", "10.0.0.9")]


def test_heartbeat_without_news_has_no_assignment_and_keeps_the_subscription_unchanged():
    port = FakeShare()
    answer = run(ShareGroupHeartbeat(port), 76, heartbeat(3))
    assert (answer.error_code, answer.assignment) == (ErrorCode.none, None)
    assert port.calls[0][4] is None  # subscribed: None means unchanged


def test_heartbeat_error_is_top_level_with_its_sentence():
    port = FakeShare(KafkaError(ErrorCode.fenced_member_epoch, "The member epoch is stale."))
    answer = run(ShareGroupHeartbeat(port), 76, heartbeat(9))
    assert (answer.error_code, answer.error_message) == (ErrorCode.fenced_member_epoch, "The member epoch is stale.")
    assert (answer.member_id, answer.member_epoch, answer.assignment) == (None, -1, None)
    assert answer.heartbeat_interval == datetime.timedelta(0)


# -- ShareGroupDescribe --------------------------------------------------------------------------

def describe(*groups: str, operations: bool = False) -> Any:
    return kio("share_group_describe", 1).ShareGroupDescribeRequest(group_ids=groups,
                                                                   include_authorized_operations=operations)


def test_describe_shows_members_with_their_assignment_by_name_and_id():
    [group] = run(ShareGroupDescribe(FakeShare()), 77, describe("g")).groups
    assert (group.error_code, group.group_state, group.group_epoch, group.assignor_name) == (
        ErrorCode.none, "Stable", 7, "simple")
    assert group.authorized_operations == NOT_REQUESTED
    [member] = group.members
    assert (member.member_id, member.member_epoch, member.client_id, member.client_host, member.rack_id) == (
        "m1", 3, "c", "h", "r")
    assert member.subscribed_topic_names == ("a", "gone")
    assert [(t.topic_name, t.topic_id, t.partitions) for t in member.assignment.topic_partitions] == [
        ("a", A_ID, (0, 1))]


def test_describe_needs_describe_on_each_group_and_reports_operations_when_asked():
    port = FakeShare()
    acls = Acls((Operation.DESCRIBE, ResourceType.GROUP, "g"), (Operation.READ, ResourceType.GROUP, "g"))
    allowed, denied = run(ShareGroupDescribe(port), 77, describe("g", "h", operations=True), acls).groups
    assert allowed.error_code == ErrorCode.none
    assert allowed.authorized_operations == (1 << int(Operation.DESCRIBE)) | (1 << int(Operation.READ))
    assert (denied.error_code, denied.group_state, denied.members) == (ErrorCode.group_authorization_failed, "Dead", ())
    assert denied.authorized_operations == NOT_REQUESTED
    assert port.calls == [("describe", "g")]  # the denied group is not looked up
    everything = sum(1 << int(op) for op in OPERATIONS[ResourceType.GROUP])
    assert run(ShareGroupDescribe(port), 77, describe("g", operations=True)).groups[0].authorized_operations == \
        everything


def test_describe_answers_the_ports_error_per_group():
    port = FakeShare(KafkaError(ErrorCode.group_id_not_found, "Group g is not a share group."))
    [group] = run(ShareGroupDescribe(port), 77, describe("g")).groups
    assert (group.error_code, group.error_message, group.group_epoch) == (
        ErrorCode.group_id_not_found, "Group g is not a share group.", -1)


# -- ShareFetch ----------------------------------------------------------------------------------

def fetch(version: int, epoch: int = 1, topics: tuple = (), forgotten: tuple = (), **fields: Any) -> Any:
    values: dict[str, Any] = {"group_id": "g", "member_id": "m1", "share_session_epoch": epoch,
                              "max_wait": datetime.timedelta(0), "min_bytes": 1, "max_bytes": 1 << 20,
                              "max_records": 500, "batch_size": 500, "topics": topics,
                              "forgotten_topics_data": forgotten, **fields}
    return kio("share_fetch", version).ShareFetchRequest(**values)


def fetch_topic(version: int, topic_id: uuid.UUID, index: int, *batches: tuple[int, int, tuple[int, ...]]) -> Any:
    m = kio("share_fetch", version)
    acks = tuple(m.AcknowledgementBatch(first_offset=f, last_offset=to, acknowledge_types=t) for f, to, t in batches)
    return m.FetchTopic(topic_id=topic_id, partitions=(m.FetchPartition(partition_index=index,
                                                                        acknowledgement_batches=acks),))


def partitions(answer: Any) -> dict[tuple[uuid.UUID, int], Any]:
    return {(t.topic_id, p.partition_index): p for t in answer.responses for p in t.partitions}


def test_fetch_answers_acquired_records_with_leaders_and_the_lock_timeout():
    port = FakeShare(fetched={("a", 1): Fetched(records=b"batch", acquired=[Run(10, 12, 1)]), ("b", 0): Fetched()})
    answer = run(ShareFetch(port), 78, fetch(1, topics=(fetch_topic(1, A_ID, 1), fetch_topic(1, B_ID, 0))))
    assert (answer.error_code, answer.acquisition_lock_timeout) == (ErrorCode.none, datetime.timedelta(seconds=30))
    [(key, part)] = partitions(answer).items()  # b-0 acquired nothing: not in the answer
    assert key == (A_ID, 1)
    assert (part.records, part.current_leader.leader_id, part.current_leader.leader_epoch) == (b"batch", 2, 5)
    assert [(r.first_offset, r.last_offset, r.delivery_count) for r in part.acquired_records] == [(10, 12, 1)]
    assert port.calls[0] == ("open", 1, [("a", 1), ("b", 0)], [], False, 17)
    assert answer.node_endpoints == ()


def test_fetch_sends_a_moved_partitions_leader_to_the_client():
    port = FakeShare(fetched={("b", 0): Fetched(error=ErrorCode.not_leader_or_follower)})
    answer = run(ShareFetch(port), 78, fetch(1, topics=(fetch_topic(1, B_ID, 0),)))
    assert partitions(answer)[(B_ID, 0)].error_code == ErrorCode.not_leader_or_follower
    assert [(n.node_id, n.port) for n in answer.node_endpoints] == [(3, 9003)]


def test_fetch_answers_an_unknown_topic_id_per_partition_and_forgets_only_known_topics():
    port = FakeShare()
    forgotten = (kio("share_fetch", 1).ForgottenTopic(topic_id=B_ID, partitions=(0,)),
                 kio("share_fetch", 1).ForgottenTopic(topic_id=GONE_ID, partitions=(0,)))
    answer = run(ShareFetch(port), 78, fetch(1, topics=(fetch_topic(1, GONE_ID, 2),), forgotten=forgotten))
    part = partitions(answer)[(GONE_ID, 2)]
    assert (part.error_code, part.current_leader.leader_id) == (ErrorCode.unknown_topic_id, -1)
    assert port.calls[0] == ("open", 1, [], [("b", 0)], False, 17)


@pytest.mark.parametrize(("fields", "words"), [({"group_id": None}, "group id"), ({"member_id": ""}, "member id")])
def test_fetch_without_group_or_member_is_invalid_request_and_opens_nothing(fields, words):
    port = FakeShare()
    answer = run(ShareFetch(port), 78, fetch(1, **fields))
    assert answer.error_code == ErrorCode.invalid_request and words in answer.error_message
    assert (answer.responses, port.calls) == ((), [])


@pytest.mark.parametrize(("fields", "words"), [
    ({"share_acquire_mode": 2}, "ShareAcquireMode 2"),
    ({"is_renew_ack": True, "max_wait": datetime.timedelta(milliseconds=500), "min_bytes": 0, "max_bytes": 0,
      "max_records": 0}, "IsRenewAck")])
def test_fetch_v2_fields_out_of_line_are_invalid_request_before_the_session_moves(fields, words):
    port = FakeShare()
    answer = run(ShareFetch(port), 78, fetch(2, **fields))
    assert answer.error_code == ErrorCode.invalid_request and words in answer.error_message
    assert port.calls == []


def test_fetch_record_limit_mode_and_a_renew_only_request_that_fetches_nothing():
    port = FakeShare()
    run(ShareFetch(port), 78, fetch(2, share_acquire_mode=1))
    assert port.calls[-1] == ("acquire", 500, True)
    port = FakeShare()
    renew = fetch(2, topics=(fetch_topic(2, A_ID, 0, (5, 5, (4,))),), is_renew_ack=True, min_bytes=0, max_bytes=0,
                  max_records=0)
    answer = run(ShareFetch(port), 78, renew)
    assert [c[0] for c in port.calls] == ["open", "acknowledge"]  # acknowledged, nothing acquired
    assert partitions(answer)[(A_ID, 0)].acknowledge_error_code == ErrorCode.none


@pytest.mark.parametrize(("version", "code"), [(1, ErrorCode.invalid_request), (2, ErrorCode.none)])
def test_a_renew_acknowledgement_needs_v2(version, code):
    port = FakeShare()
    topics = (fetch_topic(version, A_ID, 0, (5, 6, (4,))), fetch_topic(version, A_ID, 1, (7, 7, (1,))))
    answer = run(ShareFetch(port), 78, fetch(version, topics=topics))
    got = partitions(answer)
    assert (got[(A_ID, 0)].acknowledge_error_code, got[(A_ID, 1)].acknowledge_error_code) == (code, ErrorCode.none)
    applied = next(c[1] for c in port.calls if c[0] == "acknowledge")
    assert applied == ({("a", 1): [(7, 7, (1,))]} if version == 1 else
                       {("a", 0): [(5, 6, (4,))], ("a", 1): [(7, 7, (1,))]})


def test_fetch_answers_an_acknowledgement_error_per_partition():
    port = FakeShare(acked={("a", 0): KafkaError(ErrorCode.invalid_record_state, "Offset 5 is not held.")})
    answer = run(ShareFetch(port), 78, fetch(1, topics=(fetch_topic(1, A_ID, 0, (5, 5, (1,))),)))
    part = partitions(answer)[(A_ID, 0)]
    assert (part.acknowledge_error_code, part.acknowledge_error_message) == (
        ErrorCode.invalid_record_state, "Offset 5 is not held.")


def test_the_last_fetch_closes_the_session_and_acquires_nothing():
    port = FakeShare()
    run(ShareFetch(port), 78, fetch(1, epoch=-1))
    assert [c[0] for c in port.calls] == ["open", "close"]


def test_a_session_error_is_top_level():
    port = FakeShare(KafkaError(ErrorCode.share_session_not_found, "No share session for m1."))
    answer = run(ShareFetch(port), 78, fetch(1, epoch=4))
    assert (answer.error_code, answer.error_message, answer.responses) == (
        ErrorCode.share_session_not_found, "No share session for m1.", ())
    assert answer.acquisition_lock_timeout == datetime.timedelta(0)


# -- ShareAcknowledge ----------------------------------------------------------------------------

def acknowledge(version: int, epoch: int, *topics: Any) -> Any:
    return kio("share_acknowledge", version).ShareAcknowledgeRequest(group_id="g", member_id="m1",
                                                                     share_session_epoch=epoch, topics=topics)


def ack_topic(version: int, topic_id: uuid.UUID, index: int, first: int, types: tuple[int, ...]) -> Any:
    m = kio("share_acknowledge", version)
    return m.AcknowledgeTopic(topic_id=topic_id, partitions=(m.AcknowledgePartition(
        partition_index=index, acknowledgement_batches=(m.AcknowledgementBatch(
            first_offset=first, last_offset=first, acknowledge_types=types),)),))


@pytest.mark.parametrize("version", [1, 2])
def test_acknowledge_answers_each_partition_and_the_lock_timeout_from_v2(version):
    port = FakeShare(acked={("b", 0): KafkaError(ErrorCode.not_leader_or_follower, "Not the leader.")})
    answer = run(ShareAcknowledge(port), 79, acknowledge(version, 2, ack_topic(version, A_ID, 1, 3, (1,)),
                                                         ack_topic(version, B_ID, 0, 4, (3,)),
                                                         ack_topic(version, GONE_ID, 0, 4, (3,))))
    codes = {(t.topic_id, p.partition_index): (p.error_code, p.current_leader.leader_id)
             for t in answer.responses for p in t.partitions}
    assert codes == {(A_ID, 1): (ErrorCode.none, 2), (B_ID, 0): (ErrorCode.not_leader_or_follower, 3),
                     (GONE_ID, 0): (ErrorCode.unknown_topic_id, -1)}
    assert [n.node_id for n in answer.node_endpoints] == [3]
    assert port.calls == [("ack session", 2), ("acknowledge", {("a", 1): [(3, 3, (1,))], ("b", 0): [(4, 4, (3,))]})]
    if version >= 2:
        assert answer.acquisition_lock_timeout == datetime.timedelta(milliseconds=LOCK_MS)
    else:
        assert not hasattr(answer, "acquisition_lock_timeout")


def test_acknowledge_with_the_last_epoch_closes_the_session():
    port = FakeShare()
    run(ShareAcknowledge(port), 79, acknowledge(2, -1, ack_topic(2, A_ID, 0, 3, (2,))))
    assert [c[0] for c in port.calls] == ["ack session", "acknowledge", "close"]


def test_acknowledge_session_errors_and_missing_ids_are_top_level():
    port = FakeShare(KafkaError(ErrorCode.invalid_share_session_epoch, "ShareAcknowledge cannot open a session."))
    answer = run(ShareAcknowledge(port), 79, acknowledge(2, 0))
    assert (answer.error_code, answer.responses) == (ErrorCode.invalid_share_session_epoch, ())
    request = kio("share_acknowledge", 2).ShareAcknowledgeRequest(group_id="g", member_id="", share_session_epoch=1,
                                                                  topics=())
    assert run(ShareAcknowledge(FakeShare()), 79, request).error_code == ErrorCode.invalid_request


# -- DescribeShareGroupOffsets -------------------------------------------------------------------

def offsets(version: int, *groups: tuple[str, dict[str, tuple[int, ...]] | None]) -> Any:
    m = kio("describe_share_group_offsets", version)
    return m.DescribeShareGroupOffsetsRequest(groups=tuple(m.DescribeShareGroupOffsetsRequestGroup(
        group_id=g, topics=None if topics is None else tuple(
            m.DescribeShareGroupOffsetsRequestTopic(topic_name=t, partitions=ps) for t, ps in topics.items()))
        for g, topics in groups))


@pytest.mark.parametrize("version", [0, 1])
def test_offsets_by_topic_with_ids_and_the_lag_from_v1(version):
    port = FakeShare()
    [group] = run(DescribeShareGroupOffsets(port), 90, offsets(version, ("g", {"a": (0, 1)}))).groups
    assert group.error_code == ErrorCode.none
    assert [(t.topic_name, t.topic_id, [(p.partition_index, p.start_offset) for p in t.partitions])
            for t in group.topics] == [("a", A_ID, [(0, 5), (1, -1)]), ("b", B_ID, [(0, 10)])]
    lags = [p.lag if version >= 1 else None for t in group.topics for p in t.partitions]
    assert lags == ([0, -1, 2] if version >= 1 else [None] * 3)
    assert port.calls == [("offsets", "g", {"a": [0, 1]})]


def test_offsets_need_describe_on_each_group_and_answer_its_error():
    port = FakeShare()
    denied = run(DescribeShareGroupOffsets(port), 90, offsets(1, ("g", None)), Acls()).groups[0]
    assert (denied.error_code, denied.topics) == (ErrorCode.group_authorization_failed, ())
    assert port.calls == []
    allowed = Acls((Operation.DESCRIBE, ResourceType.GROUP, "g"))
    assert run(DescribeShareGroupOffsets(port), 90, offsets(1, ("g", None)), allowed).groups[0].error_code == 0
    assert port.calls == [("offsets", "g", None)]  # no topics named: every partition the group read
    failing = FakeShare(KafkaError(ErrorCode.group_id_not_found, "Group g not found."))
    [group] = run(DescribeShareGroupOffsets(failing), 90, offsets(1, ("g", None))).groups
    assert (group.error_code, group.error_message) == (ErrorCode.group_id_not_found, "Group g not found.")
