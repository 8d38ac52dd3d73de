"""Lab 03's check measures a producer's settings, and each wrong setting fails for its own reason.

Every case runs the whole check (its own three-broker minikafka, a crashed leader) on a
bulk load of 10,000 orders, the size the notebook tests use with other parameters.
"""

from __future__ import annotations

import pytest

from kafka_course.checks import CheckFailed
from kafka_course.labs import producer_tuning

RECORDS = 10_000
SOLUTION = {"acks": "all", "linger.ms": 10, "compression.type": "zstd"}


def failures(settings) -> str:
    with pytest.raises(CheckFailed) as failed:
        producer_tuning.check(settings, records=RECORDS)
    return str(failed.value)


def test_the_reference_settings_meet_every_budget(capsys):
    measured = producer_tuning.check(SOLUTION, records=RECORDS)
    assert measured.lost == 0 and measured.throughput >= producer_tuning.BUDGET.throughput
    assert "All 4 checks passed" in capsys.readouterr().out


def test_acks_0_loses_orders_in_the_crash_and_says_nobody_acknowledged():
    text = failures(dict(SOLUTION, acks="0"))
    assert "without an offset" in text and "acks=0" in text
    assert "throughput" not in text and "disk" not in text


def test_acks_1_loses_what_the_followers_did_not_have_yet():
    text = failures(dict(SOLUTION, acks="1"))
    assert "before the followers had the records" in text and "every in-sync replica" in text
    assert "throughput" not in text and "95%" not in text


def test_a_linger_far_too_long_breaks_the_latency_budget():
    text = failures(dict(SOLUTION, **{"linger.ms": 1000}))
    assert "95% of the slow source's records" in text and "how long may a batch wait" in text
    assert "lost" not in text and "throughput" not in text


def test_one_record_per_batch_misses_throughput_and_disk():
    text = failures(dict(SOLUTION, **{"linger.ms": 0, "batch.num.messages": 1}))
    assert "below the budget" in text and "1.0 records per batch" in text
    assert "little to share in a small batch" in text


def test_no_compression_misses_the_disk_budget_only():
    text = failures({"acks": "all", "linger.ms": 10})
    assert "stored uncompressed" in text
    assert "throughput" not in text and "lost" not in text and "95%" not in text


def test_settings_librdkafka_refuses_are_reported_as_a_failed_check():
    text = failures(dict(SOLUTION, **{"compression.type": "brotli"}))
    assert "Your settings raised" in text and "compression" in text
