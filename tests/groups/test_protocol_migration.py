"""Online migration between the classic and the consumer group protocols (KIP-848), with real clients.

A confluent-kafka consumer on the classic protocol holds a group; one on the consumer
protocol joins the same group id: the group becomes a consumer group, both share the
partitions and every record is read once; the consumer-protocol member leaves and the
group is classic again, its offsets where both members committed them. A kafka-python
consumer (classic) joins a consumer group the other way round. ``disabled`` refuses the
upgrade with GROUP_ID_NOT_FOUND; ``upgrade`` keeps a group of classic members a consumer
group when the last consumer-protocol member leaves.
"""

from __future__ import annotations

import datetime
import uuid

import pytest
from confluent_kafka import ConsumerGroupType
from confluent_kafka.admin import AdminClient

from minikafka.errors import ErrorCode
from minikafka.protocol import codec
from tests.groups.helpers import ConfluentMember, KafkaPythonMember, committed, produce, wait_until
from tests.rawclient import RawClient

pytestmark = pytest.mark.timeout(90)

FAST = {"group.consumer.heartbeat.interval.ms": 200, "group.consumer.session.timeout.ms": 6000}
CONSUMER = {"group.protocol": "consumer", "auto.commit.interval.ms": 200}
CLASSIC = {"group.protocol": "classic", "auto.commit.interval.ms": 200}
ALL = {0, 1, 2, 3}
HEARTBEAT, DESCRIBE = 68, 69  # ConsumerGroupHeartbeat, ConsumerGroupDescribe
MS = datetime.timedelta(milliseconds=1)


def partitions(member) -> set[int]:
    return {p for _, p in member.assignment()}


def group_type(bootstrap: str, group: str) -> ConsumerGroupType:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    listed = {g.group_id: g.type for g in admin.list_consumer_groups().result(15).valid}
    described = admin.describe_consumer_groups([group])[group].result(15)
    assert described.type == listed[group], "ListGroups and the describe agree"
    return described.type


def member_types(bootstrap: str, group: str) -> list[int]:
    """MemberType of each member, as ConsumerGroupDescribe v1 gives it (0 classic, 1 consumer)."""
    with RawClient(bootstrap) as raw:
        request = codec.make(codec.request_class(DESCRIBE, 1), group_ids=(group,), include_authorized_operations=False)
        (described,) = raw.request(request).groups
    return sorted(m.member_type for m in described.members)


def shared(a, b) -> bool:
    return (
        bool(partitions(a))
        and bool(partitions(b))
        and partitions(a) | partitions(b) == ALL
        and not (partitions(a) & partitions(b))
    )


def test_a_consumer_protocol_member_upgrades_a_classic_group_and_its_leaving_downgrades_it(make_cluster, topic_name):
    cluster = make_cluster(config=FAST)
    bootstrap = cluster.bootstrap_servers
    cluster.create_topic(topic_name, partitions=4)
    old = ConfluentMember(bootstrap, "mixed", [topic_name], **CLASSIC)
    wait_until(lambda: partitions(old) == ALL, 20, "the classic member: every partition")
    assert group_type(bootstrap, "mixed") == ConsumerGroupType.CLASSIC
    new = ConfluentMember(bootstrap, "mixed", [topic_name], **CONSUMER)
    wait_until(lambda: shared(old, new), 30, "both members hold partitions, none twice")
    assert group_type(bootstrap, "mixed") == ConsumerGroupType.CONSUMER
    assert member_types(bootstrap, "mixed") == [0, 1], "one classic member, one consumer-protocol member"
    values = produce(bootstrap, topic_name, 40, 4)
    wait_until(lambda: len(old.received) + len(new.received) == 40, 20, "40 records between them")
    assert sorted(old.received + new.received) == sorted(values), "every record once"
    wait_until(
        lambda: committed(bootstrap, "mixed", topic_name, 4) == {p: 10 for p in ALL},
        20,
        "both members' commits: the classic one's at its generation, the other's at its epoch",
    )
    new.stop()
    wait_until(lambda: group_type(bootstrap, "mixed") == ConsumerGroupType.CLASSIC, 20, "a classic group again")
    wait_until(lambda: partitions(old) == ALL, 20, "the classic member takes every partition after a rebalance")
    after = produce(bootstrap, topic_name, 8, 4, prefix="after")
    wait_until(lambda: len(old.received) + len(new.received) == 48, 20, "the 8 new records")
    assert sorted(old.received + new.received) == sorted(values + after), "offsets kept through both conversions"
    group = cluster.call(lambda: cluster.broker().groups.groups["mixed"])
    assert group.protocol_type == "consumer" and len(group.members) == 1 and group.generation_id > 2
    old.stop()


