"""The transaction state machine, declared once as data (KIP-98).

A transactional producer moves its ``transactional.id`` through these states; the
coordinator checks every move against ``TRANSITIONS`` and the course draws its diagram
from the same rows. The numbers are the ones Kafka writes into ``__transaction_state``.
With transaction protocol v2 (KIP-890 part 2) a producer may abort a transaction the
coordinator never heard of (its first writes failed before they added a partition), so
an abort may also start from a finished state.
"""

from __future__ import annotations

import enum

from ..state_table import IllegalTransition, StateTable

__all__ = ["TABLE", "TRANSITIONS", "IllegalTransition", "TxnState", "check"]


class TxnState(enum.IntEnum):
    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6


S = TxnState

# (from, event, to): every move the coordinator may make.
TRANSITIONS: tuple[tuple[TxnState, str, TxnState], ...] = (
    (S.EMPTY, "AddPartitionsToTxn / AddOffsetsToTxn", S.ONGOING),
    (S.COMPLETE_COMMIT, "AddPartitionsToTxn / AddOffsetsToTxn", S.ONGOING),
    (S.COMPLETE_ABORT, "AddPartitionsToTxn / AddOffsetsToTxn", S.ONGOING),
    (S.ONGOING, "AddPartitionsToTxn / AddOffsetsToTxn", S.ONGOING),
    (S.ONGOING, "EndTxn(commit)", S.PREPARE_COMMIT),
    (S.ONGOING, "EndTxn(abort), timeout or fencing", S.PREPARE_ABORT),
    (S.EMPTY, "EndTxn v5 (abort), nothing added", S.PREPARE_ABORT),
    (S.COMPLETE_COMMIT, "EndTxn v5 (abort), nothing added", S.PREPARE_ABORT),
    (S.COMPLETE_ABORT, "EndTxn v5 (abort), nothing added", S.PREPARE_ABORT),
    (S.PREPARE_COMMIT, "markers written", S.COMPLETE_COMMIT),
    (S.PREPARE_ABORT, "markers written", S.COMPLETE_ABORT),
    (S.EMPTY, "InitProducerId", S.EMPTY),
    (S.COMPLETE_COMMIT, "InitProducerId", S.EMPTY),
    (S.COMPLETE_ABORT, "InitProducerId", S.EMPTY),
    (S.EMPTY, "transactional.id.expiration.ms", S.DEAD),
    (S.COMPLETE_COMMIT, "transactional.id.expiration.ms", S.DEAD),
    (S.COMPLETE_ABORT, "transactional.id.expiration.ms", S.DEAD),
)

TABLE = StateTable("a transaction", TRANSITIONS)
check = TABLE.check  # the coordinator sets a state directly; the table says whether some event moves it there
