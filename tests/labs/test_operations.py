"""Lab 08c's check reads the cluster after an on-call shift done with the command-line tools:
the reference shift passes, and each usual slip fails with a sentence about that slip.

The tools run in this process (their ``main``), as ``shell()`` would run them in a terminal.
"""

from __future__ import annotations

import shlex

import pytest

from kafka_course.checks import CheckFailed
from kafka_course.labs import operations
from kafka_course.tools import configs, consumer_groups, topics

TOOLS = {"topics": topics.main, "configs": configs.main, "consumer-groups": consumer_groups.main}


@pytest.fixture
def lab(bootstrap):
    return operations.prepare(bootstrap=bootstrap, per_partition=30)


def do(lab, line: str) -> None:
    """One ``minikafka`` command line, with the lab's names filled in."""
    argv = shlex.split(line.format(lab=lab, B=f"--bootstrap-server {lab.bootstrap}"))
    assert argv[0] == "minikafka"
    assert TOOLS[argv[1]](argv[2:]) == 0, line


CREATE = "minikafka topics {B} --create --topic {lab.audit} --partitions 4 " \
         "--config retention.ms=259200000 --config max.message.bytes=2097152"
ALTER = "minikafka configs {B} --topic {lab.orders} --alter --add-config retention.ms=1209600000 " \
        "--delete-config segment.ms"
RESET = "minikafka consumer-groups {B} --reset-offsets --group {lab.group} --topic {lab.orders} "


def shift(lab, *, create=CREATE, alter=ALTER, reset=RESET + "--to-datetime {lab.incident} --execute",
          answers=None) -> dict:
    for line in (create, alter, reset):
        do(lab, line)
    replay = sum(operations._offsets_at(lab, 10**13).values()) - sum(operations._offsets_at(lab, lab.incident_ms)
                                                                      .values())
    return answers or {"orders_partitions": 3, "orders_retention_ms_before": 86400000, "orders_to_bill_again": replay}


def fails(lab, answers) -> str:
    with pytest.raises(CheckFailed) as failed:
        operations.check(lab, answers)
    return str(failed.value)


def test_the_reference_shift_passes(lab, capsys):
    operations.check(lab, shift(lab))
    assert "All 9 checks passed" in capsys.readouterr().out


def test_a_reset_without_execute_is_a_dry_run(lab):
    text = fails(lab, shift(lab, reset=RESET + "--to-datetime {lab.incident}"))
    assert "still at the end" in text and "--execute" in text
    assert "ANSWERS['orders_to_bill_again']" not in text  # the answer is about the intended reset


def test_resetting_to_the_earliest_offset_bills_everything_again(lab):
    text = fails(lab, shift(lab, reset=RESET + "--to-earliest --execute"))
    assert "back at offset 0 everywhere" in text and "incident's time" in text


def test_resetting_one_partition_leaves_the_others_at_the_end(lab):
    text = fails(lab, shift(lab, reset="minikafka consumer-groups {B} --reset-offsets --group {lab.group} "
                                       "--topic {lab.orders}:0 --to-datetime {lab.incident} --execute"))
    assert "partition(s) 1, 2 of" in text and "reset every partition" in text


def test_the_incident_read_in_another_time_zone_points_at_the_zone(lab):
    two_hours_early = lab.incident.replace("Z", "+02:00")
    text = fails(lab, shift(lab, reset=RESET + f"--to-datetime {two_hours_early} --execute"))
    assert "expected" in text and "time zone" in text


def test_an_audit_topic_without_partitions_and_settings(lab):
    text = fails(lab, shift(lab, create="minikafka topics {B} --create --topic {lab.audit}"))
    assert "has 1 partition(s), not 4" in text and "num.partitions" in text
    assert "retention.ms is not set on it" in text and "max.message.bytes is not set on it" in text


def test_setting_segment_ms_to_the_default_keeps_an_override(lab):
    text = fails(lab, shift(lab, alter="minikafka configs {B} --topic {lab.orders} --alter "
                                       "--add-config retention.ms=1209600000,segment.ms=604800000"))
    assert "still sets segment.ms=604800000" in text and "deleting the setting removes it" in text
    assert "retention.ms is" not in text


def test_nothing_done_and_no_answers(lab):
    text = fails(lab, {})
    assert f"there is no topic {lab.audit}" in text and "14 days in milliseconds" in text
    assert "still at the end" in text and "ANSWERS['orders_partitions'] is None" in text


def test_shell_runs_minikafka_commands_only(lab, capsys):
    assert operations.shell(f"minikafka topics --bootstrap-server {lab.bootstrap} --list") == 0
    assert lab.orders in capsys.readouterr().out.split()
    with pytest.raises(ValueError, match="minikafka commands only"):
        operations.shell("rm -rf /tmp/nothing")


def test_a_shift_by_a_count_of_orders_is_not_blamed_on_the_time_zone(lab):
    """--shift-by moves every partition back by one number of records; the partitions did not get
    the same number of orders since the incident, so the count is wrong in some of them."""
    text = fails(lab, shift(lab, reset=RESET + "--to-latest --execute"))
    assert "still at the end" in text
    half = lab.per_partition // 2
    do(lab, RESET + f"--shift-by -{half} --execute")
    text = fails(lab, {})
    assert f"moved back by the same {half} orders, as --shift-by does" in text and "--to-datetime" in text
    assert "time zone" not in text


def test_an_incident_read_with_a_half_hour_offset_points_at_the_zone(lab):
    text = fails(lab, shift(lab, reset=RESET + f"--to-datetime {lab.incident.replace('Z', '+01:30')} --execute"))
    assert "time zone" in text and "--shift-by" not in text
