"""The thirteen group handlers alone (issue 27): each gets a ``Caller`` and a tiny fake port
(``FakeCoordinators``, ``FakeGroups``, ``FakeConsumerGroups`` below), never a broker, a socket or a
Cluster. A request is built at the version a client would send and lifted as dispatch lifts it
(``dispatch.lift``), so each test also checks that the answer fits that version.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import importlib
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest

from minikafka.broker import Broker
from minikafka.errors import ErrorCode, KafkaError, MemberIdRequired
from minikafka.handlers import (
    consumer_group_describe,
    consumer_group_heartbeat,
    delete_groups,
    describe_groups,
    dispatch,
    find_coordinator,
    heartbeat,
    join_group,
    leave_group,
    list_groups,
    offset_commit,
    offset_delete,
    offset_fetch,
    registry,
    sync_group,
)
from minikafka.handlers.ports import (
    Caller,
    ConsumerGroupsPort,
    CoordinatorsPort,
    FetchedOffset,
    GroupsPort,
    Listed,
    Ports,
    TxnOffset,
)
from minikafka.security.acl import CLUSTER_NAME, Operation, ResourceType
from tests.fake_authorizer import Acls
from tests.port_checks import assert_provides

NOT_COORDINATOR = KafkaError(ErrorCode.not_coordinator, "Broker 1 is not the coordinator of group 'g'.")
A_ID, B_ID, GONE_ID = uuid.UUID(int=0xA), uuid.UUID(int=0xB), uuid.UUID(int=0xDEAD)
TOPIC_IDS = {"a": A_ID, "b": B_ID}
G = ResourceType.GROUP


class TopicIds:
    """TopicIdsPort: topics "a" and "b" (ids as text, as the port gives them)."""

    def topic_name_of(self, topic_id: str) -> str | None:
        return {str(v): k for k, v in TOPIC_IDS.items()}.get(topic_id)

    def topic_id_of(self, topic: str) -> str | None:
        found = TOPIC_IDS.get(topic)
        return str(found) if found is not None else None


class FakeCoordinators:
    """CoordinatorsPort: group "g" on broker 1, transactional id "t" on broker 2, "far" on broker 9 (no address)."""

    def __init__(self) -> None:
        self.listeners: list[str | None] = []

    def group_coordinator(self, group_id: str) -> int:
        return 9 if group_id == "far" else 1

    def transaction_coordinator(self, transactional_id: str) -> int:
        return 2

    def listener_address(self, node_id: int, listener: str | None) -> tuple[str, int] | None:
        self.listeners.append(listener)
        return {1: ("127.0.0.1", 9092), 2: ("127.0.0.1", 9093)}.get(node_id)


@dataclass
class Joined:
    member_id: str
    generation_id: int
    protocol_type: str | None
    protocol_name: str | None
    leader_id: str
    members: tuple[tuple[str, str | None, bytes], ...]


@dataclass
class Synced:
    assignment: bytes
    protocol_type: str | None
    protocol_name: str | None


@dataclass
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: bytes
    protocols: dict[str, bytes]

    def metadata(self, protocol: str | None) -> bytes:
        return self.protocols.get(protocol or "", b"")


@dataclass
class ClassicGroup:
    state: str
    protocol_type: str | None
    protocol_name: str | None
    members: dict[str, Member]


class FakeGroups(TopicIds):
    """GroupsPort: records each call as (name, args) and raises ``error`` where the coordinator would."""

    def __init__(self, error: KafkaError | None = None, described: ClassicGroup | None = None,
                 fetched: list[FetchedOffset] | None = None) -> None:
        self.error, self.described, self.fetched = error, described, fetched or []
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.share_groups = {"s": "Stable"}

    def _call(self, name: str, *args: Any) -> None:
        self.calls.append((name, args))
        if self.error is not None:
            raise self.error

    def is_share_group(self, group_id: str) -> bool:
        return group_id in self.share_groups

    async def join_group(self, group_id: str, member_id: str, instance_id: str | None, client_id: str,
                         client_host: str, session_timeout_ms: int, rebalance_timeout_ms: int, protocol_type: str,
                         protocols: tuple[tuple[str, bytes], ...], require_known_member_id: bool) -> Joined:
        self._call("join", member_id, client_id, client_host, session_timeout_ms, rebalance_timeout_ms, protocols,
                   require_known_member_id)
        return Joined(member_id or "m-1", 3, protocol_type, "range", "m-1", (("m-1", None, b"sub"),))

    async def sync_group(self, group_id: str, member_id: str, instance_id: str | None, generation_id: int,
                         assignments: dict[str, bytes], protocol_type: str | None,
                         protocol_name: str | None) -> Synced:
        self._call("sync", member_id, generation_id, assignments)
        return Synced(b"mine", "consumer", "range")

    def heartbeat_group(self, group_id: str, member_id: str, instance_id: str | None, generation_id: int) -> None:
        self._call("heartbeat", group_id, member_id, generation_id)

    def leave_group(self, group_id: str, members: list[tuple[str, str | None]]) -> list[ErrorCode]:
        self._call("leave", members)
        return [ErrorCode.none if m == "m-1" else ErrorCode.unknown_member_id for m, _ in members]

    def describe_group(self, group_id: str) -> ClassicGroup | None:
        self._call("describe", group_id)
        return self.described

    def list_groups(self, states: set[str], types: set[str]) -> list[Listed]:
        self._call("list", states, types)
        return [("g", "consumer", "Stable", "classic"), ("h", "consumer", "Empty", "consumer")]

    def list_share_groups(self) -> list[tuple[str, str]]:
        return list(self.share_groups.items())

    def delete_group(self, group_id: str) -> None:
        self._call("delete", group_id)

    async def commit_offsets(self, group_id: str, member_id: str, instance_id: str | None,
                             generation_id_or_member_epoch: int, offsets: list[TxnOffset],
                             api_version: int) -> dict[tuple[str, int], ErrorCode]:
        self._call("commit", generation_id_or_member_epoch, offsets, api_version)
        return {(t, p): ErrorCode.none for t, p, *_ in offsets}

    def fetch_offsets(self, group_id: str, partitions: list[tuple[str, int]] | None, require_stable: bool,
                      member_id: str | None, member_epoch: int) -> list[FetchedOffset]:
        self._call("fetch", group_id, partitions, require_stable, member_id, member_epoch)
        if partitions is None:
            return self.fetched
        known = {(t, p): r for t, p, *r in self.fetched}
        return [(t, p, *known.get((t, p), (None, ErrorCode.none))) for t, p in partitions]  # type: ignore[misc]

    def delete_offsets(self, group_id: str, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], ErrorCode]:
        self._call("delete_offsets", group_id, partitions)
        return {tp: ErrorCode.group_subscribed_to_topic if tp[0] == "b" else ErrorCode.none for tp in partitions}


@dataclass
class Beat:
    member_id: str
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: frozenset[tuple[str, int]] | None


@dataclass
class ConsumerMember:
    member_id: str
    member_epoch: int = 4
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = "c"
    client_host: str = "/127.0.0.1"
    subscribed_topic_names: tuple[str, ...] = ("a",)
    subscribed_topic_regex: str | None = None
    assigned: frozenset[tuple[str, int]] = frozenset({("a", 0)})
    classic: object | None = None


@dataclass
class ConsumerGroup:
    members: dict[str, ConsumerMember]
    target: dict[str, frozenset[tuple[str, int]]] = field(default_factory=dict)
    state: str = "Reconciling"
    group_epoch: int = 5
    assignment_epoch: int = 4
    assignor: str = "uniform"


class FakeConsumerGroups(TopicIds):
    """ConsumerGroupsPort: hands out ``assignment`` (or raises ``error``), describes ``group``."""

    def __init__(self, error: KafkaError | None = None, assignment: frozenset[tuple[str, int]] | None = None,
                 group: ConsumerGroup | None = None) -> None:
        self.error, self.assignment, self.group = error, assignment, group
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def consumer_group_heartbeat(self, group_id: str, member_id: str, member_epoch: int, instance_id: str | None,
                                 rack_id: str | None, rebalance_timeout_ms: int,
                                 subscribed_topic_names: tuple[str, ...] | None, subscribed_topic_regex: str | None,
                                 server_assignor: str | None, owned: frozenset[tuple[str, int]] | None,
                                 client_id: str, client_host: str) -> Beat:
        self.calls.append(("heartbeat", (member_id, member_epoch, rebalance_timeout_ms, owned, client_host)))
        if self.error is not None:
            raise self.error
        return Beat(member_id, member_epoch + 1, 5000, self.assignment)

    def describe_consumer_group(self, group_id: str) -> ConsumerGroup:
        if self.group is None:
            raise KafkaError(ErrorCode.group_id_not_found, f"Group {group_id} is not found, not a consumer group.")
        return self.group


def kio(api: str, version: int, name: str) -> Any:
    return getattr(importlib.import_module(f"kio.schema.{api}.v{version}.request"), name)


def run(handler: Any, api_key: int, version: int, request: Any, authorizer: Any = None,
        listener: str | None = None) -> Any:
    caller = Caller(api_key, version, client_id="test", principal="User:alice", listener=listener,
                    authorizer=authorizer)
    return asyncio.run(handler.handle(caller, dispatch.lift(api_key, request)))


def refused(api_key: int, version: int, request: Any, code: ErrorCode) -> Any:
    """The answer dispatch gives when a request-wide ACL check or an injected fault refuses the request."""
    row = registry.HANDLERS[api_key]
    assert isinstance(row, registry.PortHandler) and row.error_response is not None
    return row.error_response(Caller(api_key, version), dispatch.lift(api_key, request), code)


# -- the ports and the registry -------------------------------------------------------------------

@pytest.mark.parametrize(("port", "fake"), [(CoordinatorsPort, FakeCoordinators), (GroupsPort, FakeGroups),
                                            (ConsumerGroupsPort, FakeConsumerGroups)])
def test_broker_and_the_fakes_provide_the_group_ports(port, fake):
    """Structurally: every method of the port, same parameters (mypy checks the types where dispatch
    builds the handlers from the broker, a ``Ports``)."""
    assert_provides(port, Broker, fake)
    assert port in Ports.__mro__


GROUP_APIS = {10: find_coordinator.FindCoordinator, 11: join_group.JoinGroup, 12: heartbeat.Heartbeat,
              13: leave_group.LeaveGroup, 14: sync_group.SyncGroup, 15: describe_groups.DescribeGroups,
              16: list_groups.ListGroups, 8: offset_commit.OffsetCommit, 9: offset_fetch.OffsetFetch,
              42: delete_groups.DeleteGroups, 47: offset_delete.OffsetDelete,
              68: consumer_group_heartbeat.ConsumerGroupHeartbeat, 69: consumer_group_describe.ConsumerGroupDescribe}


@pytest.mark.parametrize("api_key", sorted(GROUP_APIS))
def test_the_registry_builds_each_group_handler_from_ports(api_key):
    row = registry.HANDLERS[api_key]
    assert isinstance(row, registry.PortHandler) and row.make is GROUP_APIS[api_key]
    assert isinstance(row.make(FakeGroups()), row.make)  # type: ignore[arg-type]


# -- FindCoordinator ------------------------------------------------------------------------------

def test_find_coordinator_v0_answers_one_group_at_the_top():
    answer = run(find_coordinator.FindCoordinator(FakeCoordinators()), 10, 0,
                 kio("find_coordinator", 0, "FindCoordinatorRequest")(key="g"))
    assert (answer.error_code, answer.node_id, answer.host, answer.port) == (ErrorCode.none, 1, "127.0.0.1", 9092)


def test_find_coordinator_v4_answers_each_key_and_checks_describe_on_each():
    coordinators = FakeCoordinators()
    request = kio("find_coordinator", 4, "FindCoordinatorRequest")(key_type=0, coordinator_keys=("g", "h", "far"))
    answer = run(find_coordinator.FindCoordinator(coordinators), 10, 4, request,
                 Acls((Operation.DESCRIBE, G, "g"), (Operation.DESCRIBE, G, "far")), listener="SASL_PLAINTEXT")
    assert [(c.key, c.node_id, c.port, c.error_code) for c in answer.coordinators] == [
        ("g", 1, 9092, ErrorCode.none), ("h", -1, -1, ErrorCode.group_authorization_failed),
        ("far", -1, -1, ErrorCode.coordinator_not_available)]
    assert "broker 9" in answer.coordinators[2].error_message
    assert coordinators.listeners == ["SASL_PLAINTEXT", "SASL_PLAINTEXT"]  # addresses on the caller's listener


def test_find_coordinator_of_a_transactional_id_needs_describe_on_it():
    request = kio("find_coordinator", 4, "FindCoordinatorRequest")(key_type=1, coordinator_keys=("t", "u"))
    answer = run(find_coordinator.FindCoordinator(FakeCoordinators()), 10, 4, request,
                 Acls((Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, "t")))
    assert [(c.node_id, c.error_code) for c in answer.coordinators] == [
        (2, ErrorCode.none), (-1, ErrorCode.transactional_id_authorization_failed)]


def test_find_coordinator_refuses_an_unknown_key_type():
    request = kio("find_coordinator", 4, "FindCoordinatorRequest")(key_type=7, coordinator_keys=("g",))
    [found] = run(find_coordinator.FindCoordinator(FakeCoordinators()), 10, 4, request).coordinators
    assert (found.error_code, found.error_message) == (ErrorCode.invalid_request, "Unknown coordinator key type 7.")


# -- JoinGroup ------------------------------------------------------------------------------------

def join_request(version: int, member_id: str = "") -> Any:
    protocol = kio("join_group", version, "JoinGroupRequestProtocol")(name="range", metadata=b"sub")
    values: dict[str, Any] = {"group_id": "g", "session_timeout": datetime.timedelta(seconds=10),
                              "member_id": member_id, "protocol_type": "consumer", "protocols": (protocol,)}
    if version >= 1:
        values["rebalance_timeout"] = datetime.timedelta(seconds=30)
    return kio("join_group", version, "JoinGroupRequest")(**values)


@pytest.mark.parametrize(("version", "timeouts", "require_id"), [(0, (10_000, 10_000), False),
                                                                  (9, (10_000, 30_000), True)])
def test_join_group_hands_the_member_to_the_port(version, timeouts, require_id):
    groups = FakeGroups()
    answer = run(join_group.JoinGroup(groups), 11, version, join_request(version))
    assert groups.calls == [("join", ("", "test", "/127.0.0.1", *timeouts, (("range", b"sub"),), require_id))]
    assert (answer.error_code, answer.generation_id, answer.leader, answer.member_id) == (ErrorCode.none, 3, "m-1",
                                                                                         "m-1")
    assert [(m.member_id, m.metadata) for m in answer.members] == [("m-1", b"sub")]  # v0 answers the leader too
    assert answer.protocol_name == "range"


@pytest.mark.parametrize(("version", "protocol_name"), [(6, ""), (7, None)])
def test_join_group_answers_an_error_with_the_versions_empty_protocol(version, protocol_name):
    answer = run(join_group.JoinGroup(FakeGroups(NOT_COORDINATOR)), 11, version, join_request(version, "m-2"))
    assert (answer.error_code, answer.generation_id, answer.member_id) == (ErrorCode.not_coordinator, -1, "m-2")
    assert answer.protocol_name == protocol_name


def test_join_group_v4_first_join_gets_its_member_id():
    answer = run(join_group.JoinGroup(FakeGroups(MemberIdRequired("test-1234"))), 11, 4, join_request(4))
    assert (answer.error_code, answer.member_id) == (ErrorCode.member_id_required, "test-1234")


def test_join_group_refuses_the_id_of_a_share_group_without_asking_the_coordinator():
    groups = FakeGroups()
    request = join_request(9, "m-1")
    answer = run(join_group.JoinGroup(groups), 11, 9, dataclasses.replace(request, group_id="s"))
    assert (answer.error_code, answer.member_id) == (ErrorCode.inconsistent_group_protocol, "m-1")
    assert groups.calls == []


# -- Heartbeat, SyncGroup, LeaveGroup -------------------------------------------------------------

@pytest.mark.parametrize(("error", "code"), [(None, ErrorCode.none),
                                             (KafkaError(ErrorCode.rebalance_in_progress),
                                              ErrorCode.rebalance_in_progress)])
def test_heartbeat_answers_the_ports_verdict(error, code):
    groups = FakeGroups(error)
    request = kio("heartbeat", 0, "HeartbeatRequest")(group_id="g", generation_id=3, member_id="m-1")
    assert run(heartbeat.Heartbeat(groups), 12, 0, request).error_code == code
    assert groups.calls == [("heartbeat", ("g", "m-1", 3))]


def sync_request(version: int) -> Any:
    assignment = kio("sync_group", version, "SyncGroupRequestAssignment")(member_id="m-1", assignment=b"mine")
    return kio("sync_group", version, "SyncGroupRequest")(group_id="g", generation_id=3, member_id="m-1",
                                                          assignments=(assignment,))


@pytest.mark.parametrize("version", [0, 5])
def test_sync_group_gives_the_member_its_assignment(version):
    groups = FakeGroups()
    answer = run(sync_group.SyncGroup(groups), 14, version, sync_request(version))
    assert (answer.error_code, answer.assignment) == (ErrorCode.none, b"mine")
    assert groups.calls == [("sync", ("m-1", 3, {"m-1": b"mine"}))]
    if version >= 5:  # v5 names the protocol (KIP-559)
        assert (answer.protocol_type, answer.protocol_name) == ("consumer", "range")


def test_sync_group_error_has_no_assignment():
    answer = run(sync_group.SyncGroup(FakeGroups(KafkaError(ErrorCode.illegal_generation))), 14, 5, sync_request(5))
    assert (answer.error_code, answer.assignment, answer.protocol_name) == (ErrorCode.illegal_generation, b"", None)


def test_leave_group_v0_answers_its_one_member_at_the_top():
    groups = FakeGroups()
    answer = run(leave_group.LeaveGroup(groups), 13, 0,
                 kio("leave_group", 0, "LeaveGroupRequest")(group_id="g", member_id="m-9"))
    assert answer.error_code == ErrorCode.unknown_member_id
    assert groups.calls == [("leave", ([("m-9", None)],))]


def test_leave_group_v3_answers_each_member():
    identity = kio("leave_group", 3, "MemberIdentity")
    request = kio("leave_group", 3, "LeaveGroupRequest")(
        group_id="g", members=(identity(member_id="m-1"), identity(member_id="", group_instance_id="i-2")))
    answer = run(leave_group.LeaveGroup(FakeGroups()), 13, 3, request)
    assert answer.error_code == ErrorCode.none
    assert [(m.member_id, m.group_instance_id, m.error_code) for m in answer.members] == [
        ("m-1", None, ErrorCode.none), ("", "i-2", ErrorCode.unknown_member_id)]


def test_leave_group_whole_request_error():
    answer = run(leave_group.LeaveGroup(FakeGroups(NOT_COORDINATOR)), 13, 3,
                 kio("leave_group", 3, "LeaveGroupRequest")(group_id="g", members=()))
    assert (answer.error_code, answer.members) == (ErrorCode.not_coordinator, ())


# -- DescribeGroups, ListGroups, DeleteGroups -----------------------------------------------------

def described(state: str) -> ClassicGroup:
    member = Member("m-1", None, "c", "/127.0.0.1", b"assigned", {"range": b"sub"})
    return ClassicGroup(state, "consumer", "range", {"m-1": member})


def describe_request(version: int, *groups: str, operations: bool = False) -> Any:
    values = {"include_authorized_operations": operations} if version >= 3 else {}
    return kio("describe_groups", version, "DescribeGroupsRequest")(groups=groups, **values)


def test_describe_groups_shows_metadata_and_assignments_only_while_stable():
    for state, shown in (("Stable", (b"sub", b"assigned", "range")), ("PreparingRebalance", (b"", b"", ""))):
        [group] = run(describe_groups.DescribeGroups(FakeGroups(described=described(state))), 15, 5,
                      describe_request(5, "g")).groups
        [member] = group.members
        assert (group.error_code, group.group_state, group.protocol_type) == (ErrorCode.none, state, "consumer")
        assert (member.member_metadata, member.member_assignment, group.protocol_data) == shown


@pytest.mark.parametrize(("version", "code", "state"), [(5, ErrorCode.none, "Dead"),
                                                        (6, ErrorCode.group_id_not_found, "")])
def test_describe_groups_of_an_unknown_group(version, code, state):
    [group] = run(describe_groups.DescribeGroups(FakeGroups()), 15, version, describe_request(version, "nope")).groups
    assert (group.error_code, group.group_state, group.members) == (code, state, ())


def test_describe_groups_needs_describe_on_each_group_and_reports_the_operations():
    groups = FakeGroups(described=described("Stable"))
    allowed = Acls((Operation.DESCRIBE, G, "g"), (Operation.READ, G, "g"))
    answer = run(describe_groups.DescribeGroups(groups), 15, 5, describe_request(5, "g", "h", operations=True),
                 allowed)
    assert [(g.group_id, g.error_code) for g in answer.groups] == [("g", ErrorCode.none),
                                                                   ("h", ErrorCode.group_authorization_failed)]
    assert answer.groups[0].authorized_operations == 1 << int(Operation.DESCRIBE) | 1 << int(Operation.READ)
    assert groups.calls == [("describe", ("g",))]


def test_describe_groups_coordinator_error():
    [group] = run(describe_groups.DescribeGroups(FakeGroups(NOT_COORDINATOR)), 15, 0,
                  describe_request(0, "g")).groups
    assert group.error_code == ErrorCode.not_coordinator


def list_request(version: int, states: tuple[str, ...] = (), types: tuple[str, ...] = ()) -> Any:
    values: dict[str, Any] = {"states_filter": states} if version >= 4 else {}
    if version >= 5:
        values["types_filter"] = types
    return kio("list_groups", version, "ListGroupsRequest")(**values)


def test_list_groups_v0_lists_the_coordinators_and_the_share_groups():
    answer = run(list_groups.ListGroups(FakeGroups()), 16, 0, list_request(0))
    assert (answer.error_code, [(g.group_id, g.protocol_type) for g in answer.groups]) == (
        ErrorCode.none, [("g", "consumer"), ("h", "consumer"), ("s", "share")])


def test_list_groups_v5_filters_share_groups_by_state_and_type():
    groups = FakeGroups()
    answer = run(list_groups.ListGroups(groups), 16, 5, list_request(5, states=("empty",)))
    assert ("s", "share", "Stable", "share") not in [(g.group_id, g.protocol_type, g.group_state, g.group_type)
                                                     for g in answer.groups]
    answer = run(list_groups.ListGroups(groups), 16, 5, list_request(5, types=("share",)))
    assert [(g.group_id, g.group_state, g.group_type) for g in answer.groups][-1] == ("s", "Stable", "share")
    assert groups.calls[0] == ("list", ({"empty"}, set()))


def test_list_groups_shows_all_with_describe_on_the_cluster_else_the_groups_one_may_describe():
    everything = run(list_groups.ListGroups(FakeGroups()), 16, 4, list_request(4),
                     Acls((Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME)))
    assert [g.group_id for g in everything.groups] == ["g", "h", "s"]
    some = run(list_groups.ListGroups(FakeGroups()), 16, 4, list_request(4), Acls((Operation.DESCRIBE, G, "h")))
    assert [(g.group_id, g.group_state) for g in some.groups] == [("h", "Empty")]


def test_list_groups_coordinator_error():
    answer = run(list_groups.ListGroups(FakeGroups(KafkaError(ErrorCode.coordinator_load_in_progress))), 16, 0,
                 list_request(0))
    assert (answer.error_code, answer.groups) == (ErrorCode.coordinator_load_in_progress, ())


@pytest.mark.parametrize("version", [0, 2])
def test_delete_groups_needs_delete_on_each_group(version):
    groups = FakeGroups()
    request = kio("delete_groups", version, "DeleteGroupsRequest")(groups_names=("g", "h"))
    answer = run(delete_groups.DeleteGroups(groups), 42, version, request, Acls((Operation.DELETE, G, "g")))
    assert [(r.group_id, r.error_code) for r in answer.results] == [("g", ErrorCode.none),
                                                                    ("h", ErrorCode.group_authorization_failed)]
    assert groups.calls == [("delete", ("g",))]


def test_delete_groups_answers_the_coordinators_error_per_group():
    request = kio("delete_groups", 2, "DeleteGroupsRequest")(groups_names=("g",))
    answer = run(delete_groups.DeleteGroups(FakeGroups(KafkaError(ErrorCode.non_empty_group))), 42, 2, request)
    assert [r.error_code for r in answer.results] == [ErrorCode.non_empty_group]


# -- OffsetCommit ---------------------------------------------------------------------------------

def commit_request(version: int, *topics: tuple[Any, tuple[int, ...]]) -> Any:
    partition, topic = (kio("offset_commit", version, n) for n in ("OffsetCommitRequestPartition",
                                                                   "OffsetCommitRequestTopic"))
    key = "topic_id" if version >= 10 else "name"
    values: dict[str, Any] = {"group_id": "g", "member_id": "m-1", "topics": tuple(
        topic(**{key: t}, partitions=tuple(partition(partition_index=p, committed_offset=10 + p,
                                                     committed_metadata=None) for p in ps)) for t, ps in topics)}
    if version >= 1:
        values["generation_id_or_member_epoch"] = 3
    return kio("offset_commit", version, "OffsetCommitRequest")(**values)


def committed(answer: Any, key: str = "name") -> dict[tuple[Any, int], ErrorCode]:
    return {(getattr(t, key), p.partition_index): p.error_code for t in answer.topics for p in t.partitions}


@pytest.mark.parametrize("version", [2, 8])
def test_offset_commit_refuses_a_topic_without_read_and_commits_the_rest(version):
    groups = FakeGroups()
    answer = run(offset_commit.OffsetCommit(groups), 8, version, commit_request(version, ("a", (0, 1)), ("b", (0,))),
                 Acls((Operation.READ, ResourceType.TOPIC, "a")))
    assert committed(answer) == {("a", 0): ErrorCode.none, ("a", 1): ErrorCode.none,
                                 ("b", 0): ErrorCode.topic_authorization_failed}
    assert groups.calls == [("commit", (3, [("a", 0, 10, -1, ""), ("a", 1, 11, -1, "")], version))]


def test_offset_commit_reports_a_group_error_on_every_partition():
    answer = run(offset_commit.OffsetCommit(FakeGroups(KafkaError(ErrorCode.stale_member_epoch))), 8, 9,
                 commit_request(9, ("a", (0,)), ("b", (0,))))
    assert set(committed(answer).values()) == {ErrorCode.stale_member_epoch}


def test_offset_commit_v10_names_topics_by_id_and_answers_an_unknown_id():
    groups = FakeGroups()
    answer = run(offset_commit.OffsetCommit(groups), 8, 10, commit_request(10, (A_ID, (0,)), (GONE_ID, (0, 1))))
    assert committed(answer, "topic_id") == {(A_ID, 0): ErrorCode.none, (GONE_ID, 0): ErrorCode.unknown_topic_id,
                                             (GONE_ID, 1): ErrorCode.unknown_topic_id}
    assert groups.calls == [("commit", (3, [("a", 0, 10, -1, "")], 10))]


def test_offset_commit_with_nothing_known_asks_the_port_nothing():
    groups = FakeGroups()
    answer = run(offset_commit.OffsetCommit(groups), 8, 10, commit_request(10, (GONE_ID, (0,))))
    assert committed(answer, "topic_id") == {(GONE_ID, 0): ErrorCode.unknown_topic_id}
    assert groups.calls == []


@pytest.mark.parametrize("version", [2, 10])
def test_offset_commit_refused_fails_every_partition(version):
    topic = A_ID if version >= 10 else "a"
    answer = refused(8, version, commit_request(version, (topic, (0, 1))), ErrorCode.group_authorization_failed)
    assert set(committed(answer, "topic_id" if version >= 10 else "name").values()) == {
        ErrorCode.group_authorization_failed}


# -- OffsetFetch ----------------------------------------------------------------------------------

FETCHED: list[FetchedOffset] = [("a", 0, (10, 2, "m"), ErrorCode.none), ("b", 0, (20, -1, ""), ErrorCode.none),
                                ("gone", 0, (5, -1, ""), ErrorCode.none)]


def fetch_v1(topics: tuple[str, ...] | None) -> Any:
    topic = kio("offset_fetch", 1, "OffsetFetchRequestTopic")
    return kio("offset_fetch", 1, "OffsetFetchRequest")(
        group_id="g", topics=None if topics is None else tuple(topic(name=t, partition_indexes=(0,)) for t in topics))


def partitions(topics: Any, key: str = "name") -> dict[tuple[Any, int], tuple[int, int, str, ErrorCode]]:
    return {(getattr(t, key), p.partition_index): (p.committed_offset, getattr(p, "committed_leader_epoch", -1),
                                                   p.metadata, p.error_code) for t in topics for p in t.partitions}


def test_offset_fetch_v1_answers_each_partition_asked_minus_one_for_none():
    groups = FakeGroups(fetched=FETCHED[:1])
    answer = run(offset_fetch.OffsetFetch(groups), 9, 1, fetch_v1(("a", "b")))
    assert partitions(answer.topics) == {("a", 0): (10, -1, "m", ErrorCode.none),  # v1 has no leader epoch
                                         ("b", 0): (-1, -1, "", ErrorCode.none)}
    assert groups.calls == [("fetch", ("g", [("a", 0), ("b", 0)], False, None, -1))]


def test_offset_fetch_v1_has_no_group_error_v2_has():
    v1 = run(offset_fetch.OffsetFetch(FakeGroups(NOT_COORDINATOR)), 9, 1, fetch_v1(("a",)))
    assert [p.error_code for t in v1.topics for p in t.partitions] == [ErrorCode.not_coordinator]
    v2 = run(offset_fetch.OffsetFetch(FakeGroups(NOT_COORDINATOR)), 9, 2,
             kio("offset_fetch", 2, "OffsetFetchRequest")(group_id="g", topics=None))
    assert (v2.error_code, v2.topics) == (ErrorCode.not_coordinator, ())


def fetch_v8(*groups: tuple[str, tuple[str, ...] | None]) -> Any:
    group, topic = (kio("offset_fetch", 8, n) for n in ("OffsetFetchRequestGroup", "OffsetFetchRequestTopics"))
    return kio("offset_fetch", 8, "OffsetFetchRequest")(require_stable=True, groups=tuple(
        group(group_id=g, topics=None if ts is None else tuple(topic(name=t, partition_indexes=(0,)) for t in ts))
        for g, ts in groups))


def test_offset_fetch_v8_answers_each_group_and_checks_describe_on_groups_and_topics():
    groups = FakeGroups(fetched=FETCHED)
    allowed = Acls((Operation.DESCRIBE, G, "g"), (Operation.DESCRIBE, ResourceType.TOPIC, "a"),
                   (Operation.DESCRIBE, ResourceType.TOPIC, "gone"))
    answer = run(offset_fetch.OffsetFetch(groups), 9, 8, fetch_v8(("g", None), ("g", ("a", "b")), ("h", ("a",))),
                 allowed)
    every, named, denied = answer.groups
    assert partitions(every.topics) == {("a", 0): (10, 2, "m", ErrorCode.none),  # "b" left out of "all"
                                        ("gone", 0): (5, -1, "", ErrorCode.none)}
    assert partitions(named.topics) == {("a", 0): (10, 2, "m", ErrorCode.none),
                                        ("b", 0): (-1, -1, "", ErrorCode.topic_authorization_failed)}
    assert (denied.group_id, denied.error_code, denied.topics) == ("h", ErrorCode.group_authorization_failed, ())
    assert [c[1][2] for c in groups.calls] == [True, True]  # require_stable, and h never asked


def test_offset_fetch_v10_names_topics_by_id():
    groups = FakeGroups(fetched=FETCHED)
    group, topic = (kio("offset_fetch", 10, n) for n in ("OffsetFetchRequestGroup", "OffsetFetchRequestTopics"))
    request = kio("offset_fetch", 10, "OffsetFetchRequest")(require_stable=False, groups=(
        group(group_id="g", member_id="m-1", member_epoch=4, topics=None),
        group(group_id="g", topics=(topic(topic_id=A_ID, partition_indexes=(0,)),
                                    topic(topic_id=GONE_ID, partition_indexes=(0,))))))
    every, named = run(offset_fetch.OffsetFetch(groups), 9, 10, request).groups
    assert partitions(every.topics, "topic_id") == {(A_ID, 0): (10, 2, "m", ErrorCode.none),  # "gone": no id
                                                    (B_ID, 0): (20, -1, "", ErrorCode.none)}
    assert partitions(named.topics, "topic_id") == {(A_ID, 0): (10, 2, "m", ErrorCode.none),
                                                    (GONE_ID, 0): (-1, -1, "", ErrorCode.unknown_topic_id)}
    assert groups.calls[0] == ("fetch", ("g", None, False, "m-1", 4))


@pytest.mark.parametrize("version", [1, 8])
def test_offset_fetch_refused_answers_the_group_error(version):
    request = fetch_v1(("a",)) if version < 8 else fetch_v8(("g", ("a",)), ("h", None))
    answer = refused(9, version, request, ErrorCode.group_authorization_failed)
    if version >= 8:
        assert [(g.group_id, g.error_code) for g in answer.groups] == [
            ("g", ErrorCode.group_authorization_failed), ("h", ErrorCode.group_authorization_failed)]
    else:  # v0-1 have no group-level error code: each partition asked carries it
        assert partitions(answer.topics) == {("a", 0): (-1, -1, "", ErrorCode.group_authorization_failed)}


# -- OffsetDelete ---------------------------------------------------------------------------------

def delete_request(*topics: str) -> Any:
    partition, topic = (kio("offset_delete", 0, n) for n in ("OffsetDeleteRequestPartition",
                                                             "OffsetDeleteRequestTopic"))
    return kio("offset_delete", 0, "OffsetDeleteRequest")(group_id="g", topics=tuple(
        topic(name=t, partitions=(partition(partition_index=0),)) for t in topics))


def test_offset_delete_refuses_a_topic_without_read_and_deletes_the_rest():
    groups = FakeGroups()
    answer = run(offset_delete.OffsetDelete(groups), 47, 0, delete_request("a", "b", "c"),
                 Acls((Operation.READ, ResourceType.TOPIC, "a"), (Operation.READ, ResourceType.TOPIC, "b")))
    assert answer.error_code == ErrorCode.none
    assert committed(answer) == {("a", 0): ErrorCode.none, ("b", 0): ErrorCode.group_subscribed_to_topic,
                                 ("c", 0): ErrorCode.topic_authorization_failed}
    assert groups.calls == [("delete_offsets", ("g", [("a", 0), ("b", 0)]))]


def test_offset_delete_group_error_is_top_level():
    answer = run(offset_delete.OffsetDelete(FakeGroups(KafkaError(ErrorCode.group_id_not_found))), 47, 0,
                 delete_request("a"))
    assert (answer.error_code, answer.topics) == (ErrorCode.group_id_not_found, ())


# -- ConsumerGroupHeartbeat -----------------------------------------------------------------------

def beat_request(version: int, member_id: str = "", epoch: int = 0, owned: tuple[uuid.UUID, ...] | None = None) -> Any:
    topic = kio("consumer_group_heartbeat", version, "TopicPartitions")
    return kio("consumer_group_heartbeat", version, "ConsumerGroupHeartbeatRequest")(
        group_id="g", member_id=member_id, member_epoch=epoch, rebalance_timeout=datetime.timedelta(seconds=45),
        subscribed_topic_names=("a", "b"),
        topic_partitions=None if owned is None else tuple(topic(topic_id=t, partitions=(0, 1)) for t in owned))


@pytest.mark.parametrize(("version", "chooses"), [(0, True), (1, False)])
def test_consumer_group_heartbeat_v0_lets_the_coordinator_choose_the_member_id(version, chooses):
    groups = FakeConsumerGroups()
    run(consumer_group_heartbeat.ConsumerGroupHeartbeat(groups), 68, version, beat_request(version))
    [(_, (member_id, epoch, rebalance_ms, owned, host))] = groups.calls
    assert (bool(member_id), epoch, rebalance_ms, owned, host) == (chooses, 0, 45_000, None, "/127.0.0.1")


def test_consumer_group_heartbeat_turns_topic_ids_into_names_and_back():
    groups = FakeConsumerGroups(assignment=frozenset({("a", 1), ("b", 0), ("a", 0), ("gone", 0)}))
    answer = run(consumer_group_heartbeat.ConsumerGroupHeartbeat(groups), 68, 1,
                 beat_request(1, "m-1", 4, owned=(A_ID, GONE_ID)))
    assert groups.calls[0][1][3] == frozenset({("a", 0), ("a", 1)})  # a deleted topic's partitions: nobody's
    assert (answer.error_code, answer.member_id, answer.member_epoch) == (ErrorCode.none, "m-1", 5)
    assert answer.heartbeat_interval == datetime.timedelta(seconds=5)
    assert [(t.topic_id, t.partitions) for t in answer.assignment.topic_partitions] == [(A_ID, (0, 1)), (B_ID, (0,))]


def test_consumer_group_heartbeat_unchanged_assignment_is_null():
    answer = run(consumer_group_heartbeat.ConsumerGroupHeartbeat(FakeConsumerGroups()), 68, 1, beat_request(1, "m", 4))
    assert answer.assignment is None


def test_consumer_group_heartbeat_error_carries_the_message():
    error = KafkaError(ErrorCode.fenced_member_epoch, "The member epoch 4 is fenced.")
    answer = run(consumer_group_heartbeat.ConsumerGroupHeartbeat(FakeConsumerGroups(error)), 68, 1,
                 beat_request(1, "m", 4))
    assert (answer.error_code, answer.error_message, answer.member_epoch, answer.member_id) == (
        ErrorCode.fenced_member_epoch, "The member epoch 4 is fenced.", -1, None)


# -- ConsumerGroupDescribe ------------------------------------------------------------------------

def consumer_describe_request(version: int, *groups: str, operations: bool = False) -> Any:
    return kio("consumer_group_describe", version, "ConsumerGroupDescribeRequest")(
        group_ids=groups, include_authorized_operations=operations)


@pytest.mark.parametrize("version", [0, 1])
def test_consumer_group_describe_shows_epochs_and_each_members_assignment_and_target(version):
    group = ConsumerGroup({"m-1": ConsumerMember("m-1"), "m-2": ConsumerMember("m-2", classic=object())},
                          target={"m-1": frozenset({("a", 0), ("b", 1)})})
    [described] = run(consumer_group_describe.ConsumerGroupDescribe(FakeConsumerGroups(group=group)), 69, version,
                      consumer_describe_request(version, "g")).groups
    assert (described.error_code, described.group_state, described.group_epoch, described.assignment_epoch,
            described.assignor_name) == (ErrorCode.none, "Reconciling", 5, 4, "uniform")
    first, second = described.members
    assert [(t.topic_id, t.topic_name, t.partitions) for t in first.assignment.topic_partitions] == [(A_ID, "a", (0,))]
    assert [(t.topic_name, t.partitions) for t in first.target_assignment.topic_partitions] == [("a", (0,)),
                                                                                                ("b", (1,))]
    assert second.target_assignment.topic_partitions == ()
    if version >= 1:  # MemberType: a classic member joined with JoinGroup
        assert (first.member_type, second.member_type) == (1, 0)


def test_consumer_group_describe_needs_describe_and_answers_not_found():
    allowed = Acls((Operation.DESCRIBE, G, "g"))
    answer = run(consumer_group_describe.ConsumerGroupDescribe(FakeConsumerGroups()), 69, 1,
                 consumer_describe_request(1, "g", "h", operations=True), allowed)
    assert [(g.group_id, g.error_code) for g in answer.groups] == [("g", ErrorCode.group_id_not_found),
                                                                   ("h", ErrorCode.group_authorization_failed)]
    assert "not a consumer group" in answer.groups[0].error_message


def test_consumer_group_describe_reports_the_operations_asked_for():
    group = ConsumerGroup({})
    allowed = Acls((Operation.DESCRIBE, G, "g"))
    [with_ops] = run(consumer_group_describe.ConsumerGroupDescribe(FakeConsumerGroups(group=group)), 69, 1,
                     consumer_describe_request(1, "g", operations=True), allowed).groups
    [without] = run(consumer_group_describe.ConsumerGroupDescribe(FakeConsumerGroups(group=group)), 69, 1,
                    consumer_describe_request(1, "g"), allowed).groups
    assert (with_ops.authorized_operations, without.authorized_operations) == (1 << int(Operation.DESCRIBE), -(2**31))


def test_consumer_group_describe_refused_fails_every_group():
    answer = refused(69, 0, consumer_describe_request(0, "g", "h"), ErrorCode.group_authorization_failed)
    assert [g.error_code for g in answer.groups] == [ErrorCode.group_authorization_failed] * 2
