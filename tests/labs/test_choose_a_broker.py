"""Lab 13's check runs each chosen system on its workload: the reference choices pass, the
usual wrong ones fail with the measurement that shows why, and a server that is not running
turns its part into a sentence instead of a failure.

RabbitMQ and NATS are the machine's real servers; a test that needs one is skipped when it
is not running (the closed-port test covers what the check does then).
"""

from __future__ import annotations

import pytest

from kafka_course.checks import CheckFailed
from kafka_course.ecosystem import servers
from kafka_course.labs import choose_a_broker

needs_both = pytest.mark.skipif(not (servers.RABBITMQ.up() and servers.NATS.up()),
                                reason="RabbitMQ and NATS must be running (docker compose --profile comparison up -d)")
CLOSED = {"rabbitmq_url": "amqp://guest:guest@127.0.0.1:1/%2F", "nats_url": "nats://127.0.0.1:1"}
SOLUTION = {"replay": ("kafka", {"auto.offset.reset": "earliest"}), "work-queue": ("rabbitmq", {"prefetch_count": 1}),
            "fan-out": ("nats", {})}


def fails(choices, bootstrap, **where) -> str:
    with pytest.raises(CheckFailed) as failed:
        choose_a_broker.check(choices, bootstrap=bootstrap, **where)
    return str(failed.value)


@needs_both
def test_the_reference_choices_pass(bootstrap, capsys):
    choose_a_broker.check(SOLUTION, bootstrap=bootstrap)
    out = capsys.readouterr().out
    assert "All 8 checks passed" in out and "slow jobs per worker: worker 1: 5, worker 2: 5, worker 3: 5" in out


def test_kafka_for_everything_fails_where_kafka_is_not_the_tool(bootstrap):
    text = fails({w: ("kafka", {}) for w in choose_a_broker.WORKLOADS}, bootstrap)
    assert "read 0 of the 200 payments" in text and "auto.offset.reset" in text
    assert "worker 1 did 15" in text and "whole partitions" in text
    assert "200 ticks are still kept by the server" in text


@needs_both
def test_rabbitmq_without_settings_forgets_history_and_deals_jobs_out_in_advance(bootstrap):
    text = fails({w: ("rabbitmq", {}) for w in choose_a_broker.WORKLOADS}, bootstrap)
    assert "replay on rabbitmq: the new service read 0" in text and "queue began empty" in text
    assert "Without a prefetch limit" in text and "never done" not in text
    assert "fan-out on rabbitmq" not in text  # a fanout exchange meets the fan-out requirements


@needs_both
def test_nats_without_a_queue_group_does_every_job_three_times(bootstrap):
    text = fails({w: ("nats", {}) for w in choose_a_broker.WORKLOADS}, bootstrap)
    assert "replay on nats: the new service read 0" in text and "kept nothing" in text
    assert "done more than once" in text and "queue group" in text
    assert "fan-out on nats" not in text


@needs_both
def test_the_right_systems_with_the_wrong_settings(bootstrap):
    text = fails({"replay": ("kafka", {"auto.offset.reset": "earliest"}),
                  "work-queue": ("rabbitmq", {"prefetch_count": 1, "auto_ack": True}),
                  "fan-out": ("nats", {"queue_group": "dashboards"})}, bootstrap)
    assert "3 jobs were never done" in text and "With auto_ack" in text
    assert "shared the ticks" in text and "replay" not in text


def test_absent_servers_are_skipped_with_a_sentence_and_kafka_still_runs(bootstrap, capsys):
    choose_a_broker.check(SOLUTION, bootstrap=bootstrap, **CLOSED)
    out = capsys.readouterr().out
    assert "RabbitMQ is not reachable at 127.0.0.1:1, so the work-queue run on RabbitMQ is skipped" in out
    assert "NATS is not reachable at 127.0.0.1:1, so the fan-out run on NATS is skipped" in out
    assert "docker compose --profile comparison up -d" in out and "All 2 checks passed" in out


@pytest.mark.parametrize("choices, sentence", [
    ({"replay": ("kafka", {})}, "CHOICES['work-queue'] should be a pair"),
    ({w: ("pulsar", {}) for w in choose_a_broker.WORKLOADS}, "names 'pulsar'; choose one of kafka, rabbitmq, nats"),
    ({**SOLUTION, "work-queue": ("rabbitmq", {"prefetch": 1})}, "has no setting 'prefetch'"),
    ({**SOLUTION, "replay": ("nats", {"queue_group": "x"})}, "has no setting 'queue_group' (its settings for this "
                                                              "workload: none)"),
])
def test_choices_that_cannot_run_are_refused_before_anything_runs(bootstrap, choices, sentence):
    assert sentence in fails(choices, bootstrap)


def test_a_prefetch_limit_that_is_set_but_too_high_is_not_called_missing():
    """The sentence follows the settings: a limit of 20 is a limit, only too high a one."""
    from kafka_course.ecosystem.workloads import JOBS, Run
    run = Run("work-queue", "rabbitmq", seconds=9.0, done={j: 1 for j in range(JOBS)},
              slow_by_worker={"worker 1": 10, "worker 2": 3, "worker 3": 2})
    said = " ".join(expected for ok, _passed, expected in choose_a_broker.requirements(run, {"prefetch_count": 20})
                    if not ok)
    assert "With a prefetch limit of 20 each worker still holds up to 20 unacknowledged jobs" in said
    assert "Without a prefetch limit" not in said
    unset = " ".join(e for ok, _p, e in choose_a_broker.requirements(run, {}) if not ok)
    assert "Without a prefetch limit" in unset


@needs_both
def test_a_prefetch_limit_too_high_is_told_its_limit(bootstrap):
    text = fails({**SOLUTION, "work-queue": ("rabbitmq", {"prefetch_count": 20})}, bootstrap)
    assert "With a prefetch limit of 20" in text and "Without a prefetch limit" not in text
