"""Lab 11's check: the watermark's value decides the result, and each mistake is named.

The check runs the learner's query in append mode and feeds it on-time, a little late
and too late sign-ups (kafka_course.labs.late_signups). The solution notebook's own
``per_decade`` passes; a watermark that waits too little, too long or far too long, none
at all, and a decade that is not rounded down each fail with their own sentence.
(tests/course/test_notebooks.py runs the lab's notebooks: the solution must pass and the
untouched starter must fail in its check cell.) One Spark session serves the whole run.
"""

from __future__ import annotations

import shutil
import time

import pytest

from kafka_course.checks import CheckFailed
from kafka_course.labs import streaming_aggregation as lab_check
from tests.labs.embedded import embedded
from tests.labs.notebook_code import mutated, solution

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java 17")]
WATERMARK = '.withWatermark("signup_ts", "10 seconds")'


@pytest.fixture(scope="module")
def bootstrap():
    return embedded()


def per_decade(*edits):
    from pyspark.sql import functions as F
    functions = mutated("11", ("per_decade",), *edits, F=F) if edits else solution("11", "per_decade", F=F)
    return functions["per_decade"]


def fails(spark, bootstrap, capsys, function, *expected: str) -> str:
    started = time.monotonic()
    with pytest.raises(CheckFailed) as failure:
        lab_check.check(spark, function, bootstrap=bootstrap)
    seconds = time.monotonic() - started
    for words in expected:
        assert words in str(failure.value), f"{words!r} not in the failure: {failure.value}"
    printed = capsys.readouterr().out
    print(f"lab 11 check: {seconds:.1f} s")
    return printed


def test_the_reference_solution_passes(spark, bootstrap, capsys):
    started = time.monotonic()
    lab_check.check(spark, per_decade(), bootstrap=bootstrap)
    printed = capsys.readouterr().out
    assert "All 9 checks passed" in printed and "sign-ups up to 10 s late are counted" in printed
    print(f"lab 11 check: {time.monotonic() - started:.1f} s")


def test_a_watermark_that_waits_too_little_drops_late_sign_ups(spark, bootstrap, capsys):
    printed = fails(spark, bootstrap, capsys, per_decade((WATERMARK, WATERMARK.replace("10", "5"))),
                    "came 9.6 to 9.9 s late are missing", "waits less than 10 seconds")
    assert "✔ sign-ups more than 10 s late are left out" in printed


def test_a_watermark_that_waits_too_long_counts_what_is_too_late(spark, bootstrap, capsys):
    printed = fails(spark, bootstrap, capsys, per_decade((WATERMARK, WATERMARK.replace("10 seconds", "1 minute"))),
                    "came 10.6 to 10.9 s late were counted", "waits more than 10 seconds")
    assert "✔ sign-ups up to 10 s late are counted" in printed


def test_a_watermark_of_an_hour_writes_no_window_in_append_mode(spark, bootstrap, capsys):
    printed = fails(spark, bootstrap, capsys, per_decade((WATERMARK, WATERMARK.replace("10 seconds", "1 hour"))),
                    "No window was written at all", "far longer than 10 seconds")
    assert "3 of 9 checks passed, 1 failed and 5 not run." in printed


def test_no_watermark_is_refused_in_append_mode(spark, bootstrap, capsys):
    printed = fails(spark, bootstrap, capsys, per_decade((WATERMARK, "")),
                    "could not run the query in append mode", "a watermark on signup_ts")
    assert "not run: sign-ups up to 10 s late are counted" in printed


def test_a_decade_that_is_the_year_divided_by_ten_is_explained(spark, bootstrap, capsys):
    fails(spark, bootstrap, capsys, per_decade(("* 10).cast", ").cast")), "Decades should look like 1970")


def test_a_crashing_function_becomes_a_failed_check(spark, bootstrap, capsys):
    printed = fails(spark, bootstrap, capsys, lambda signups: signups.no_such_method(),
                    "per_decade(signups) raised", "no_such_method")
    assert "not run: Spark runs the query in append mode" in printed


def test_a_round_stopped_by_a_busy_machine_is_tried_once_more_before_it_counts(spark, bootstrap, capsys,
                                                                                monkeypatch):
    real, calls = lab_check._process, []

    def busy_once(query, seconds, what):
        calls.append(what)
        if len(calls) == 1:
            raise TimeoutError("Spark took too long (a busy machine, simulated)")
        real(query, seconds, what)
    monkeypatch.setattr(lab_check, "_process", busy_once)
    lab_check.check(spark, per_decade(), bootstrap=bootstrap)
    printed = capsys.readouterr().out
    assert "All 9 checks passed" in printed and "busy machine" not in printed
    assert len(calls) > len(lab_check.late.rounds(2024)), "the rounds should have run a second time"


def test_a_machine_busy_twice_says_so(spark, bootstrap, capsys, monkeypatch):
    def always_busy(query, seconds, what):
        raise TimeoutError("Spark took too long (a busy machine, simulated)")
    monkeypatch.setattr(lab_check, "_process", always_busy)
    printed = fails(spark, bootstrap, capsys, per_decade(), "busy machine, simulated")
    assert "not run: windows are written once the watermark passes them" in printed
