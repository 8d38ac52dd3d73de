"""Errors shown on purpose, in one line a learner can read.

A cell that demonstrates a refusal (a record over the size limit, a replication factor
larger than the cluster, an incompatible schema) wraps the call in ``expect_error``.
The error is caught and printed as one line, the Kafka error name and the broker's
sentence, so the notebook goes on and finishes with exit 0 under papermill, nbconvert,
JupyterLab's Run All and nbval alike:

    with course.expect_error():
        course.admin().create_topics([NewTopic("four-copies", 1, replication_factor=4)])["four-copies"].result(10)
    # -> INVALID_REPLICATION_FACTOR: Replication factor 4 is larger than the 3 available brokers.

If the call does *not* fail, that is a surprise worth saying, so ``expect_error``
prints that too (it never raises either way).
"""

from __future__ import annotations

import concurrent.futures
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .i18n import _


class Caught:
    """What ``expect_error`` caught: ``name`` (e.g. ``MSG_SIZE_TOO_LARGE``) and ``sentence``."""

    def __init__(self) -> None:
        self.name: str | None = None
        self.sentence: str | None = None

    def __bool__(self) -> bool:
        return self.name is not None

    def __str__(self) -> str:
        return f"{self.name}: {self.sentence}" if self else "no error"


def describe(exc: BaseException) -> tuple[str, str]:
    """(error name, sentence) for an exception from confluent-kafka, kafka-python or anything else."""
    err = exc.args[0] if exc.args else None
    if err is not None and hasattr(err, "name") and hasattr(err, "str") and callable(err.str):  # confluent's KafkaError
        return err.name(), _sentence(err.str())
    errno = getattr(type(exc), "errno", None)
    if isinstance(errno, int) and hasattr(type(exc), "message"):  # kafka.errors.BrokerResponseError
        # kafka-python puts the whole response in the text; the broker's sentence is in it.
        said = re.search(r"""error_message=(?:"([^"]*)"|'([^']*)')""", str(exc))
        detail = (said.group(1) or said.group(2)) if said else ""
        if not detail and " - " in str(exc):
            detail = str(exc).split(" - ", 1)[-1]
        kind: Any = type(exc)  # a kafka.errors class: its message and description are class attributes
        return kind.message, _sentence(detail or kind.description)
    return type(exc).__name__, _sentence(str(exc))


def _sentence(text: str) -> str:
    first = " ".join(str(text).split())
    return first if len(first) <= 300 else first[:297] + "..."


@contextmanager
def expect_error(*, show: bool = True) -> Iterator[Caught]:
    """Run the body; print the error it raises in one line instead of a traceback."""
    caught = Caught()
    try:
        yield caught
    except (Exception, concurrent.futures.CancelledError) as exc:  # noqa: BLE001 - shown to the learner
        caught.name, caught.sentence = describe(exc)
        if show:
            print(f"{caught.name}: {caught.sentence}")
    else:
        if show:
            print(_("No error this time: the call succeeded."))
