"""The consumer group protocol (KIP-848) with real clients: confluent-kafka with ``group.protocol=consumer``.

A consumer joins and gets every partition; a second joins and only the partitions that
move stop, while the first keeps the rest; members leave and the survivor takes
everything; commits survive a restart; AdminClient.describe_consumer_groups reads
ConsumerGroupDescribe; the error paths answer with Kafka's codes (unknown member, fenced
epoch) and an invalid ``group.protocol`` is refused by the client itself; and a classic
group and a consumer group live side by side.
"""

from __future__ import annotations

import datetime
import uuid

import pytest
from confluent_kafka import ConsumerGroupType, KafkaException
from confluent_kafka.admin import AdminClient

from minikafka.errors import ErrorCode
from minikafka.protocol import codec
from tests.groups.helpers import ConfluentMember, committed, produce, wait_until
from tests.rawclient import RawClient

pytestmark = pytest.mark.timeout(60)

FAST = {"group.consumer.heartbeat.interval.ms": 200, "group.consumer.session.timeout.ms": 6000}
CONSUMER = {"group.protocol": "consumer"}
HEARTBEAT = 68
MS = datetime.timedelta(milliseconds=1)


@pytest.fixture
def fast(make_cluster):
    return make_cluster(config=FAST)


def partitions(member) -> set[int]:
    return {p for _, p in member.assignment()}


def test_a_second_member_takes_half_while_the_first_keeps_consuming_the_rest(fast, topic_name):
    fast.create_topic(topic_name, partitions=4)
    produce(fast.bootstrap_servers, topic_name, 40, 4)
    first = ConfluentMember(fast.bootstrap_servers, "g", [topic_name], **CONSUMER)
    wait_until(lambda: partitions(first) == {0, 1, 2, 3} and len(first.received) == 40, 15, "first member: all")
    second = ConfluentMember(fast.bootstrap_servers, "g", [topic_name], **CONSUMER)
    wait_until(lambda: len(partitions(first)) == len(partitions(second)) == 2, 15, "two members, two each")
    revoked = [tps for kind, tps in first.events if kind == "revoke"]
    assert revoked == [{(topic_name, p) for p in partitions(second)}], "only the partitions that moved"
    assert first.smallest_assignment == 2, "the first member never stopped consuming what it kept"
    produce(fast.bootstrap_servers, topic_name, 40, 4, prefix="after")
    wait_until(lambda: len(first.received) + len(second.received) == 80, 15, "both consume")
    second.stop()
    wait_until(lambda: partitions(first) == {0, 1, 2, 3}, 15, "the survivor takes everything back")
    first.stop()


def test_commits_survive_members_leaving_and_a_broker_restart(make_cluster, topic_name):
    cluster = make_cluster(config=FAST)
    cluster.create_topic(topic_name, partitions=2)
    produce(cluster.bootstrap_servers, topic_name, 20, 2)
    member = ConfluentMember(cluster.bootstrap_servers, "keeps", [topic_name], **CONSUMER,
                             **{"auto.commit.interval.ms": 100})
    wait_until(lambda: len(member.received) == 20, 15, "20 records")
    wait_until(lambda: committed(cluster.bootstrap_servers, "keeps", topic_name, 2) == {0: 10, 1: 10}, 15,
               "auto-commits at the member epoch")
    member.stop()
    cluster.restart()
    assert cluster.call(lambda: cluster.broker().groups.consumer_groups.get("keeps").group_epoch) >= 2
    produce(cluster.bootstrap_servers, topic_name, 4, 2, prefix="new")
    again = ConfluentMember(cluster.bootstrap_servers, "keeps", [topic_name], **CONSUMER)
    wait_until(lambda: len(again.received) == 4, 15, "only the records after the commit")
    again.stop()
    assert sorted(again.received) == [b"new-0", b"new-1", b"new-2", b"new-3"]


def test_describe_consumer_groups_shows_epochs_members_and_target_assignments(fast, topic_name):
    fast.create_topic(topic_name, partitions=3)
    member = ConfluentMember(fast.bootstrap_servers, "described", [topic_name], **CONSUMER,
                             **{"client.id": "reader", "group.remote.assignor": "range"})
    wait_until(lambda: len(partitions(member)) == 3, 15, "an assignment")
    admin = AdminClient({"bootstrap.servers": fast.bootstrap_servers})
    description = admin.describe_consumer_groups(["described"])["described"].result(15)
    assert description.type == ConsumerGroupType.CONSUMER and description.partition_assignor == "range"
    (m,) = description.members
    assert m.client_id == "reader"
    assert {tp.partition for tp in m.assignment.topic_partitions} == {0, 1, 2}
    assert {tp.partition for tp in m.target_assignment.topic_partitions} == {0, 1, 2}
    listed = {g.group_id: g.type for g in admin.list_consumer_groups().result(15).valid}
    assert listed["described"] == ConsumerGroupType.CONSUMER
    member.stop()


def test_classic_and_consumer_groups_side_by_side(fast, topic_name):
    fast.create_topic(topic_name, partitions=2)
    produce(fast.bootstrap_servers, topic_name, 10, 2)
    new = ConfluentMember(fast.bootstrap_servers, "new-protocol", [topic_name], **CONSUMER)
    old = ConfluentMember(fast.bootstrap_servers, "old-protocol", [topic_name])
    wait_until(lambda: len(new.received) == len(old.received) == 10, 20, "both groups read everything")
    admin = AdminClient({"bootstrap.servers": fast.bootstrap_servers})
    listed = {g.group_id: g.type for g in admin.list_consumer_groups().result(15).valid}
    assert listed["new-protocol"] == ConsumerGroupType.CONSUMER and listed["old-protocol"] == ConsumerGroupType.CLASSIC
    classic = admin.describe_consumer_groups(["old-protocol"])["old-protocol"].result(15)
    assert classic.type == ConsumerGroupType.CLASSIC and len(classic.members) == 1
    new.stop()
    old.stop()


