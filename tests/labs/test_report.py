"""The feedback every lab check gives: each check listed once, the count right, the failure said once."""

from __future__ import annotations

import pytest

from kafka_course.checks import FAIL, CheckFailed, Report, plural


def run_report(*steps):
    with Report("Lab 99 · demo") as report:
        for step in steps:
            step(report)


def test_every_check_is_listed_and_not_run_checks_are_counted(capsys):
    def first(report):
        report.check(True, "the topic exists", "")

    def second(report):
        if not report.check(False, "", "the hash of b'a' should be 1"):
            report.not_run("the records on the broker")

    with pytest.raises(CheckFailed) as failure:
        run_report(first, second)
    out = capsys.readouterr().out.splitlines()
    assert out[1:4] == ["  ✔ the topic exists", "  ✘ the hash of b'a' should be 1",
                        "  · not run: the records on the broker (it needs the checks above to pass)"]
    assert out[4] == "1 of 3 checks passed, 1 failed and 1 not run."
    assert failure.value.failures == ["the hash of b'a' should be 1"]
    assert "1 of 3 checks passed" in str(failure.value) and "hash of b'a'" in str(failure.value)


def test_the_failure_is_shown_once_in_a_notebook(capsys):
    with pytest.raises(CheckFailed) as failure:
        run_report(lambda r: r.check(True, "first", ""), lambda r: r.check(True, "second", ""),
                   lambda r: r.check(False, "", "the third is wrong"))
    printed = capsys.readouterr().out
    shown = "\n".join(failure.value._render_traceback_())  # what IPython prints under the cell's output
    assert printed.count("the third is wrong") == 1 and "the third is wrong" not in shown
    assert "2 of 3 checks passed, 1 failed." in printed and "2 of 3 checks passed" in shown and FAIL in shown


def test_a_learner_exception_is_a_failed_check_and_all_passing_says_so(capsys):
    with pytest.raises(CheckFailed, match="ZeroDivisionError"):
        run_report(lambda r: r.attempt(lambda: 1 / 0, what="your function"))
    assert "0 of 1 check passed, 1 failed." in capsys.readouterr().out
    run_report(lambda r: r.check(True, "one", ""), lambda r: r.check(True, "two", ""))
    assert capsys.readouterr().out.endswith("All 2 checks passed. Well done!\n")


def test_counts_are_spelled_in_the_right_number():
    assert (plural(1, "byte"), plural(3, "byte"), plural(0, "check")) == ("1 byte", "3 bytes", "0 checks")
