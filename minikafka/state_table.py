"""State machines declared as data: the one error for a move a table does not allow.

The group coordinator (``groups.states``) and the transaction coordinator
(``transactions.states``) keep their rules as ``(from, event, to)`` rows; code that tries
a move outside its table has a bug, and says so loudly with ``IllegalTransition``.
"""

from __future__ import annotations


class IllegalTransition(RuntimeError):
    """The code tried a move its state table does not allow: a coordinator bug."""
