"""Automatic checks for the labs: what passed, and what was expected when something did not.

A check prints one line per expectation as it goes: ``✔`` for a check that passed,
``✘`` with a sentence for one that failed, ``·`` for one that could not run because
an earlier one failed (it still counts). At the end it prints the count, and when any
check failed it raises ``CheckFailed``, an ``AssertionError``, so the last cell of a
lab notebook fails for the learner, for nbval and for pytest alike. The sentences are
written for the learner: they say what the check saw, what it expected, and where to look.

    with Report("Lab 02: the partitioner") as report:
        if report.check(answer == 42, "the answer is 42", f"the answer should be 42, not {answer}"):
            report.check(...)
        else:
            report.not_run("the answer, checked against the broker")

In a notebook the failure is shown once: the ``✘`` lines say what is wrong, and the
error under them only says how many checks passed. ``str()`` of the exception carries
the failed sentences too, for tests and logs that only see the exception.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from types import TracebackType
from typing import Any, Literal

from .i18n import _

PASS, FAIL, NOT_RUN = "✔", "✘", "·"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 byte``, ``2 bytes``: a count with its noun in the right number."""
    return f"{n} {word if n == 1 else many or word + 's'}"


class CheckFailed(AssertionError):
    """A lab check did not pass; ``failures`` holds the sentences of the failed checks."""

    def __init__(self, summary: str, failures: list[str] | None = None):
        self.summary = summary
        self.failures = list(failures or [])
        super().__init__(" ".join([summary, *self.failures]))

    def _render_traceback_(self) -> list[str]:
        # IPython shows this instead of a traceback through the checking code; the failed
        # sentences are already printed above it, once.
        return ["CheckFailed: " + _("{summary} Fix what the {mark} lines above describe, then run the cell again.")
                .format(summary=self.summary, mark=FAIL)]


class Report:
    """Collects the results of one lab's checks and prints them as they come."""

    def __init__(self, title: str):
        self.title = title
        self.passed: list[str] = []
        self.failed: list[str] = []
        self.skipped: list[str] = []

    def __enter__(self) -> Report:
        print(self.title)
        return self

    def check(self, ok: Any, passed: str, expected: str) -> bool:
        """Record one expectation: ``passed`` is printed if ``ok``, else ``expected``."""
        if ok:
            self.passed.append(passed)
            print(f"  {PASS} {passed}")
        else:
            self.failed.append(expected)
            print(f"  {FAIL} {expected}")
        return bool(ok)

    def not_run(self, what: str, why: str | None = None) -> None:
        """Record a check that could not run: it is listed, and counted, but neither passed nor failed."""
        self.skipped.append(what)
        why = why or _("it needs the checks above to pass")
        print(f"  {NOT_RUN} " + _("not run: {what} ({why})").format(what=what, why=why))

    def attempt(self, fn: Callable[..., Any], *args: Any, what: str) -> tuple[bool, Any]:
        """Call the learner's ``fn``; an exception becomes a failed check instead of a traceback."""
        try:
            return True, fn(*args)
        except Exception as e:  # noqa: BLE001 - any error in learner code is a finding
            self.check(False, "", _("{what} raised {error}: {message} ({where}).").format(
                what=what, error=type(e).__name__, message=e, where=where(e)))
            return False, None

    @property
    def total(self) -> int:
        return len(self.passed) + len(self.failed) + len(self.skipped)

    def summary(self) -> str:
        """``2 of 3 checks passed, 1 failed.`` (and how many did not run)."""
        parts = [_("{count} failed").format(count=len(self.failed))]
        if self.skipped:
            parts.append(_("{count} not run").format(count=len(self.skipped)))
        return _("{passed} of {total} passed, {rest}.").format(
            passed=len(self.passed), total=plural(self.total, _("check"), _("checks")), rest=_(" and ").join(parts))

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        if exc is not None and not isinstance(exc, CheckFailed):
            self.check(False, "", _("The check stopped early: {error}: {message}").format(
                error=type(exc).__name__, message=exc))
        if self.failed or self.skipped:
            print(self.summary())
            raise CheckFailed(f"{self.title}: {self.summary()}", self.failed) from (exc if exc_type else None)
        print(_("All {total} passed. Well done!").format(total=plural(self.total, _("check"), _("checks"))))
        return False


def where(error: BaseException) -> str:
    """``line 12 of murmur2``: the innermost frame of an error raised in learner code."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return _("no traceback")
    return _("line {line} of {function}").format(line=frames[-1].lineno, function=frames[-1].name)


def check(ok: bool, passed: str, expected: str) -> None:
    """A single check outside a report: print the result, raise ``CheckFailed`` if not ``ok``."""
    if ok:
        print(f"{PASS} {passed}")
        return
    print(f"{FAIL} {expected}")
    raise CheckFailed(_("1 check failed."), [expected])
