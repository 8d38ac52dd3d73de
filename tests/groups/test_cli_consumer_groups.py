"""``minikafka consumer-groups`` against a live group, as a learner would run it.

The columns are kafka-consumer-groups.sh's: a partition nobody owns shows ``-`` for
the consumer, a member with no partition (more consumers than partitions) shows up
as an idle row, and resetting or deleting is refused while the group is active.
"""

from __future__ import annotations

import datetime
import subprocess
import sys
import time

import pytest

from kafka_course.tools.consumer_groups import main
from tests.groups.helpers import KafkaPythonMember, create_topic, produce, wait_until

pytestmark = pytest.mark.timeout(60)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def rows(out: str) -> list[list[str]]:
    """The table rows (without the header) as lists of cells."""
    lines = [line.split() for line in out.splitlines() if line.strip()]
    start = next(i for i, cells in enumerate(lines) if cells and cells[0] == "GROUP")
    return lines[start + 1 :]


def consume_and_commit(bootstrap: str, group: str, topic: str, count: int) -> None:
    """Read at least ``count`` records, commit exactly ``count``, and leave the group."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                             auto_offset_reset="earliest")
    # kafka-python 3.0.12 can miss its first assignment when topic metadata arrives during
    # the first join (the range assignor sees no partitions); know the topic first.
    wait_until(lambda: consumer.partitions_for_topic(topic), 15, f"metadata of {topic}")
    got = []
    wait_until(lambda: got.extend(r for rs in consumer.poll(500).values() for r in rs) or len(got) >= count, 30,
               f"{count} records")
    consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(count, "", -1)})
    consumer.close()


def test_describe_shows_lag_and_unowned_partitions(capsys, bootstrap, topic_name):
    create_topic(bootstrap, topic_name, 1)
    produce(bootstrap, topic_name, 10, 1)
    consume_and_commit(bootstrap, "lagging", topic_name, 4)
    code, out, _ = run(capsys, "--bootstrap-server", bootstrap, "--describe", "--group", "lagging")
    assert code == 0 and "has no active members" in out
    assert rows(out) == [["lagging", topic_name, "0", "4", "10", "6", "-", "-", "-"]]
    code, out, _ = run(capsys, "--bootstrap-server", bootstrap, "--list")
    assert code == 0 and "lagging" in out.split()


def test_more_consumers_than_partitions_leaves_idle_members(capsys, bootstrap, topic_name):
    create_topic(bootstrap, topic_name, 2)
    members = [KafkaPythonMember(bootstrap, "crowd", [topic_name], client_id=f"c{i}") for i in range(3)]
    describe = ["--bootstrap-server", bootstrap, "--describe", "--group", "crowd"]
    try:
        wait_until(lambda: sorted(len(m.assignment()) for m in members) == [0, 1, 1], 30, "one idle member")
        idle = next(m for m in members if not m.assignment())
        idle_id = idle.consumer._coordinator._generation.member_id
        wait_until(lambda: len(rows(run(capsys, *describe)[1])) == 3, 30, "a Stable group to describe")
        code, out, _ = run(capsys, *describe)
        table = rows(out)
        assert code == 0 and [r[1:3] for r in table[:2]] == [[topic_name, "0"], [topic_name, "1"]]
        assert table[2][:6] == ["crowd", "-", "-", "-", "-", "-"] and table[2][6] == idle_id
        assert table[2][7:] == ["/127.0.0.1", idle.consumer.config["client_id"]]
        code, out, _ = run(capsys, *describe, "--members")
        partitions = {r[1]: int(r[4]) for r in rows(out)}
        assert code == 0 and partitions[idle_id] == 0 and sorted(partitions.values()) == [0, 1, 1]
        code, out, _ = run(capsys, *describe, "--state")
        assert code == 0 and rows(out)[0][-2:] == ["Stable", "3"]
    finally:
        for m in members:
            m.stop()


def test_reset_offsets_refused_while_active_then_applied(capsys, bootstrap, topic_name):
    create_topic(bootstrap, topic_name, 1)
    produce(bootstrap, topic_name, 10, 1)
    member = KafkaPythonMember(bootstrap, "resetme", [topic_name], commit_every=1)
    wait_until(lambda: len(member.values()) == 10, 30, "10 records")
    reset = ["--bootstrap-server", bootstrap, "--reset-offsets", "--group", "resetme", "--topic", topic_name]
    code, out, err = run(capsys, *reset, "--to-earliest", "--execute")
    assert code == 1 and "active member" in err and "stop its consumers" in err and "Traceback" not in err
    member.stop()
    code, out, err = run(capsys, *reset, "--to-offset", "3")  # a dry run by default
    assert code == 0 and rows(out) == [["resetme", topic_name, "0", "3"]] and "dry run" in err
    describe = ["--bootstrap-server", bootstrap, "--describe", "--group", "resetme"]
    assert rows(run(capsys, *describe)[1])[0][3] == "10"
    code, out, _ = run(capsys, *reset, "--to-offset", "3", "--execute")
    assert code == 0 and rows(run(capsys, *describe)[1])[0][3:6] == ["3", "10", "7"]
    assert rows(run(capsys, *reset, "--to-offset", "999")[1])[0][3] == "10"  # kept inside the log
    reset_partition = ["--bootstrap-server", bootstrap, "--reset-offsets", "--group", "resetme",
                       "--topic", f"{topic_name}:0"]
    assert run(capsys, *reset_partition, "--to-earliest", "--execute")[0] == 0
    assert rows(run(capsys, *describe)[1])[0][3] == "0"
    later = (datetime.datetime.now() + datetime.timedelta(hours=1)).isoformat(timespec="milliseconds")
    code, out, _ = run(capsys, *reset, "--to-datetime", later)
    assert code == 0 and rows(out)[0][3] == "10"  # nothing that late: the end of the log


def test_delete_refused_while_active_then_done(capsys, bootstrap, topic_name):
    create_topic(bootstrap, topic_name, 1)
    member = KafkaPythonMember(bootstrap, "doomed", [topic_name])
    wait_until(lambda: member.assignment(), 30, "an assignment")
    delete = ["--bootstrap-server", bootstrap, "--delete", "--group", "doomed"]
    code, _, err = run(capsys, *delete)
    assert code == 1 and err.count("\n") == 1 and "doomed" in err and "active member" in err
    member.stop()
    code, out, _ = run(capsys, *delete)
    assert code == 0 and "successful" in out
    code, _, err = run(capsys, "--bootstrap-server", bootstrap, "--describe", "--group", "doomed")
    assert code == 1 and "does not exist" in err


def test_the_minikafka_command_dispatches_and_errors_are_sentences(bootstrap):
    done = subprocess.run([sys.executable, "-m", "minikafka.cli.main", "consumer-groups", "--bootstrap-server",
                           bootstrap, "--describe", "--group", "nobody-here"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip() == "Error: Consumer group 'nobody-here' does not exist."
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "minikafka.cli.main", "consumer-groups", "--bootstrap-server",
                           "127.0.0.1:1", "--list"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stderr.strip().startswith("Error: Cannot reach a Kafka broker")
    assert time.monotonic() - started < 20