def heartbeat(raw, group: str, member_id: str, epoch: int, **fields):
    values = dict(group_id=group, member_id=member_id, member_epoch=epoch, instance_id=None, rack_id=None,
                  rebalance_timeout=(-1 if epoch else 10_000) * MS, subscribed_topic_names=None,
                  subscribed_topic_regex=None, server_assignor=None, topic_partitions=None)
    return raw.request(codec.make(codec.request_class(HEARTBEAT, 1), **{**values, **fields}))


def test_unknown_member_and_fenced_epoch_on_the_wire(fast, topic_name):
    fast.create_topic(topic_name, partitions=1)
    member_id = uuid.uuid4().hex
    with RawClient(fast.bootstrap_servers) as raw:
        joined = heartbeat(raw, "wire", member_id, 0, subscribed_topic_names=(topic_name,), topic_partitions=())
        assert (joined.error_code, joined.member_epoch) == (ErrorCode.none, 1)
        assert joined.assignment.topic_partitions[0].partitions == (0,)
        assert heartbeat(raw, "wire", "someone-else", 1).error_code == ErrorCode.unknown_member_id
        fenced = heartbeat(raw, "wire", member_id, 5)
        assert fenced.error_code == ErrorCode.fenced_member_epoch and "rejoin" in fenced.error_message
        assert heartbeat(raw, "wire", member_id, 1).error_code == ErrorCode.none
        assert heartbeat(raw, "wire", member_id, -1).member_epoch == -1
        assert heartbeat(raw, "wire", member_id, 1).error_code == ErrorCode.unknown_member_id


def test_a_fenced_confluent_consumer_rejoins_by_itself(fast, topic_name):
    fast.create_topic(topic_name, partitions=2)
    member = ConfluentMember(fast.bootstrap_servers, "fenced", [topic_name], **CONSUMER)
    wait_until(lambda: len(partitions(member)) == 2, 15, "an assignment")
    group = fast.call(lambda: fast.broker().groups.consumer_groups.get("fenced"))
    (member_id,) = group.members
    fast.call(group.remove, member_id)  # as if its session had expired
    wait_until(lambda: member_id in group.members and group.members[member_id].member_epoch > 0, 15, "a rejoin")
    wait_until(lambda: len(partitions(member)) == 2, 15, "its partitions again")
    member.stop()


def test_an_invalid_group_protocol_is_refused_by_the_client_before_any_request():
    from confluent_kafka import Consumer
    with pytest.raises(KafkaException) as info:
        Consumer({"bootstrap.servers": "127.0.0.1:9", "group.id": "g", "group.protocol": "kip848"})
    assert info.value.args[0].name() == "_INVALID_ARG"
    assert 'Invalid value "kip848" for configuration property "group.protocol"' in info.value.args[0].str()


def test_the_consumer_groups_tool_shows_each_groups_type_and_target_assignments(capsys, fast, topic_name):
    from kafka_course.tools.consumer_groups import main
    fast.create_topic(topic_name, partitions=2)
    new = ConfluentMember(fast.bootstrap_servers, "tool-new", [topic_name], **CONSUMER)
    old = ConfluentMember(fast.bootstrap_servers, "tool-old", [topic_name])
    wait_until(lambda: len(partitions(new)) == len(partitions(old)) == 2, 20, "both groups assigned")
    assert main(["--bootstrap-server", fast.bootstrap_servers, "--list", "--type"]) == 0
    listed = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert listed[0] == ["GROUP", "TYPE"] and ["tool-new", "Consumer"] in listed and ["tool-old", "Classic"] in listed
    assert main(["--bootstrap-server", fast.bootstrap_servers, "--list", "--type", "consumer"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]] == ["tool-new"]
    base = ["--bootstrap-server", fast.bootstrap_servers, "--describe", "--group", "tool-new", "--members"]
    assert main([*base, "--verbose"]) == 0
    header, row = [line.split() for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert header[-2:] == ["CURRENT-ASSIGNMENT", "TARGET-ASSIGNMENT"]
    assert row[-2:] == [f"{topic_name}(0,1)", f"{topic_name}(0,1)"]
    new.stop()
    old.stop()


def test_a_restarted_static_member_takes_back_its_partitions_without_a_new_group_epoch(fast, topic_name):
    fast.create_topic(topic_name, partitions=4)
    first = ConfluentMember(fast.bootstrap_servers, "static", [topic_name], **CONSUMER, **{"group.instance.id": "i1"})
    other = ConfluentMember(fast.bootstrap_servers, "static", [topic_name], **CONSUMER, **{"group.instance.id": "i2"})
    wait_until(lambda: len(partitions(first)) == len(partitions(other)) == 2, 15, "two static members")
    group = fast.call(lambda: fast.broker().groups.consumer_groups.get("static"))
    before, epoch = partitions(first), group.group_epoch
    first.stop()  # leaves with member epoch -2: its partitions wait for it
    wait_until(lambda: any(m.member_epoch == -2 for m in group.members.values()), 10, "a temporary leave")
    assert partitions(other) == {0, 1, 2, 3} - before
    again = ConfluentMember(fast.bootstrap_servers, "static", [topic_name], **CONSUMER, **{"group.instance.id": "i1"})
    wait_until(lambda: partitions(again) == before, 15, "the same partitions back")
    assert group.group_epoch == epoch and len(group.members) == 2
    again.stop()
    other.stop()
