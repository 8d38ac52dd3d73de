"""Lab 06's check fails the mistakes learners make when rebuilding state from a log, and passes the solution.

``apply`` and ``read_to_end`` are checked on their own: a loop that stops when any
partition is done, one that never stops, one that keeps reading what was written after
the call began; a closed account kept at 0; tombstones ignored.
"""

from __future__ import annotations

import json
import time

import pytest
from kafka import KafkaConsumer, TopicPartition

from kafka_course.checks import CheckFailed
from kafka_course.labs import event_sourcing as lab_check

from .embedded import embedded
from .notebook_code import mutated, solution

NAMES = ("apply", "read_to_end", "replay", "load_snapshots")
ALL_AT_END = "if all(consumer.position(tp) >= ends[tp] for tp in partitions):"


@pytest.fixture(scope="module")
def bank():
    return lab_check.prepare(bootstrap=embedded(), accounts=6, events=150)


def functions(bank, *edits):
    given = {"bank": bank, "BOOTSTRAP": bank.bootstrap, "KafkaConsumer": KafkaConsumer,
             "TopicPartition": TopicPartition, "json": json}
    return mutated("06", NAMES, *edits, **given) if edits else solution("06", *NAMES, **given)


def fails(bank, capsys, edits, *expected: str, timeout: float = 10) -> str:
    with pytest.raises(CheckFailed) as failure:
        lab_check.check(bank, **{n: functions(bank, *edits)[n] for n in NAMES}, timeout=timeout)
    for words in expected:
        assert words in str(failure.value), f"{words!r} not in the failure: {failure.value}"
    return capsys.readouterr().out


def test_the_reference_solution_passes(bank, capsys):
    started = time.monotonic()
    lab_check.check(bank, **{n: functions(bank)[n] for n in NAMES})
    assert "All 5 checks passed" in capsys.readouterr().out
    print(f"lab 06 check: {time.monotonic() - started:.1f} s")


def test_stopping_when_any_partition_is_done_misses_records(bank, capsys):
    printed = fails(bank, capsys, [(ALL_AT_END, ALL_AT_END.replace("all(", "any("))],
                    "it missed 160 of the 160 records", "keep reading until *every* partition is")
    assert "✔ read_to_end stops" in printed


def test_a_loop_that_never_sees_its_end_does_not_stop(bank, capsys):
    fails(bank, capsys, [(ALL_AT_END, ALL_AT_END.replace(">=", ">"))], "read_to_end did not stop", timeout=4)


def test_asking_for_the_end_on_every_turn_reads_records_written_later(bank, capsys):
    fresh = "            ends = consumer.end_offsets(partitions)\n            " + ALL_AT_END
    printed = fails(bank, capsys, [("            " + ALL_AT_END, fresh)], "records written after the call began",
                    "ask for the end offsets once")
    assert "✔ replaying the events gives the bank's" in printed  # the bank's topics get no new records


def test_a_closed_account_kept_at_zero_is_caught_in_apply_and_in_the_replay(bank, capsys):
    fails(bank, capsys, [("balances.pop(name, None)", "balances[name] = 0")],
          "a closed account is removed from the table", "replaying the events: closed accounts are still there")


def test_ignoring_tombstones_keeps_closed_accounts(bank, capsys):
    printed = fails(bank, capsys, [("table.pop(account, None)", "pass")],
                    "loading the compacted snapshots: closed accounts are still there", "tombstone")
    assert "4 of 5 checks passed, 1 failed." in printed


def test_an_end_offset_taken_one_too_low_stops_one_record_short(bank, capsys):
    """``end - 1`` looks like "the last offset"; it only shows when a partition's last record
    comes in a poll of its own, which the check's partitions make sure of."""
    printed = fails(bank, capsys, [(ALL_AT_END, ALL_AT_END.replace("ends[tp]", "ends[tp] - 1"))],
                    "it stopped one record short of the end in 2 partition(s)", "not end - 1")
    assert "Partition 0 is empty" not in printed and "✔ read_to_end stops" in printed
