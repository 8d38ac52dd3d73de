"""``minikafka consumer-groups --reset-offsets``: Kafka's targets, a dry run unless --execute.

Records carry timestamps an hour apart, so ``--to-datetime`` has a right answer to check
against the broker's own time index (ListOffsets by timestamp).
"""

from __future__ import annotations

import datetime

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kafka_course.tools.consumer_groups import main

HOUR = 3_600_000
START = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def new_offsets(out: str) -> dict[int, int]:
    """PARTITION -> NEW-OFFSET from the tool's table."""
    rows = [line.split() for line in out.splitlines()[1:] if line.strip()]
    return {int(r[2]): int(r[3]) for r in rows}


def committed(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        answer = consumer.committed([TopicPartition(topic, p) for p in range(2)], timeout=10)
    finally:
        consumer.close()
    return {tp.partition: tp.offset for tp in answer}


@pytest.fixture
def history(bootstrap, topic_name):
    """Two partitions of ten records each, one per hour from 2026-01-01T00:00Z; group g committed 6 and 8."""
    client = AdminClient({"bootstrap.servers": bootstrap})
    client.create_topics([NewTopic(topic_name, 2, 1)])[topic_name].result(10)
    producer = Producer({"bootstrap.servers": bootstrap})
    for partition in range(2):
        for i in range(10):
            producer.produce(topic_name, f"{partition}-{i}".encode(), partition=partition, timestamp=START + i * HOUR)
    assert producer.flush(10) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "g"})
    consumer.commit(offsets=[TopicPartition(topic_name, 0, 6), TopicPartition(topic_name, 1, 8)], asynchronous=False)
    consumer.close()
    return ["--bootstrap-server", bootstrap, "--reset-offsets", "--group", "g", "--topic", topic_name]


def test_shift_by_moves_each_committed_offset_and_stays_inside_the_log(capsys, bootstrap, topic_name, history):
    code, out, err = run(capsys, *history, "--shift-by", "-7")
    assert code == 0 and new_offsets(out) == {0: 0, 1: 1} and "dry run" in err
    assert committed(bootstrap, "g", topic_name) == {0: 6, 1: 8}  # a dry run changes nothing
    code, out, _ = run(capsys, *history, "--shift-by", "3", "--execute")
    assert code == 0 and new_offsets(out) == {0: 9, 1: 10}
    assert committed(bootstrap, "g", topic_name) == {0: 9, 1: 10}


def test_shift_by_needs_a_committed_offset(capsys, bootstrap, topic_name, history):
    argv = ["--bootstrap-server", bootstrap, "--reset-offsets", "--group", "g", "--topic", topic_name]
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "fresh"})
    consumer.commit(offsets=[TopicPartition(topic_name, 0, 2)], asynchronous=False)
    consumer.close()
    argv[4] = "fresh"
    code, _, err = run(capsys, *argv, "--shift-by", "1")
    assert code == 1 and f"Cannot shift the offset of {topic_name}-1" in err and "no committed offset" in err


@pytest.mark.parametrize("moment", ["2026-01-01T03:30:00.000Z", "2026-01-01T04:30:00.000+01:00",
                                    "2026-01-01T03:30:00Z"])
def test_to_datetime_finds_the_first_record_at_or_after_the_time(capsys, bootstrap, topic_name, history, moment):
    code, out, _ = run(capsys, *history, "--to-datetime", moment, "--execute")
    assert code == 0 and new_offsets(out) == {0: 4, 1: 4}  # 03:30 falls between the records of 03:00 and 04:00
    assert committed(bootstrap, "g", topic_name) == {0: 4, 1: 4}


def test_to_datetime_without_a_zone_is_local_time(capsys, bootstrap, topic_name, history):
    local = datetime.datetime.fromtimestamp((START + 5 * HOUR) / 1000).isoformat(timespec="milliseconds")
    code, out, _ = run(capsys, *history, "--to-datetime", local)
    assert code == 0 and new_offsets(out) == {0: 5, 1: 5}


def test_one_partition_earliest_latest_and_a_bad_date(capsys, bootstrap, topic_name, history):
    code, out, _ = run(capsys, *history[:-1], f"{topic_name}:1", "--to-earliest", "--execute")
    assert code == 0 and new_offsets(out) == {1: 0}
    assert committed(bootstrap, "g", topic_name) == {0: 6, 1: 0}
    assert new_offsets(run(capsys, *history, "--to-latest")[1]) == {0: 10, 1: 10}
    code, _, err = run(capsys, *history, "--to-datetime", "yesterday")
    assert code == 1 and "is not a date-time like" in err
    code, _, err = run(capsys, *history[:-1], "no-such-topic", "--to-earliest")
    assert code == 1 and "Topic 'no-such-topic' does not exist." in err


def test_a_group_the_cluster_does_not_know_yet_gets_the_offsets(capsys, bootstrap, topic_name, history):
    """As Kafka's tool: resetting a new group is how an operator decides where it will start."""
    code, out, _ = run(capsys, "--bootstrap-server", bootstrap, "--group", "brand-new", "--topic", topic_name,
                       "--reset-offsets", "--to-latest", "--execute")
    assert code == 0 and new_offsets(out) == {0: 10, 1: 10}
    assert committed(bootstrap, "brand-new", topic_name) == {0: 10, 1: 10}
    code, _, err = run(capsys, "--bootstrap-server", bootstrap, "--delete", "--group", "never-seen")
    assert code == 1 and "Consumer group 'never-seen' does not exist." in err
