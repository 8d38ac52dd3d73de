"""Lab 04's check fails the commit mistakes learners make when a group shrinks, and passes the solution.

Worker ``b`` handles its quota and leaves; ``a`` and ``c`` take over its partitions from
the group's committed offsets; ``a``'s process is killed once mid-batch and starts again.
Committing before handling loses the order the crash interrupted, leaving the commits to
auto-commit loses what ``b`` polled but did not handle, never committing or committing
the record's own offset (not the next one) repeats them, and stopping only at the end of
a batch overshoots the quota.
"""

from __future__ import annotations

import threading
import time

import pytest
from kafka import KafkaConsumer
from kafka.structs import OffsetAndMetadata

from kafka_course.checks import CheckFailed
from kafka_course.labs import scaling_consumers as lab_check

from .notebook_code import mutated, solution

pytestmark = pytest.mark.slow
QUOTA = 30  # not a multiple of the solution's batch of 20, so a batch-sized stop overshoots
PER_RECORD_COMMIT = "consumer.commit({tp: OffsetAndMetadata(record.offset + 1, None, -1)})"
QUOTA_STOP = ("                    if quota is not None and handled >= quota:\n"
              "                        return  # the finally clause leaves the group\n")


def run_group(bootstrap: str, *edits, late: str | None = None) -> lab_check.Backlog:
    backlog = lab_check.prepare(bootstrap=bootstrap, partitions=6, orders=300, time_limit=30)
    given = {"backlog": backlog, "BOOTSTRAP": bootstrap, "KafkaConsumer": KafkaConsumer,
             "OffsetAndMetadata": OffsetAndMetadata}
    worker = (mutated("04", ("worker",), *edits, **given) if edits else solution("04", "worker", **given))["worker"]
    threads = [threading.Thread(target=backlog.process, args=(worker, "a"), name="a"),
               threading.Thread(target=backlog.process, args=(worker, "b", QUOTA), name="b"),
               threading.Thread(target=backlog.process, args=(worker, "c"), name="c")]
    first = [t for t in threads if t.name != late]
    for t in first:
        t.start()
    if late:  # this worker starts only once the others are done, as on a machine too busy to start it
        for t in first:
            t.join(backlog.time_limit + 15)
        next(t for t in threads if t.name == late).start()
    for t in threads:
        t.join(backlog.time_limit + 15)
    return backlog


def fails(bootstrap: str, capsys, edits, *expected: str) -> str:
    """The check's failure for the solution with ``edits``: it names each of ``expected``; returns what it said."""
    backlog = run_group(bootstrap, *edits)
    started = time.monotonic()
    with pytest.raises(CheckFailed) as failure:
        lab_check.check(backlog, leaver="b", quota=QUOTA)
    seconds = time.monotonic() - started
    for words in expected:
        assert words in str(failure.value), f"{words!r} not in the failure: {failure.value}"
    capsys.readouterr()
    print(f"lab 04 check: {seconds:.1f} s")
    return str(failure.value)


def test_the_reference_solution_passes(one_broker, capsys):
    backlog = run_group(one_broker)
    started = time.monotonic()
    lab_check.check(backlog, leaver="b", quota=QUOTA)
    assert "All 5 checks passed" in capsys.readouterr().out
    print(f"lab 04 check: {time.monotonic() - started:.1f} s")


def test_committing_a_batch_before_handling_it_loses_orders(one_broker, capsys):
    before = ("            for tp, records in consumer.poll(timeout_ms=1000).items():\n",
              "            batch = consumer.poll(timeout_ms=1000)\n            consumer.commit()\n"
              "            for tp, records in batch.items():\n")
    edits = [before, (PER_RECORD_COMMIT, "pass"), ("max_poll_records=20", "max_poll_records=500")]
    said = fails(one_broker, capsys, edits, "orders were never handled", "commits before handling",
                 "consumer.commit() without offsets")
    assert "Does every worker call" not in said


def test_committing_each_order_just_before_handling_it_loses_the_one_a_crash_interrupts(one_broker, capsys):
    """Per record, commit-then-handle and handle-then-commit look alike until a process dies between the two."""
    handle = "                    backlog.handle(name, record)\n"
    swapped = [(handle, ""), ("                    handled += 1\n", handle + "                    handled += 1\n")]
    said = fails(one_broker, capsys, swapped, "orders were never handled", "when its process was killed",
                 "commits before handling", "after backlog.handle returns")
    assert "Does every worker call" not in said


def test_leaving_the_commits_to_auto_commit_skips_what_the_leaver_polled(one_broker, capsys):
    """No commit of one's own: kafka-python commits what poll() returned, also when b closes mid-batch."""
    auto = ("                             enable_auto_commit=False,  # commit what was handled, not what was polled\n",
            "")
    said = fails(one_broker, capsys, [(PER_RECORD_COMMIT, "pass"), auto], "orders were never handled",
                 "enable_auto_commit=True (kafka-python's default)")
    assert "Does every worker call" not in said


def test_never_committing_hands_the_leavers_orders_out_again(one_broker, capsys):
    fails(one_broker, capsys, [(PER_RECORD_COMMIT, "pass")], "orders were handled twice",
          "commit each order's offset + 1", "committed offsets should equal each partition's end")


def test_committing_the_records_own_offset_repeats_one_order_per_partition(one_broker, capsys):
    fails(one_broker, capsys, [(PER_RECORD_COMMIT, PER_RECORD_COMMIT.replace("record.offset + 1", "record.offset"))],
          "orders were handled twice", "offset + 1")


def test_stopping_at_the_end_of_a_batch_overshoots_the_quota(one_broker, capsys):
    at_batch_end = ("    finally:\n", "            if quota is not None and handled >= quota:\n"
                                     "                return  # only after the whole batch\n    finally:\n")
    fails(one_broker, capsys, [(QUOTA_STOP, ""), at_batch_end], f"should handle exactly {QUOTA} orders")


def test_a_leaver_that_started_after_the_others_emptied_the_backlog_is_told_why(one_broker):
    """Not a coding mistake: a correct worker b that a busy machine started too late finds nothing
    left. The check must not send the learner hunting for a bug in the quota logic."""
    backlog = run_group(one_broker, late="b")
    with pytest.raises(CheckFailed) as failure:
        lab_check.check(backlog, leaver="b", quota=QUOTA)
    said = str(failure.value)
    assert f"should handle exactly {QUOTA} orders" in said and "handled 0" in said
    assert "joined the group late" in said and "1 failed" in said, said
