"""Which producer id and epoch a transactional producer goes on with: Kafka's rules for
InitProducerId (KIP-98, KIP-360) and for EndTxn under transaction protocol v2 (KIP-890 part 2).

Each rule looks at the coordinator's state of one ``transactional.id`` and the id and epoch
the request carries, and names the step to take, or raises the error Kafka answers. No state
is needed beyond what ``__transaction_state`` keeps, so a coordinator that has just loaded the
partition (after a restart or a leader change) decides a retry exactly as the one that
answered the first attempt:

- an EndTxn v5 retried after its answer was lost carries the epoch before the bump, so the
  stored epoch is one above it (Kafka's "retry on epoch bump");
- one that used the last epoch up (the producer moved to a new id at epoch 0) carries the old
  id, which the state keeps as its *previous producer id* (Kafka's "retry on overflow").
"""

from __future__ import annotations

import enum

from ..errors import ErrorCode, KafkaError
from .states import TxnState
from .txnlog import TxnMetadata

NO_EPOCH = -1
LAST_EPOCH = 32766  # Kafka: an epoch >= Short.MAX_VALUE - 1 is the id's last one handed out


class InitStep(enum.Enum):
    FENCE = "abort the open transaction with a bumped epoch, answer CONCURRENT_TRANSACTIONS"
    NEW_ID = "the epochs are used up: a new producer id at epoch 0"
    BUMP = "the next epoch"
    SAME = "a retry of a bump already made: the current epoch again"


class EndStep(enum.Enum):
    END = "write PREPARE_COMMIT/PREPARE_ABORT with a bumped epoch, then the markers"
    ANSWER = "a retry of an EndTxn already done: answer the current producer id and epoch"


def init_step(meta: TxnMetadata, expected_pid: int, expected_epoch: int) -> InitStep:
    """InitProducerId for an existing id. ``expected_pid``/``expected_epoch`` (KIP-360, v3+)
    are the producer's own when it asks to bump its epoch after an error; -1 for a new one."""
    expected = expected_pid != -1 or expected_epoch != NO_EPOCH
    if expected and not _known_producer(meta, expected_pid, expected_epoch):
        raise KafkaError(ErrorCode.producer_fenced, f"Producer id {expected_pid} no longer belongs to "
                                                    f"{meta.transactional_id!r}: fenced.")
    if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
        raise KafkaError(ErrorCode.concurrent_transactions, f"The last transaction of {meta.transactional_id!r} is "
                                                            "still completing; retry.")
    if meta.state == TxnState.ONGOING:
        return InitStep.FENCE
    if meta.producer_epoch >= LAST_EPOCH and (not expected or expected_epoch == meta.producer_epoch):
        return InitStep.NEW_ID
    if not expected or meta.producer_epoch in (NO_EPOCH, expected_epoch):
        return InitStep.BUMP
    if expected_epoch == meta.last_producer_epoch:
        return InitStep.SAME
    raise KafkaError(ErrorCode.producer_fenced, f"Epoch {expected_epoch} of {meta.transactional_id!r} is stale "
                                                f"(current {meta.producer_epoch}): fenced.")


def _known_producer(meta: TxnMetadata, pid: int, epoch: int) -> bool:
    """The producer may bump: the id is new, is the current one, or is the one its last
    epoch was used up on (a retry after the move to a new id)."""
    return (meta.producer_epoch == NO_EPOCH or pid == meta.producer_id
            or (pid == meta.previous_producer_id and epoch >= LAST_EPOCH))


def end_step_v2(meta: TxnMetadata | None, pid: int, epoch: int, commit: bool) -> EndStep:
    """EndTxn v5: end the transaction with a bumped epoch, or answer a retry, or raise."""
    if meta is None:
        raise KafkaError(ErrorCode.invalid_producer_id_mapping, "No producer id belongs to this transactional id.")
    tid = meta.transactional_id
    retry_on_overflow = meta.previous_producer_id == pid and epoch == LAST_EPOCH and meta.producer_epoch == 0
    retry = retry_on_overflow or (pid == meta.producer_id and meta.producer_epoch == epoch + 1)
    if meta.producer_id != pid and not retry_on_overflow:
        raise KafkaError(ErrorCode.invalid_producer_id_mapping,
                         f"Producer id {pid} does not belong to transactional id {tid!r}.")
    if not _valid_epoch(meta, epoch, retry):
        raise KafkaError(ErrorCode.producer_fenced,
                         f"Epoch {epoch} of {tid!r} is stale (current {meta.producer_epoch}): fenced.")
    return _end_step_for_state(meta, commit, retry)


def _valid_epoch(meta: TxnMetadata, epoch: int, retry: bool) -> bool:
    """A transaction in progress takes only the current epoch; one being completed only a
    retry; a completed one either (a retry, or the next EndTxn)."""
    if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
        return retry
    if meta.state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
        return retry or epoch == meta.producer_epoch
    return epoch == meta.producer_epoch


def _end_step_for_state(meta: TxnMetadata, commit: bool, retry: bool) -> EndStep:
    """Kafka's table for transaction protocol v2 (TransactionCoordinator.endTransaction)."""
    state, tid = meta.state, meta.transactional_id
    verb = "commit" if commit else "abort"
    if state == TxnState.ONGOING or (not commit and not retry and state in (
            TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)):
        return EndStep.END  # an abort with nothing added is allowed (the writes failed before any add)
    done = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
    if retry and state == done:
        return EndStep.ANSWER
    if state == (TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT):
        raise KafkaError(ErrorCode.concurrent_transactions, f"The {verb} of {tid!r} is being completed; retry.")
    if commit and retry and state == TxnState.COMPLETE_ABORT:
        # KAFKA-20785: the coordinator aborted it (a timeout) while this commit was on its way.
        raise KafkaError(ErrorCode.producer_fenced, f"Transaction of {tid!r} was aborted by the coordinator "
                                                    "(it timed out) before this commit: fenced.")
    raise KafkaError(ErrorCode.invalid_txn_state, f"Cannot {verb}: transaction {tid!r} is {state.name}.")
