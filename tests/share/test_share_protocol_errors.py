"""The error codes of KIP-932's four APIs, over the wire, for what real clients never send:
unknown and fenced members, wrong share session epochs, acknowledgements of records a
member does not hold, and a group id already used by a group of another type."""

from __future__ import annotations

import dataclasses
import datetime
import uuid

import pytest
from kio.schema.join_group.v5.request import JoinGroupRequestProtocol, JoinGroupRequest
from kio.schema.share_acknowledge.v1 import request as ack_req
from kio.schema.share_fetch.v1 import request as fetch_req
from kio.schema.share_group_describe.v1.request import ShareGroupDescribeRequest
from kio.schema.share_group_heartbeat.v1.request import ShareGroupHeartbeatRequest

from minikafka.errors import ErrorCode
from tests.rawclient import RawClient
from tests.share.helpers import SHARE_CONFIG, earliest, produce_batches

pytestmark = pytest.mark.timeout(60)
ACCEPT = 1


@pytest.fixture
def share_cluster(make_cluster):
    return make_cluster(config={**SHARE_CONFIG, "group.share.max.share.sessions": 3})


@pytest.fixture
def raw(share_cluster):
    with RawClient(share_cluster.bootstrap_servers) as client:
        yield client


def heartbeat(raw, group, member, epoch, topics=None):
    return raw.request(ShareGroupHeartbeatRequest(group_id=group, member_id=member, member_epoch=epoch,
                                                  subscribed_topic_names=topics))


def fetch(raw, group, member, epoch, topic_id=None, acks=(), forgotten=(), wait_ms=0):
    """One ShareFetch of partition 0 (``acks``: (first, last, type) batches), or of nothing."""
    topics = () if topic_id is None else (fetch_req.FetchTopic(topic_id=topic_id, partitions=(
        fetch_req.FetchPartition(partition_index=0, acknowledgement_batches=tuple(
            fetch_req.AcknowledgementBatch(first_offset=f, last_offset=last, acknowledge_types=(t,))
            for f, last, t in acks)),)),)
    return raw.request(fetch_req.ShareFetchRequest(
        group_id=group, member_id=member, share_session_epoch=epoch, max_wait=datetime.timedelta(milliseconds=wait_ms),
        min_bytes=1, max_records=10, batch_size=10, topics=topics,
        forgotten_topics_data=tuple(fetch_req.ForgottenTopic(topic_id=t, partitions=(0,)) for t in forgotten)))


def acknowledge(raw, group, member, epoch, topic_id, acks):
    batches = tuple(ack_req.AcknowledgementBatch(first_offset=f, last_offset=last, acknowledge_types=(t,))
                    for f, last, t in acks)
    part = ack_req.AcknowledgePartition(partition_index=0, acknowledgement_batches=batches)
    return raw.request(ack_req.ShareAcknowledgeRequest(
        group_id=group, member_id=member, share_session_epoch=epoch,
        topics=(ack_req.AcknowledgeTopic(topic_id=topic_id, partitions=(part,)),)))


def partition(response):
    [topic] = response.responses
    [part] = topic.partitions
    return part


@pytest.fixture
def topic_id(share_cluster, topic_name):
    earliest(share_cluster.bootstrap_servers, "g")
    produce_batches(share_cluster.bootstrap_servers, topic_name, 3)
    return uuid.UUID(share_cluster.metadata.topics[topic_name].topic_id)


def test_heartbeats_join_assign_fence_and_leave(raw, share_cluster, topic_name, topic_id):
    joined = heartbeat(raw, "g", "m1", 0, (topic_name,))
    assert (joined.error_code, joined.member_id, joined.member_epoch) == (ErrorCode.none, "m1", 1)
    assert [(t.topic_id, t.partitions) for t in joined.assignment.topic_partitions] == [(topic_id, (0,))]
    assert heartbeat(raw, "g", "m2", 0, (topic_name,)).member_epoch == 2, "every member gets the partition"
    moved = heartbeat(raw, "g", "m1", 1)
    assert (moved.error_code, moved.member_epoch) == (ErrorCode.none, 2) and moved.assignment is not None
    assert heartbeat(raw, "g", "m1", 2).assignment is None, "no news, no assignment"
    assert heartbeat(raw, "g", "m1", 1).error_code == ErrorCode.fenced_member_epoch
    assert heartbeat(raw, "g", "ghost", 2).error_code == ErrorCode.unknown_member_id
    assert heartbeat(raw, "g", "m3", 0).error_code == ErrorCode.invalid_request, "a join names its topics"
    left = heartbeat(raw, "g", "m2", -1)
    assert (left.error_code, left.member_epoch) == (ErrorCode.none, -1)
    [described] = raw.request(ShareGroupDescribeRequest(group_ids=("g",), include_authorized_operations=False)).groups
    assert (described.error_code, described.group_state, described.group_epoch) == (ErrorCode.none, "Stable", 3)
    assert [(m.member_id, m.member_epoch) for m in described.members] == [("m1", 2)]
    assert described.members[0].assignment.topic_partitions[0].topic_name == topic_name


