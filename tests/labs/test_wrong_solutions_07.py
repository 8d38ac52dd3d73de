"""Lab 07's check fails the consumers learners write for at-least-once delivery, and passes the solution.

The worker is crashed on some database writes (before or after the write lands) and
restarted from the group's committed offsets. Committing before processing loses
payments (the starter does that); a plain INSERT records a replayed payment twice; a
table under another name cannot be checked at all.
"""

from __future__ import annotations

import json
import time

import pytest

from kafka_course.checks import CheckFailed
from kafka_course.labs import at_least_once as lab_check

from .notebook_code import mutated, solution, starter

pytestmark = pytest.mark.slow
NAMES = ("setup", "record_payment", "worker")
PLAIN_INSERT = ("INSERT OR IGNORE INTO", "INSERT INTO")
KEYED = ("payment_id TEXT PRIMARY KEY", "payment_id TEXT")
COMMIT_FIRST = ("        batch = consumer.poll(timeout_ms=500)\n",
                "        batch = consumer.poll(timeout_ms=500)\n        consumer.commit()\n")


def run_lab(bootstrap: str, make) -> lab_check.Lab:
    lab = lab_check.prepare(bootstrap=bootstrap, payments=150, crashes=3, time_limit=15)
    functions = make(lab)
    lab.run(functions["worker"], functions["setup"])
    return lab


def fails(bootstrap: str, capsys, make, *expected: str) -> str:
    lab = run_lab(bootstrap, make)
    started = time.monotonic()
    with pytest.raises(CheckFailed) as failure:
        lab_check.check(lab)
    seconds = time.monotonic() - started
    for words in expected:
        assert words in str(failure.value), f"{words!r} not in the failure: {failure.value}"
    printed = capsys.readouterr().out
    print(f"lab 07 check: {seconds:.1f} s")
    return printed


def test_the_reference_solution_passes(one_broker, capsys):
    lab = run_lab(one_broker, lambda lab: solution("07", *NAMES, lab=lab, json=json))
    started = time.monotonic()
    lab_check.check(lab)
    assert "All 5 checks passed" in capsys.readouterr().out
    print(f"lab 07 check: {time.monotonic() - started:.1f} s")


def test_the_starter_commits_before_processing_and_loses_payments(one_broker, capsys):
    printed = fails(one_broker, capsys, lambda lab: starter("07", *NAMES, lab=lab, json=json),
                    "payments never reached the table", "commit the offsets only after", "account totals are wrong")
    assert "✔ no payment is in the table twice" in printed  # nothing committed is ever read again


def test_a_plain_insert_records_a_replayed_payment_twice(one_broker, capsys):
    printed = fails(one_broker, capsys, lambda lab: mutated("07", NAMES, PLAIN_INSERT, KEYED, lab=lab, json=json),
                    "payments are in the table more than once", "INSERT OR IGNORE")
    assert "✔ all 150 payments are in the table" in printed


def test_committing_before_processing_loses_payments(one_broker, capsys):
    printed = fails(one_broker, capsys, lambda lab: mutated("07", NAMES, COMMIT_FIRST, lab=lab, json=json),
                    "payments never reached the table", "commit the offsets only after the records are processed")
    assert "✔ no payment is in the table twice" in printed


def test_a_table_without_the_expected_columns_is_explained_and_the_rest_not_run(one_broker, capsys):
    renamed = ("CREATE TABLE payments (payment_id", "CREATE TABLE payment_log (payment_id")
    printed = fails(one_broker, capsys, lambda lab: mutated("07", NAMES, renamed, ("INTO payments", "INTO payment_log"),
                                                            lab=lab, json=json),
                    "the table payments cannot be read")
    assert "not run: every payment is in the table" in printed and "1 of 6 checks passed" in printed


def test_a_worker_that_swallows_the_crashes_is_told_so(one_broker, capsys):
    """An except around the work keeps the worker going after its process 'died': the check
    says the crashes were caught, not that there were none."""
    record = "                record_payment(db, json.loads(record.value))\n"
    swallow = ("                try:\n                    record_payment(db, json.loads(record.value))\n"
               "                except Exception as error:\n                    print('skipped:', error)\n")
    printed = fails(one_broker, capsys, lambda lab: mutated("07", NAMES, (record, swallow), lab=lab, json=json),
                    "your worker caught 3 of the 3 crashes", "let the exception end worker()")
    assert "never crashed" not in printed
