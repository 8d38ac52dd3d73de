"""Automatic checks for the labs: what passed, and what was expected when something did not.

A check prints one line per expectation. When any fails it raises ``CheckFailed``, an
``AssertionError``, so the last cell of a lab notebook fails for the learner, for nbval
and for pytest alike. The sentences are written for the learner: they say what the
check saw, what it expected, and where to look.

    with Report("Lab 02: the partitioner") as report:
        report.check(answer == 42, "the answer is 42", f"the answer should be 42, not {answer}")
"""

from __future__ import annotations

import traceback
from typing import Any, Callable

PASS, FAIL = "✔", "✘"


class CheckFailed(AssertionError):
    """A lab check did not pass; the message says what was expected."""

    def _render_traceback_(self) -> list[str]:
        # IPython shows this instead of a traceback through the checking code.
        return [f"CheckFailed: {self}", f"Fix what the {FAIL} lines above describe, then run the cell again."]


class Report:
    """Collects the results of one lab's checks and prints them as they come."""

    def __init__(self, title: str):
        self.title = title
        self.passed: list[str] = []
        self.failed: list[str] = []

    def __enter__(self) -> "Report":
        print(self.title)
        return self

    def check(self, ok: bool, passed: str, expected: str) -> bool:
        """Record one expectation: ``passed`` is printed if ``ok``, else ``expected``."""
        if ok:
            self.passed.append(passed)
            print(f"  {PASS} {passed}")
        else:
            self.failed.append(expected)
            print(f"  {FAIL} {expected}")
        return bool(ok)

    def attempt(self, fn: Callable[..., Any], *args: Any, what: str) -> tuple[bool, Any]:
        """Call the learner's ``fn``; an exception becomes a failed check instead of a traceback."""
        try:
            return True, fn(*args)
        except Exception as e:  # noqa: BLE001 - any error in learner code is a finding
            where = traceback.extract_tb(e.__traceback__)[-1]
            self.check(False, "", f"{what} raised {type(e).__name__}: {e} (line {where.lineno} of {where.name}).")
            return False, None

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc is not None and not isinstance(exc, CheckFailed):
            self.check(False, "", f"The check stopped early: {type(exc).__name__}: {exc}")
        total = len(self.passed) + len(self.failed)
        if self.failed:
            print(f"{len(self.passed)} of {total} checks passed.")
            raise CheckFailed(f"{self.title}: " + " ".join(self.failed)) from (exc if exc_type else None)
        print(f"All {total} checks passed. Well done!")
        return False


def check(ok: bool, passed: str, expected: str) -> None:
    """A single check outside a report: print the result, raise ``CheckFailed`` if not ``ok``."""
    if ok:
        print(f"{PASS} {passed}")
        return
    print(f"{FAIL} {expected}")
    raise CheckFailed(expected)
