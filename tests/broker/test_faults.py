"""The fault API works for every API: an injected error is answered in place of the
request (which is not processed), once per pushed code, and then service resumes.
Checked with raw frames (exact error codes) and with a real client (it retries)."""

from __future__ import annotations

import datetime

import pytest
from confluent_kafka import Producer

from minikafka.errors import ErrorCode
from minikafka.protocol import codec
from minikafka.protocol.apis import BY_KEY
from tests.rawclient import RawClient

MS = datetime.timedelta(milliseconds=1)


def newest(api_key: int, **fields):
    return codec.make(codec.request_class(api_key, BY_KEY[api_key].max_version), **fields)


def part(api_key: int, entity: str, **fields):
    return codec.entity(codec.request_module(api_key, BY_KEY[api_key].max_version), entity, **fields)


def fetch_request(topic: str, version: int = 12):
    """Fetch v12 by default: the newest version that names topics (v13+ name them by id)."""
    module = codec.request_module(1, version)
    partition = codec.entity(module, "FetchPartition", partition=0, current_leader_epoch=-1, fetch_offset=0,
                             log_start_offset=-1, partition_max_bytes=1 << 20)
    return codec.make(codec.request_class(1, version), replica_id=-1, max_wait=10 * MS, min_bytes=0,
                      max_bytes=1 << 20, isolation_level=0, session_id=0, session_epoch=-1,
                      topics=(codec.entity(module, "FetchTopic", topic=topic, partitions=(partition,)),),
                      forgotten_topics_data=(), rack_id="")


def metadata_request(topic: str):
    wanted = part(3, "MetadataRequestTopic", name=topic, topic_id=None)
    return newest(3, topics=(wanted,), allow_auto_topic_creation=False, include_topic_authorized_operations=False)


def test_an_injected_fetch_error_reaches_every_partition_once(cluster):
    cluster.create_topic("faulty", partitions=1)
    cluster.faults().push_errors("Fetch", ErrorCode.not_leader_or_follower)
    with RawClient(cluster.bootstrap_servers) as raw:
        first = raw.request(fetch_request("faulty")).responses[0].partitions[0]
        second = raw.request(fetch_request("faulty")).responses[0].partitions[0]
    assert first.error_code == ErrorCode.not_leader_or_follower and first.records in (None, b"")
    assert second.error_code == ErrorCode.none  # one pushed code, one failed request


def test_an_injected_metadata_error_names_the_requested_topic(cluster):
    cluster.create_topic("described", partitions=2)
    cluster.faults().push_errors("Metadata", ErrorCode.leader_not_available)
    with RawClient(cluster.bootstrap_servers) as raw:
        failed = raw.request(metadata_request("described"))
        served = raw.request(metadata_request("described"))
    assert [(t.name, t.error_code) for t in failed.topics] == [("described", ErrorCode.leader_not_available)]
    assert failed.brokers, "the brokers are still listed"
    assert served.topics[0].error_code == ErrorCode.none and len(served.topics[0].partitions) == 2


def test_an_injected_group_error_is_the_top_level_code_and_the_group_is_untouched(cluster):
    cluster.faults().push_errors("JoinGroup", ErrorCode.coordinator_load_in_progress)
    protocol = part(11, "JoinGroupRequestProtocol", name="range", metadata=b"")
    join = newest(11, group_id="g", session_timeout=10_000 * MS, rebalance_timeout=10_000 * MS, member_id="",
                  group_instance_id=None, protocol_type="consumer", protocols=(protocol,), reason=None)
    with RawClient(cluster.bootstrap_servers) as raw:
        answer = raw.request(join)
    assert answer.error_code == ErrorCode.coordinator_load_in_progress
    assert cluster.call(lambda: "g" not in cluster.broker().groups.groups), "the request was not processed"


def test_a_producer_retries_through_injected_produce_errors_and_writes_once(cluster):
    cluster.create_topic("retried", partitions=1)
    cluster.faults().push_errors("Produce", ErrorCode.not_enough_replicas, ErrorCode.not_enough_replicas)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "retry.backoff.ms": 10})
    producer.produce("retried", b"only once")
    assert producer.flush(20) == 0
    assert cluster.partition_offsets("retried")[0]["log_end_offset"] == 1


def test_an_api_whose_answer_cannot_carry_an_error_is_refused_up_front(cluster):
    delete_records = BY_KEY[21]  # its answer has an error per partition only, and no hook to build one
    with pytest.raises(ValueError, match="cannot be injected"):
        cluster.faults().push_errors(delete_records.name, ErrorCode.invalid_config)


def test_injected_faults_outlive_a_broker_restart(make_cluster):
    cluster = make_cluster(brokers=2)
    cluster.faults(2).push_errors("Metadata", ErrorCode.leader_not_available)
    cluster.stop_broker(2)
    cluster.start_broker(2)
    host, port = "127.0.0.1", cluster.ports[2]
    with RawClient(f"{host}:{port}") as raw:
        assert raw.request(metadata_request("x")).topics[0].error_code == ErrorCode.leader_not_available
