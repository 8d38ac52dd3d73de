"""Lab 08's check fails the pipelines learners write when they aim for exactly-once, and passes the solution.

The input holds aborted transactions (cancelled orders), so the consumer's isolation
level matters; the check looks at how the output was written, so deduplicating by hand
with a plain producer does not pass; and committing the offsets outside the transaction
repeats orders when a crash comes between the two commits.
"""

from __future__ import annotations

import json
import time

import pytest

import kafka_course as course
from kafka_course.checks import CheckFailed
from kafka_course.labs import exactly_once as lab_check

from .notebook_code import mutated, run, solution, starter

pytestmark = pytest.mark.slow
NAMES = ("CONSUMER_SETTINGS", "worker")
SIZES = {"orders": 150, "crashes": 4, "time_limit": 30}

# Deduplicating by hand: read the output back at every start, skip what is there; a plain producer.
DEDUPLICATING = '''
CONSUMER_SETTINGS = {"isolation.level": "read_committed"}
PRODUCER_SETTINGS = {"enable.idempotence": True}


def worker(consumer, producer, lab):
    done = {json.loads(r.value)["id"] for r in course.consume_all(lab.output, bootstrap=lab.bootstrap)}
    while not lab.finished():
        records = [m for m in consumer.consume(20, 0.5) if m.error() is None]
        for m in records:
            order = json.loads(m.value())
            if order["id"] not in done:
                producer.produce(lab.output, lab.transform(m.value()), m.key())
                done.add(order["id"])
        producer.flush(10)
        if records:
            consumer.commit(asynchronous=False)
'''


def run_lab(bootstrap: str, functions: dict) -> lab_check.Lab:
    lab = lab_check.prepare(bootstrap=bootstrap, **SIZES)
    lab.run(functions["worker"], functions["CONSUMER_SETTINGS"], functions["PRODUCER_SETTINGS"])
    return lab


def fails(bootstrap: str, capsys, functions: dict, *expected: str) -> str:
    lab = run_lab(bootstrap, functions)
    started = time.monotonic()
    with pytest.raises(CheckFailed) as failure:
        lab_check.check(lab)
    seconds = time.monotonic() - started
    for words in expected:
        assert words in str(failure.value), f"{words!r} not in the failure: {failure.value}"
    printed = capsys.readouterr().out
    print(f"lab 08 check: {seconds:.1f} s")
    return printed


def test_the_reference_solution_passes(one_broker, capsys):
    lab = run_lab(one_broker, solution("08", "PRODUCER_SETTINGS", *NAMES))
    started = time.monotonic()
    lab_check.check(lab)
    printed = capsys.readouterr().out
    assert "All 7 checks passed" in printed and "none of the 15 cancelled orders" in printed
    print(f"lab 08 check: {time.monotonic() - started:.1f} s")


def test_the_at_least_once_starter_repeats_orders_and_uses_no_transaction(one_broker, capsys):
    fails(one_broker, capsys, starter("08", "PRODUCER_SETTINGS", *NAMES), "orders are in the output more than once",
          "the output was not written in transactions")


def test_deduplicating_with_a_plain_producer_is_not_exactly_once(one_broker, capsys):
    functions = run(DEDUPLICATING, "lab 08 deduplicating by hand", json=json, course=course)
    printed = fails(one_broker, capsys, functions, "the output was not written in transactions",
                    "0 of its", "transactional.id")
    assert "✔ none of the 15 cancelled orders" in printed


def test_reading_uncommitted_invoices_cancelled_orders(one_broker, capsys):
    functions = mutated("08", NAMES, ('{"isolation.level": "read_committed"}', "{}"))
    functions["PRODUCER_SETTINGS"] = solution("08", "PRODUCER_SETTINGS")["PRODUCER_SETTINGS"]
    printed = fails(one_broker, capsys, functions, "15 cancelled orders are in the output",
                    "isolation.level is read_committed")
    assert "6 of 7 checks passed, 1 failed." in printed


def test_committing_the_offsets_outside_the_transaction_repeats_orders(one_broker, capsys):
    outside = ("        producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),\n"
               "                                             consumer.consumer_group_metadata(), 30)\n"
               "        producer.commit_transaction(30)",
               "        producer.commit_transaction(30)\n        consumer.commit(asynchronous=False)")
    functions = mutated("08", ("PRODUCER_SETTINGS", *NAMES), outside)
    fails(one_broker, capsys, functions, "orders are in the output more than once", "send_offsets_to_transaction")


def test_committing_the_consumer_just_before_the_transaction_loses_orders(one_broker, capsys):
    """consumer.commit() right before commit_transaction() looks the same as sending the offsets
    until a crash falls between the two commits: the input moved on, the output was aborted."""
    before = ("        producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),\n"
              "                                             consumer.consumer_group_metadata(), 30)\n",
              "        consumer.commit(asynchronous=False)\n")
    functions = mutated("08", ("PRODUCER_SETTINGS", *NAMES), before)
    printed = fails(one_broker, capsys, functions, "orders are missing from the committed output",
                    "crashed right after consumer.commit() returned and before commit_transaction()",
                    "send_offsets_to_transaction")
    assert "right after consumer.commit() returned" in printed
