"""The one-line check under an exercise's starting cell: it says whether the learner's code did
what the exercise asks, and never stops the notebook (an untouched cell is "not yet", not an error).

    course.exercise(1, stored.partition == partition_for(b"order-42", 12),
                    "compute to_positive(murmur2(key)) % 12, then produce the record and read its partition")

What is checked is behaviour the learner can see (records read, offsets committed, the partition a
record landed in), computed in the cell, not the names or settings the learner chose.
"""

from __future__ import annotations

from .i18n import _


def exercise(number: int | str, passed: object, hint: str) -> None:
    """Print one line for exercise ``number``: done, or not yet with ``hint``. It returns nothing,
    so the cell shows that line alone (no ``True``/``False`` under it as the cell's value)."""
    if passed:
        print("✔ " + _("Exercise {number}: done.").format(number=number))
    else:
        print("· " + _("Exercise {number}: not yet.").format(number=number) + " " + hint)
