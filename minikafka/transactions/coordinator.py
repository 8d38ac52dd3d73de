"""The transaction coordinator (KIP-98): producer ids, epochs, commits and aborts.

Each ``transactional.id`` belongs to one partition of ``__transaction_state``; the
broker leading that partition is its coordinator and writes every state change there
before acting on it, so a restarted or newly elected coordinator rebuilds the same
state by reading the partition back. Ending a transaction writes a control record
(a commit or abort marker) into every partition the transaction touched; consumers in
``read_committed`` mode then see committed records and skip aborted ones.

A newer producer with the same ``transactional.id`` gets a bumped epoch: the old one
(a zombie) is fenced, and its open transaction is aborted. A transaction left open
longer than its ``transaction.timeout.ms`` is aborted the same way.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from typing import TYPE_CHECKING

from .. import records
from ..groups import offsets
from ..errors import ErrorCode, KafkaError
from ..partition import Partition, now_ms
from . import states, txnlog
from .states import TxnState
from .txnlog import TxnMetadata

if TYPE_CHECKING:
    from ..broker import Broker

log = logging.getLogger("minikafka.transactions")

TOPIC = "__transaction_state"
REPLICATION_TIMEOUT = datetime.timedelta(seconds=10)
OPEN = (TxnState.ONGOING,)
FINISHED = (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)


# Kafka places transactional ids exactly as it places groups: abs(hashCode) % partitions.
partition_for_key = offsets.partition_for


class TransactionCoordinator:
    def __init__(self, broker: "Broker"):
        self.broker = broker
        self.txns: dict[str, TxnMetadata] = {}
        self.loaded: set[int] = set()  # __transaction_state partitions whose state is in memory

    # -- placement and loading ---------------------------------------------------------
    def ensure_topic(self) -> None:
        if TOPIC not in self.broker.metadata.topics:
            self.broker.create_topic(TOPIC, self.broker.config["transaction.state.log.num.partitions"],
                                     min(3, len(self.broker.peers)),
                                     {"cleanup.policy": "compact", "segment.bytes": str(100 * 1024 * 1024)})

    def partition_of(self, transactional_id: str) -> int:
        self.ensure_topic()
        return partition_for_key(transactional_id, len(self.broker.metadata.topics[TOPIC].partitions))

    def _state_partition(self, transactional_id: str) -> Partition:
        index = self.partition_of(transactional_id)
        part = self.broker.partitions.get((TOPIC, index))
        if part is None or not part.is_leader:
            raise KafkaError(ErrorCode.not_coordinator, f"Broker {self.broker.node_id} does not coordinate "
                                                        f"transactional id {transactional_id!r}.")
        if index not in self.loaded:
            self.load(part)
        return part

    def load(self, part: Partition) -> None:
        """Rebuild the state of one __transaction_state partition from its log."""
        latest: dict[str, TxnMetadata | None] = {}
        for header, batch in part.log.batches(part.log_start_offset):
            if header.is_control:
                continue
            for r in records.iter_records(batch):
                tid = txnlog.decode_key(r.key)
                latest[tid] = None if r.value is None else txnlog.decode_value(tid, r.value)
        for tid, meta in latest.items():
            if meta is not None:
                self.txns[tid] = meta
        self.loaded.add(part.index)
        # Transactions caught between prepare and complete are finished by run()'s next tick.

    def on_become_leader(self, part: Partition) -> None:
        if part.topic == TOPIC:
            self.loaded.discard(part.index)
            self.load(part)

    async def _persist(self, meta: TxnMetadata, state: TxnState) -> None:
        """Write the new state to __transaction_state and wait until the ISR has it
        (Kafka's coordinator appends with acks=all), so a new coordinator sees it too."""
        if state != meta.state:
            states.check(meta.state, state)
        meta.state, meta.last_update_ms = state, now_ms()
        part = self._state_partition(meta.transactional_id)
        rec = records.Record(0, meta.last_update_ms, txnlog.encode_key(meta.transactional_id), txnlog.encode_value(meta))
        await self._replicated(part, part.append_batches([records.build_batch([rec])]).last_offset + 1)

    async def _replicated(self, part: Partition, offset: int) -> None:
        try:
            await self.broker.wait_for_replicas(part, offset, REPLICATION_TIMEOUT)
        except KafkaError:
            raise KafkaError(ErrorCode.not_coordinator, "The write did not reach the in-sync replicas in time; "
                                                        "the client retries with the current coordinator.") from None

    # -- the API ------------------------------------------------------------------------
    async def init_producer_id(self, tid: str, timeout_ms: int, _pid: int = -1, _epoch: int = -1) -> tuple[int, int]:
        self._state_partition(tid)
        if timeout_ms > self.broker.config["transaction.max.timeout.ms"] or timeout_ms <= 0:
            raise KafkaError(ErrorCode.invalid_transaction_timeout)
        meta = self.txns.get(tid)
        if meta is None:
            meta = self.txns[tid] = TxnMetadata(tid, self.broker.metadata.next_producer_id(), -1, timeout_ms)
        if meta.state in OPEN:
            await self._abort_for_fencing(meta)
        meta.producer_epoch += 1
        if meta.producer_epoch >= 32767:  # epoch exhausted: a fresh producer id starts over
            meta.producer_id, meta.producer_epoch = self.broker.metadata.next_producer_id(), 0
        meta.timeout_ms, meta.partitions = timeout_ms, set()
        await self._persist(meta, TxnState.EMPTY)
        return meta.producer_id, meta.producer_epoch

    def _checked(self, tid: str, pid: int, epoch: int) -> TxnMetadata:
        self._state_partition(tid)
        meta = self.txns.get(tid)
        if meta is None or meta.producer_id != pid:
            raise KafkaError(ErrorCode.invalid_producer_id_mapping,
                             f"Producer id {pid} does not belong to transactional id {tid!r}.")
        if epoch != meta.producer_epoch:
            raise KafkaError(ErrorCode.producer_fenced,
                             f"Epoch {epoch} of {tid!r} is stale (current {meta.producer_epoch}): fenced.")
        if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            raise KafkaError(ErrorCode.concurrent_transactions)
        return meta

    async def add_partitions(self, tid: str, pid: int, epoch: int, partitions: list[tuple[str, int]]) -> None:
        meta = self._checked(tid, pid, epoch)
        for topic, index in partitions:
            info = self.broker.metadata.topics.get(topic)
            if info is None or index >= len(info.partitions):
                raise KafkaError(ErrorCode.unknown_topic_or_partition, f"{topic}-{index} does not exist.")
        if meta.state in FINISHED:
            meta.partitions, meta.start_ms = set(), now_ms()
        meta.partitions |= set(partitions)
        await self._persist(meta, TxnState.ONGOING)

    async def add_offsets(self, tid: str, pid: int, epoch: int, group_id: str) -> None:
        offsets_topic = offsets.TOPIC
        if offsets_topic not in self.broker.metadata.topics and self.broker.groups is not None:
            self.broker.groups.ensure_offsets_topic()
        count = len(self.broker.metadata.topics[offsets_topic].partitions)
        await self.add_partitions(tid, pid, epoch, [(offsets_topic, partition_for_key(group_id, count))])

    async def end_txn(self, tid: str, pid: int, epoch: int, commit: bool) -> None:
        meta = self._checked(tid, pid, epoch)
        done = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
        if meta.state == done:
            return  # a retried EndTxn after a lost response
        if meta.state != TxnState.ONGOING:
            raise KafkaError(ErrorCode.invalid_txn_state,
                             f"Cannot {'commit' if commit else 'abort'}: transaction {tid!r} is {meta.state.name}.")
        await self._persist(meta, TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT)
        await self._complete(meta)

    def check_produce(self, tid: str, part: Partition, pid: int, epoch: int) -> None:
        """A transactional write must come from the current epoch, to a partition in the transaction."""
        owner = self.broker.transaction_coordinator_for(tid)
        meta = owner.txns.get(tid) if owner else None
        if meta is None:
            return  # coordinator elsewhere and not loaded: let sequence/epoch checks decide
        if meta.producer_id == pid and epoch < meta.producer_epoch:
            raise KafkaError(ErrorCode.invalid_producer_epoch, f"Producer epoch {epoch} of {tid!r} is fenced.")
        if meta.producer_id == pid and (part.topic, part.index) not in meta.partitions:
            raise KafkaError(ErrorCode.invalid_txn_state,
                             f"{part.topic}-{part.index} was not added to transaction {tid!r}.")

    # -- completing and aborting --------------------------------------------------------------
    async def _complete(self, meta: TxnMetadata) -> None:
        commit = meta.state == TxnState.PREPARE_COMMIT
        pending = [tp for tp in sorted(meta.partitions) if not await self._write_marker(tp, meta, commit)]
        if pending:
            log.warning("markers for %s not yet written to %s; will retry", meta.transactional_id, pending)
            meta.partitions = set(pending)
            return
        meta.partitions = set()
        await self._persist(meta, TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT)

    async def _write_marker(self, tp: tuple[str, int], meta: TxnMetadata, commit: bool) -> bool:
        """WriteTxnMarkers, in-process: append a control record on the partition's leader."""
        topic, index = tp
        info = self.broker.metadata.topics.get(topic)
        if info is None:
            return True  # the topic was deleted: nothing to mark
        leader = self.broker.peers.get(info.partitions[index].leader)
        part = leader.partitions.get(tp) if leader else None
        if part is None or not part.is_leader:
            return False
        offset = part.write_marker(meta.producer_id, meta.producer_epoch, commit)
        if topic == offsets.TOPIC and leader.groups is not None:
            leader.groups.complete_transaction(index, meta.producer_id, commit)
        try:
            await leader.wait_for_replicas(part, offset + 1, REPLICATION_TIMEOUT)
        except KafkaError:
            log.warning("marker on %s-%d not yet on all in-sync replicas", topic, index)
        return True

    async def _abort_for_fencing(self, meta: TxnMetadata) -> None:
        meta.producer_epoch += 1  # markers carry the new epoch: the zombie's writes are refused
        await self._persist(meta, TxnState.PREPARE_ABORT)
        await self._complete(meta)

    async def run(self, interval_s: float = 0.2) -> None:
        """Abort transactions past their timeout; retry markers that could not be written."""
        while True:
            await asyncio.sleep(interval_s)
            now = now_ms()
            for meta in list(self.txns.values()):
                try:
                    await self._tick(meta, now)
                except KafkaError:
                    pass  # no longer the coordinator of this id

    async def _tick(self, meta: TxnMetadata, now: int) -> None:
        if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            self._state_partition(meta.transactional_id)
            await self._complete(meta)
        elif meta.state == TxnState.ONGOING and now - meta.start_ms > meta.timeout_ms:
            self._state_partition(meta.transactional_id)
            log.info("aborting transaction %r: open longer than %d ms", meta.transactional_id, meta.timeout_ms)
            await self._abort_for_fencing(meta)


def attach(broker: "Broker") -> None:
    coordinator = TransactionCoordinator(broker)
    broker.transactions = coordinator
    broker.leadership_listeners.append(coordinator.on_become_leader)
    broker._tasks.append(asyncio.get_running_loop().create_task(coordinator.run()))
