"""Every advertised version of every group API really works, on the wire.

One group's whole life (FindCoordinator, the MEMBER_ID_REQUIRED round trip, JoinGroup,
SyncGroup, Heartbeat, OffsetCommit, OffsetFetch, DescribeGroups, ListGroups,
LeaveGroup, OffsetDelete, DeleteGroups) is replayed once per version number, each API
at that version or its highest advertised one. Requests are built with kio, as real
clients would encode them, so a field a version lacks can never slip in.
"""

from __future__ import annotations

import datetime
import struct

import pytest

from minikafka.errors import ErrorCode
from minikafka.protocol import codec
from minikafka.protocol.apis import BY_KEY
from tests.rawclient import RawClient

FIND, JOIN, HEARTBEAT, LEAVE, SYNC, DESCRIBE, LIST, COMMIT, FETCH, DELETE, OFFSET_DELETE = (
    10, 11, 12, 13, 14, 15, 16, 8, 9, 42, 47)
MS = datetime.timedelta(milliseconds=1)


def version(api_key: int, n: int) -> int:
    api = BY_KEY[api_key]
    return max(api.min_version, min(n, api.max_version))


def req(api_key: int, n: int, **fields):
    return codec.downgrade(codec.request_class(api_key, version(api_key, n)), **fields)


def nested(api_key: int, n: int, entity: str, /, **fields):
    return codec.entity(codec.request_module(api_key, version(api_key, n)), entity, **fields)


SUBSCRIPTION = struct.pack(">hih", 0, 1, 1) + b"t" + struct.pack(">i", -1)


def join(client, group: str, n: int, member_id: str = ""):
    protocols = (nested(JOIN, n, "JoinGroupRequestProtocol", name="range", metadata=SUBSCRIPTION),)
    return client.request(req(JOIN, n, group_id=group, session_timeout=10_000 * MS, rebalance_timeout=10_000 * MS,
                              member_id=member_id, group_instance_id=None, protocol_type="consumer",
                              protocols=protocols, reason=None))


def join_and_sync(client, group: str, n: int) -> tuple[str, int]:
    first = join(client, group, n)
    if version(JOIN, n) >= 4:
        assert first.error_code == ErrorCode.member_id_required and first.member_id
        first = join(client, group, n, first.member_id)
    assert first.error_code == ErrorCode.none and first.leader == first.member_id and first.generation_id == 1
    assignment = nested(SYNC, n, "SyncGroupRequestAssignment", member_id=first.member_id, assignment=b"A")
    synced = client.request(req(SYNC, n, group_id=group, generation_id=1, member_id=first.member_id,
                                group_instance_id=None, protocol_type="consumer", protocol_name="range",
                                assignments=(assignment,)))
    assert synced.error_code == ErrorCode.none and synced.assignment == b"A"
    return first.member_id, first.generation_id


def commit_and_fetch(client, group: str, n: int, member_id: str, generation: int, topic: str) -> None:
    part = nested(COMMIT, n, "OffsetCommitRequestPartition", partition_index=0, committed_offset=42,
                  committed_leader_epoch=-1, committed_metadata="note")
    topics = (nested(COMMIT, n, "OffsetCommitRequestTopic", name=topic, partitions=(part,)),)
    committed = client.request(req(COMMIT, n, group_id=group, generation_id_or_member_epoch=generation,
                                   member_id=member_id, group_instance_id=None, retention_time=-1 * MS, topics=topics))
    assert committed.topics[0].partitions[0].error_code == ErrorCode.none
    if version(FETCH, n) >= 8:  # several groups per request (KIP-709), each with its answer
        wanted = (nested(FETCH, n, "OffsetFetchRequestTopics", name=topic, partition_indexes=(0,)),)
        one = nested(FETCH, n, "OffsetFetchRequestGroup", group_id=group, member_id=None, member_epoch=-1,
                     topics=wanted)
        answer = client.request(req(FETCH, n, groups=(one,), require_stable=False)).groups[0]
        assert (answer.group_id, answer.error_code) == (group, ErrorCode.none)
    else:
        wanted = (nested(FETCH, n, "OffsetFetchRequestTopic", name=topic, partition_indexes=(0,)),)
        answer = client.request(req(FETCH, n, group_id=group, topics=wanted, require_stable=False))
    p = answer.topics[0].partitions[0]
    assert (p.committed_offset, p.metadata, p.error_code) == (42, "note", ErrorCode.none)


def describe_and_list(client, group: str, n: int, member_id: str) -> None:
    described = client.request(req(DESCRIBE, n, groups=(group,), include_authorized_operations=True)).groups[0]
    assert (described.group_state, described.protocol_data) == ("Stable", "range")
    assert described.members[0].member_id == member_id and described.members[0].member_assignment == b"A"
    listed = client.request(req(LIST, n, states_filter=("stable",)))
    assert group in {g.group_id for g in listed.groups}
    if version(LIST, n) >= 5:  # the group type (KIP-848), and a filter by it
        assert {g.group_id: g.group_type for g in listed.groups}[group] == "classic"
        others = client.request(req(LIST, n, states_filter=(), types_filter=("consumer",)))
        assert group not in {g.group_id for g in others.groups}


def leave(client, group: str, n: int, member_id: str) -> None:
    if version(LEAVE, n) >= 3:
        members = (nested(LEAVE, n, "MemberIdentity", member_id=member_id, group_instance_id=None, reason=None),)
        left = client.request(req(LEAVE, n, group_id=group, members=members))
        assert left.members[0].error_code == ErrorCode.none
    else:
        left = client.request(req(LEAVE, n, group_id=group, member_id=member_id))
    assert left.error_code == ErrorCode.none


@pytest.mark.parametrize("n", range(10))
def test_group_life_at_version(bootstrap, cluster, topic_name, n):
    cluster.create_topic(topic_name, partitions=1)
    group = f"versions-{n}"
    with RawClient(bootstrap) as client:
        if version(FIND, n) >= 4:  # KIP-699: a list of keys, one answer each
            found = client.request(req(FIND, n, key_type=0, coordinator_keys=(group,))).coordinators[0]
        else:
            found = client.request(req(FIND, n, key=group, key_type=0))
        assert found.error_code == ErrorCode.none and found.node_id == 1
        member_id, generation = join_and_sync(client, group, n)
        beat = client.request(req(HEARTBEAT, n, group_id=group, generation_id=generation, member_id=member_id,
                                  group_instance_id=None))
        assert beat.error_code == ErrorCode.none
        commit_and_fetch(client, group, n, member_id, generation, topic_name)
        describe_and_list(client, group, n, member_id)
        leave(client, group, n, member_id)
        parts = (nested(OFFSET_DELETE, n, "OffsetDeleteRequestPartition", partition_index=0),)
        topics = (nested(OFFSET_DELETE, n, "OffsetDeleteRequestTopic", name=topic_name, partitions=parts),)
        deleted = client.request(req(OFFSET_DELETE, n, group_id=group, topics=topics))
        assert deleted.error_code == ErrorCode.none
        result = client.request(req(DELETE, n, groups_names=(group,))).results[0]
        assert result.error_code == ErrorCode.none
        again = client.request(req(DELETE, n, groups_names=(group,))).results[0]
        assert again.error_code == ErrorCode.group_id_not_found