def test_a_classic_kafka_python_member_joins_a_consumer_group(make_cluster, topic_name):
    cluster = make_cluster(config=FAST)
    bootstrap = cluster.bootstrap_servers
    cluster.create_topic(topic_name, partitions=4)
    new = ConfluentMember(bootstrap, "reverse", [topic_name], **CONSUMER)
    wait_until(lambda: partitions(new) == ALL, 20, "the consumer-protocol member: every partition")
    old = KafkaPythonMember(bootstrap, "reverse", [topic_name], commit_every=1)
    wait_until(lambda: shared(old, new), 30, "the classic member admitted, with its share")
    assert not old.errors and member_types(bootstrap, "reverse") == [0, 1]
    values = produce(bootstrap, topic_name, 40, 4)
    wait_until(lambda: len(old.values()) + len(new.received) == 40, 20, "40 records between them")
    assert sorted(old.values() + new.received) == sorted(values)
    new.stop()
    wait_until(lambda: group_type(bootstrap, "reverse") == ConsumerGroupType.CLASSIC, 20, "downgraded")
    wait_until(lambda: partitions(old) == ALL, 20, "the classic member takes every partition")
    old.stop()
    assert not old.errors


def test_the_disabled_policy_refuses_to_upgrade_a_classic_group_with_members(make_cluster, topic_name):
    cluster = make_cluster(config={**FAST, "group.consumer.migration.policy": "disabled"})
    bootstrap = cluster.bootstrap_servers
    cluster.create_topic(topic_name, partitions=2)
    old = ConfluentMember(bootstrap, "kept", [topic_name], **CLASSIC)
    wait_until(lambda: len(partitions(old)) == 2, 20, "the classic member")
    with RawClient(bootstrap) as raw:
        request = codec.make(
            codec.request_class(HEARTBEAT, 1),
            group_id="kept",
            member_id=uuid.uuid4().hex,
            member_epoch=0,
            instance_id=None,
            rack_id=None,
            rebalance_timeout=10_000 * MS,
            subscribed_topic_names=(topic_name,),
            subscribed_topic_regex=None,
            server_assignor=None,
            topic_partitions=(),
        )
        answer = raw.request(request)
    assert answer.error_code == ErrorCode.group_id_not_found
    assert "group.consumer.migration.policy=disabled" in answer.error_message
    assert group_type(bootstrap, "kept") == ConsumerGroupType.CLASSIC and len(partitions(old)) == 2
    old.stop()


def test_the_upgrade_policy_keeps_a_group_of_classic_members_a_consumer_group(make_cluster, topic_name):
    cluster = make_cluster(config={**FAST, "group.consumer.migration.policy": "upgrade"})
    bootstrap = cluster.bootstrap_servers
    cluster.create_topic(topic_name, partitions=4)
    old = ConfluentMember(bootstrap, "one-way", [topic_name], **CLASSIC)
    wait_until(lambda: partitions(old) == ALL, 20, "the classic member")
    new = ConfluentMember(bootstrap, "one-way", [topic_name], **CONSUMER)
    wait_until(lambda: shared(old, new), 30, "upgraded: both hold partitions")
    new.stop()
    wait_until(lambda: partitions(old) == ALL, 20, "the server-side assignor gives the classic member everything")
    assert group_type(bootstrap, "one-way") == ConsumerGroupType.CONSUMER, "no downgrade under 'upgrade'"
    assert member_types(bootstrap, "one-way") == [0]
    old.stop()