def test_a_group_id_is_either_a_share_group_or_a_consumer_group(raw, topic_name):
    join = JoinGroupRequest(group_id="classic", session_timeout=datetime.timedelta(seconds=10),
                            rebalance_timeout=datetime.timedelta(seconds=10), member_id="", group_instance_id=None,
                            protocol_type="consumer", protocols=(JoinGroupRequestProtocol(name="range", metadata=b""),))
    assert raw.request(join).error_code == ErrorCode.member_id_required  # now the group exists
    assert heartbeat(raw, "classic", "m", 0, (topic_name,)).error_code == ErrorCode.group_id_not_found
    assert heartbeat(raw, "shared", "m", 0, (topic_name,)).error_code == ErrorCode.none
    assert raw.request(dataclasses.replace(join, group_id="shared")).error_code == \
        ErrorCode.inconsistent_group_protocol
    [unknown] = raw.request(ShareGroupDescribeRequest(group_ids=("classic",),
                                                      include_authorized_operations=False)).groups
    assert (unknown.error_code, unknown.error_message) == (ErrorCode.group_id_not_found,
                                                          "Group classic is not a share group.")


def test_share_session_epochs(raw, topic_id):
    assert fetch(raw, "g", "m", 1, topic_id).error_code == ErrorCode.share_session_not_found
    assert fetch(raw, "g", "m", 0, topic_id, acks=[(0, 0, ACCEPT)]).error_code == ErrorCode.invalid_request
    opened = fetch(raw, "g", "m", 0, topic_id)
    assert opened.error_code == ErrorCode.none
    assert [(a.first_offset, a.last_offset, a.delivery_count) for a in partition(opened).acquired_records] == \
        [(0, 2, 1)]
    assert fetch(raw, "g", "m", 2).error_code == ErrorCode.invalid_share_session_epoch
    assert fetch(raw, "g", "m", 1).error_code == ErrorCode.none
    assert acknowledge(raw, "g", "m", 0, topic_id, [(0, 0, ACCEPT)]).error_code == \
        ErrorCode.invalid_share_session_epoch, "only ShareFetch opens a session"
    assert acknowledge(raw, "g", "m", 2, topic_id, [(0, 0, ACCEPT)]).error_code == ErrorCode.none
    assert fetch(raw, "g", "m", -1, forgotten=[topic_id]).error_code == ErrorCode.invalid_request
    closing = fetch(raw, "g", "m", -1, topic_id, acks=[(1, 1, ACCEPT)])
    assert (closing.error_code, partition(closing).acknowledge_error_code) == (ErrorCode.none, ErrorCode.none)
    assert fetch(raw, "g", "m", 4).error_code == ErrorCode.share_session_not_found, "epoch -1 closed it"


def test_acknowledging_a_record_not_held_is_an_invalid_record_state(raw, share_cluster, topic_name, topic_id):
    fetch(raw, "g", "a", 0, topic_id)  # a holds 0-2
    fetch(raw, "g", "b", 0, topic_id)
    by_other = fetch(raw, "g", "b", 1, topic_id, acks=[(0, 0, ACCEPT)])
    assert partition(by_other).acknowledge_error_code == ErrorCode.invalid_record_state
    never_fetched = acknowledge(raw, "g", "a", 1, topic_id, [(5, 5, ACCEPT)])
    assert partition(never_fetched).error_code == ErrorCode.invalid_record_state
    unknown_type = acknowledge(raw, "g", "a", 2, topic_id, [(0, 0, 9)])
    assert partition(unknown_type).error_code == ErrorCode.invalid_request
    assert partition(acknowledge(raw, "g", "a", 3, topic_id, [(0, 2, ACCEPT)])).error_code == ErrorCode.none
    assert share_cluster.share_partition_state("g", topic_name)["start_offset"] == 3


def test_unknown_topics_members_and_a_full_session_cache(raw):
    missing = fetch(raw, "g", "m", 0, uuid.uuid4())
    assert partition(missing).error_code == ErrorCode.unknown_topic_id
    assert fetch(raw, "g", "", 0).error_code == ErrorCode.invalid_request
    for member in ("m2", "m3"):
        assert fetch(raw, "g", member, 0).error_code == ErrorCode.none
    assert fetch(raw, "g", "m4", 0).error_code == ErrorCode.share_session_limit_reached
