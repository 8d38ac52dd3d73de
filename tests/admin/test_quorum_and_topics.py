"""DescribeQuorum (the controller as minikafka has it) and DescribeTopicPartitions (KIP-966,
with its cursor) through kafka-python's admin client, and their errors through raw requests."""

from __future__ import annotations

import datetime
import uuid

from kio.schema.describe_quorum.v2 import request as quorum
from kio.schema.describe_topic_partitions.v0 import request as dtp
from kio.static.primitive import i32

from minikafka.errors import ErrorCode
from tests.rawclient import RawClient


def quorum_partition(admin) -> dict:
    return admin.describe_metadata_quorum()["topics"][0]["partitions"][0]


def test_the_quorum_is_led_by_the_controller_and_a_stopped_voter_falls_behind(make_cluster, kafka_admin):
    cluster = make_cluster(brokers=3)
    admin = kafka_admin(cluster)
    first = quorum_partition(admin)
    assert first["leader_id"] == cluster.controller_id == 1
    assert [v["replica_id"] for v in first["current_voters"]] == [1, 2, 3]
    assert {v["log_end_offset"] for v in first["current_voters"]} == {first["high_watermark"]}
    cluster.stop_broker(1)
    cluster.create_topic("orders", 3, 2)  # metadata changes the stopped voter does not see
    now = quorum_partition(kafka_admin(cluster))
    assert now["leader_id"] == 2 and now["leader_epoch"] == first["leader_epoch"] + 1
    voters = {v["replica_id"]: v for v in now["current_voters"]}
    assert now["high_watermark"] > voters[1]["log_end_offset"] >= first["high_watermark"]
    assert voters[2]["log_end_offset"] == voters[3]["log_end_offset"] == now["high_watermark"]
    assert voters[1]["last_caught_up_timestamp"] < voters[2]["last_caught_up_timestamp"]


def test_describe_quorum_of_another_topic_is_unknown(make_cluster):
    cluster = make_cluster(brokers=1)
    request = quorum.DescribeQuorumRequest(topics=(quorum.TopicData(
        topic_name="orders", partitions=(quorum.PartitionData(partition_index=i32(0)),)),))
    with RawClient(cluster.bootstrap_servers) as client:
        answer = client.request(request)
    assert answer.topics[0].partitions[0].error_code == ErrorCode.unknown_topic_or_partition


def test_describe_topic_partitions_pages_with_a_cursor(make_cluster, kafka_admin):
    cluster = make_cluster(brokers=3)
    cluster.create_topic("alpha", 5, 2)
    cluster.create_topic("beta", 2, 3)
    admin = kafka_admin(cluster)
    pages, cursor = [], None
    for _ in range(10):
        page = admin.describe_topic_partitions(["beta", "alpha", "missing"], response_partition_limit=3,
                                               cursor=cursor)
        pages.append([(t["name"], [p["partition_index"] for p in t["partitions"]], t["error_code"])
                      for t in page["topics"]])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == [[("alpha", [0, 1, 2], 0)],
                     [("alpha", [3, 4], 0), ("beta", [0], 0)],
                     [("beta", [1], 0), ("missing", [], ErrorCode.unknown_topic_or_partition)]]
    beta = admin.describe_topic_partitions(["beta"])["topics"][0]
    assert uuid.UUID(str(beta["topic_id"])) == uuid.UUID(cluster.metadata.topics["beta"].topic_id)
    p0 = beta["partitions"][0]
    assert p0["replica_nodes"] == [1, 2, 3] and p0["leader_id"] == 1 and p0["isr_nodes"] == [1, 2, 3]
    cluster.stop_broker(3)
    p0 = kafka_admin(cluster).describe_topic_partitions(["beta"])["topics"][0]["partitions"][0]
    assert p0["offline_replicas"] == [3] and 3 not in p0["isr_nodes"]


def test_describe_topic_partitions_of_every_topic_and_a_cursor_outside_the_list(make_cluster):
    cluster = make_cluster(brokers=1)
    cluster.create_topic("one", 1, 1)
    cluster.create_topic("two", 1, 1)
    with RawClient(cluster.bootstrap_servers) as client:
        every = client.request(dtp.DescribeTopicPartitionsRequest(topics=(), response_partition_limit=i32(10)))
        bad = client.request(dtp.DescribeTopicPartitionsRequest(
            topics=(dtp.TopicRequest(name="one"),), response_partition_limit=i32(10),
            cursor=dtp.Cursor(topic_name="two", partition_index=i32(0))))
        bad_name = client.request(dtp.DescribeTopicPartitionsRequest(
            topics=(dtp.TopicRequest(name="no good"),), response_partition_limit=i32(10)))
    assert [t.name for t in every.topics] == ["one", "two"] and every.next_cursor is None
    assert [t.error_code for t in bad.topics] == [ErrorCode.invalid_request]
    assert [t.error_code for t in bad_name.topics] == [ErrorCode.invalid_topic_exception]


def test_describe_cluster_with_each_client(make_cluster, kafka_admin):
    """DescribeCluster v2 (kafka-python) and Metadata (confluent-kafka, aiokafka) agree on the
    brokers and the controller, also after the controller stops."""
    import asyncio

    from aiokafka.admin import AIOKafkaAdminClient
    from confluent_kafka.admin import AdminClient

    cluster = make_cluster(brokers=3)
    cluster.stop_broker(1)
    described = kafka_admin(cluster).describe_cluster()
    assert [b["broker_id"] for b in described["brokers"]] == [2, 3] and described["controller_id"] == 2
    client = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    confluent = client.describe_cluster().result(10)
    assert sorted(n.id for n in confluent.nodes) == [2, 3] and confluent.controller.id == 2

    async def with_aiokafka():
        client = AIOKafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
        await client.start()
        try:
            return await client.describe_cluster()
        finally:
            await client.close()
    answer = asyncio.run(with_aiokafka())
    assert sorted(b["node_id"] for b in answer["brokers"]) == [2, 3] and answer["controller_id"] == 2


def test_delete_topics_by_name_carries_the_all_zero_id_that_means_none(make_cluster, kafka_admin):
    """DeleteTopics v6 names a topic and sends the all-zero id, Kafka's "no id" (the Java admin
    and kafka-python do); naming it both ways for real is still refused."""
    cluster = make_cluster(brokers=1)
    cluster.create_topic("gone", 1, 1)
    cluster.create_topic("kept", 1, 1)
    admin = kafka_admin(cluster)
    admin.delete_topics(["gone"], timeout_ms=10000)
    assert "gone" not in admin.list_topics() and "kept" in admin.list_topics()
    from kio.schema.delete_topics.v6 import request as dt
    from kio.static.primitive import i32Timedelta

    kept_id = uuid.UUID(next(t for t in admin.describe_topics(["kept"]))["topic_id"])
    both = dt.DeleteTopicsRequest(timeout=i32Timedelta.parse(datetime.timedelta(seconds=10)),
                                  topics=(dt.DeleteTopicState(name="kept", topic_id=kept_id),))
    with RawClient(cluster.bootstrap_servers) as client:
        answer = client.request(both)
    assert answer.responses[0].error_code == ErrorCode.invalid_request
