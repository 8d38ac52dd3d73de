"""State machines declared as data, one shape for all of them.

The classic group coordinator (``groups.states``), the consumer protocol's members
(``groups.consumer.states``), the share-partitions' records (``share.states``) and the
transaction coordinator (``transactions.states``) keep their rules as ``(from, event, to)``
rows in a ``StateTable``. Code asks the table for every move: a move outside it is a
coordinator bug, and says so loudly with ``IllegalTransition``. The course and the decks
draw the same rows as diagrams (``rows``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

S = TypeVar("S")


class IllegalTransition(RuntimeError):
    """The code tried a move its state table does not allow: a coordinator bug."""


class StateTable(Generic[S]):
    """The legal moves of one state machine: each ``(state, event)`` pair leads to one state.

    ``subject`` names what moves, for the error (``"a group"``, ``"a record"``); ``events``,
    when given, documents each event, and every event of the rows must be documented.
    """

    def __init__(self, subject: str, rows: tuple[tuple[S, str, S], ...],
                 events: Mapping[str, str] | None = None) -> None:
        self.subject, self.rows = subject, rows
        self._next: dict[tuple[S, str], S] = {(src, event): dst for src, event, dst in rows}
        if len(self._next) != len(rows):
            raise ValueError(f"{subject}: a (state, event) pair may lead to one state only")
        if events is not None and {event for _, event, _ in rows} != set(events):
            raise ValueError(f"{subject}: every event must be documented and used")
        self._moves = {(src, dst) for src, _, dst in rows}

    def __iter__(self) -> Iterator[tuple[S, str, S]]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def next(self, state: S, event: str) -> S:
        """The state ``event`` leads to from ``state``; IllegalTransition if the table has no such move."""
        try:
            return self._next[(state, event)]
        except KeyError:
            raise IllegalTransition(f"{self.subject} in state {state} cannot take event {event!r}") from None

    def allows(self, state: S, target: S) -> bool:
        """Whether some event moves ``state`` to ``target``."""
        return (state, target) in self._moves

    def check(self, state: S, target: S) -> None:
        """Refuse a move to ``target`` that no event of the table makes."""
        if not self.allows(state, target):
            name = getattr(state, "name", state), getattr(target, "name", target)
            raise IllegalTransition(f"{self.subject} in state {name[0]} cannot move to {name[1]}")
