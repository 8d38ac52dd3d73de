"""The transaction coordinator (KIP-98): producer ids, epochs, commits and aborts.

Each ``transactional.id`` belongs to one partition of ``__transaction_state``; the
broker leading that partition is its coordinator and writes every state change there
before acting on it, so a restarted or newly elected coordinator rebuilds the same
state by reading the partition back. Ending a transaction writes a control record
(a commit or abort marker) into every partition the transaction touched; consumers in
``read_committed`` mode then see committed records and skip aborted ones.

A newer producer with the same ``transactional.id`` gets a bumped epoch: the old one
(a zombie) is fenced, and its open transaction is aborted with markers that carry the
new epoch, so every partition's producer state refuses the zombie from then on. A
transaction left open longer than its ``transaction.timeout.ms`` is aborted the same
way, and an idle id is forgotten after ``transactional.id.expiration.ms``.

Transaction protocol v2 (KIP-890 part 2), which a client uses when the cluster finalizes
``transaction.version`` 2, changes two things here: partition leaders add partitions on
the producer's behalf when it first writes to them, and EndTxn v5 ends every transaction
with a bumped epoch, which the markers carry and the answer hands to the producer. A zombie
of the producer is then fenced at its next write, not only after a new instance initializes.

Each transactional id moves one step at a time: a per-id lock serialises EndTxn,
InitProducerId, AddPartitions and the timer, so a transaction is completed once.
The coordinator knows only its own broker's replicas (``LocalReplicas``) and reaches
partition leaders elsewhere through ``channel.TxnPeers`` (WriteTxnMarkers), one request per
leader; partitions whose leader did not write the marker (it moved, or its broker is down)
are sent again at the timer's next tick, to the leader the metadata names by then.

Time is the injected ``minikafka.clock.Clock``'s wall milliseconds, as in Kafka: a
transaction's start and last update are written to ``__transaction_state`` and read back
by the next coordinator, possibly in another process, where a monotonic reading would
mean nothing; ``transaction.timeout.ms`` is measured from that stored start.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from collections import defaultdict
from collections.abc import Callable

from .. import records
from ..clock import SYSTEM, Clock
from ..errors import ErrorCode, KafkaError
from ..groups import offsets
from ..replica.partition import Partition
from ..replica.peers import LocalReplicas
from . import epochs, states, txnlog
from .channel import Marker, TopicPartition, TxnPeers
from .states import TxnState
from .txnlog import TxnMetadata

log = logging.getLogger("minikafka.transactions")

TOPIC = "__transaction_state"
REPLICATION_TIMEOUT = datetime.timedelta(seconds=10)
# How long EndTxn (and the timer) waits for the markers before going on without them: Kafka answers
# EndTxn once the decision is written; a leader that does not answer (a paused broker) would otherwise
# hold the producer's commit, and the timer's other ids, for the whole request timeout.
MARKERS_WAIT = datetime.timedelta(seconds=5)
FINISHED = (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)
MAX_EPOCH = 32767  # the largest int16: an epoch bumped to it is the producer id's last


# Kafka places transactional ids exactly as it places groups: abs(hashCode) % partitions.
partition_for_key = offsets.partition_for


class TransactionCoordinator:
    def __init__(self, replicas: LocalReplicas, peers: TxnPeers, ensure_offsets_topic: Callable[[], None],
                 clock: Clock = SYSTEM):
        self.replicas, self.peers, self.metadata, self.clock = replicas, peers, replicas.metadata, clock
        self.config, self.node_id = replicas.config, replicas.node_id
        self.ensure_offsets_topic = ensure_offsets_topic
        self.txns: dict[str, TxnMetadata] = {}
        self.loaded: set[int] = set()  # __transaction_state partitions whose state is in memory
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)  # one step at a time per id
        self._completing: dict[str, asyncio.Future[None]] = {}  # markers still out after MARKERS_WAIT

    # -- placement and loading ---------------------------------------------------------
    def ensure_topic(self) -> None:
        self.replicas.create_internal_topic(TOPIC, self.config["transaction.state.log.num.partitions"],
                                            {"cleanup.policy": "compact", "segment.bytes": str(100 * 1024 * 1024)})

    def partition_of(self, transactional_id: str) -> int:
        self.ensure_topic()
        state_topic = self.metadata.topics.get(TOPIC)
        if state_topic is None:  # a broker process asked the controller for it: it arrives by the metadata log
            raise KafkaError(ErrorCode.coordinator_not_available, f"{TOPIC} is being created; retry shortly.")
        return partition_for_key(transactional_id, len(state_topic.partitions))

    def _state_partition(self, transactional_id: str) -> Partition:
        index = self.partition_of(transactional_id)
        part = self.replicas.local_replica(TOPIC, index)
        if part is None or not part.is_leader:
            raise KafkaError(ErrorCode.not_coordinator, f"Broker {self.node_id} does not coordinate "
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
                if r.key is None:
                    log.warning("skipping a record without a key in %s-%d", TOPIC, part.index)
                    continue
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
        meta.state, meta.last_update_ms = state, self.clock.wall_ms()
        part = self._state_partition(meta.transactional_id)
        version = 1 if self.config["transaction.version"] >= 2 else 0  # v1 keeps the tagged fields of v2
        rec = records.Record(0, meta.last_update_ms, txnlog.encode_key(meta.transactional_id),
                             txnlog.encode_value(meta, version))
        await self._replicated(part, part.append_batches([records.build_batch([rec])]).last_offset + 1)

    async def _replicated(self, part: Partition, offset: int) -> None:
        try:
            await part.wait_for_replicas(offset, REPLICATION_TIMEOUT)
        except KafkaError:
            raise KafkaError(ErrorCode.not_coordinator, "The write did not reach the in-sync replicas in time; "
                                                        "the client retries with the current coordinator.") from None

    # -- the API ------------------------------------------------------------------------
    async def init_producer_id(self, tid: str, timeout_ms: int, pid: int = -1, epoch: int = -1) -> tuple[int, int]:
        """The producer id and epoch for ``tid``; ``pid``/``epoch`` are the producer's own when it
        asks to bump its epoch after an error (KIP-360), else -1."""
        async with self._locks[tid]:
            return await self._init_producer_id(tid, timeout_ms, pid, epoch)

    async def _init_producer_id(self, tid: str, timeout_ms: int, pid: int, epoch: int) -> tuple[int, int]:
        self._state_partition(tid)
        if timeout_ms > self.config["transaction.max.timeout.ms"] or timeout_ms <= 0:
            raise KafkaError(ErrorCode.invalid_transaction_timeout)
        meta = self.txns.get(tid)
        if meta is None:
            meta = self.txns[tid] = TxnMetadata(tid, self.metadata.next_producer_id(), -1, timeout_ms)
        step = epochs.init_step(meta, pid, epoch)
        if step == epochs.InitStep.FENCE:
            # As Kafka: one bump, which the abort markers carry; the producer is told to retry and
            # its retry bumps again (the epoch it is handed was never seen by the old instance).
            await self._abort_for_fencing(meta)
            raise KafkaError(ErrorCode.concurrent_transactions, f"The open transaction of {tid!r} was aborted "
                                                                "to fence the previous producer; retry.")
        expected = pid != -1 or epoch != -1
        if step == epochs.InitStep.NEW_ID:
            meta.last_producer_epoch = meta.producer_epoch if expected else -1
            meta.producer_id, meta.producer_epoch = self.metadata.next_producer_id(), 0
        elif step == epochs.InitStep.BUMP:
            meta.last_producer_epoch = meta.producer_epoch if expected else -1
            meta.producer_epoch += 1
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
        async with self._locks[tid]:
            await self._add_partitions(tid, pid, epoch, partitions)

    async def _add_partitions(self, tid: str, pid: int, epoch: int, partitions: list[tuple[str, int]]) -> None:
        meta = self._checked(tid, pid, epoch)
        for topic, index in partitions:
            info = self.metadata.topics.get(topic)
            if info is None or index >= len(info.partitions):
                raise KafkaError(ErrorCode.unknown_topic_or_partition, f"{topic}-{index} does not exist.")
        if meta.state in FINISHED:
            meta.partitions, meta.start_ms = set(), self.clock.wall_ms()
        meta.partitions |= set(partitions)
        await self._persist(meta, TxnState.ONGOING)

    async def add_offsets(self, tid: str, pid: int, epoch: int, group_id: str) -> None:
        offsets_topic = offsets.TOPIC
        if offsets_topic not in self.metadata.topics:
            self.ensure_offsets_topic()
        if offsets_topic not in self.metadata.topics:  # being created by the controller (broker processes)
            raise KafkaError(ErrorCode.coordinator_not_available, f"{offsets_topic} is being created; retry shortly.")
        count = len(self.metadata.topics[offsets_topic].partitions)
        await self.add_partitions(tid, pid, epoch, [(offsets_topic, partition_for_key(group_id, count))])

    async def end_txn(self, tid: str, pid: int, epoch: int, commit: bool, bump_epoch: bool = False
                      ) -> tuple[int, int]:
        """Commit or abort; the producer id and epoch the producer goes on with.

        ``bump_epoch`` is transaction protocol v2 (EndTxn v5): they are new after every transaction.
        """
        async with self._locks[tid]:
            if bump_epoch:
                return await self._end_txn_v2(tid, pid, epoch, commit)
            await self._end_txn(tid, pid, epoch, commit)
            return pid, epoch

    async def _end_txn(self, tid: str, pid: int, epoch: int, commit: bool) -> None:
        meta = self._checked(tid, pid, epoch)
        done = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
        if meta.state == done:
            return  # a retried EndTxn after a lost response
        if meta.state != TxnState.ONGOING:
            raise KafkaError(ErrorCode.invalid_txn_state,
                             f"Cannot {'commit' if commit else 'abort'}: transaction {tid!r} is {meta.state.name}.")
        await self._persist(meta, TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT)
        await self._complete_in_time(meta)

    async def _end_txn_v2(self, tid: str, pid: int, epoch: int, commit: bool) -> tuple[int, int]:
        self._state_partition(tid)
        meta = self.txns.get(tid)
        step = epochs.end_step_v2(meta, pid, epoch, commit)
        assert meta is not None  # end_step_v2 refuses an id without state
        if step == epochs.EndStep.ANSWER:
            return _next_producer(meta)  # a retry whose answer was lost: it still has the old epoch
        if meta.state != TxnState.ONGOING:  # an abort with nothing added
            meta.partitions = set()
        meta.producer_epoch += 1  # the markers carry the new epoch
        if meta.producer_epoch >= MAX_EPOCH:
            meta.next_producer_id = self.metadata.next_producer_id()
        meta.client_transaction_version = 2
        await self._persist(meta, TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT)
        await self._complete_in_time(meta)
        return _next_producer(meta)

    def verify(self, tid: str, pid: int, epoch: int, topic: str, index: int) -> None:
        """A partition leader's check of a transaction's first write to it (KIP-890).

        An older epoch of the producer is fenced (INVALID_PRODUCER_EPOCH: a new instance with the
        same transactional id has initialized). Otherwise the partition must have been added to
        the ongoing transaction of this producer. Ids this coordinator does not hold (not loaded,
        or placed elsewhere) pass.
        """
        meta = self.txns.get(tid)
        if meta is None or meta.producer_id != pid:
            return
        if epoch < meta.producer_epoch:
            raise KafkaError(ErrorCode.invalid_producer_epoch,
                             f"Producer epoch {epoch} of {tid!r} is fenced: epoch {meta.producer_epoch} took over.")
        if (topic, index) not in meta.partitions or meta.state != TxnState.ONGOING:
            raise KafkaError(ErrorCode.invalid_txn_state, f"{topic}-{index} was not added to transaction {tid!r}.")

    def verify_producer(self, tid: str, pid: int, epoch: int) -> None:
        """Only the current epoch of a transactional id may commit offsets (fencing)."""
        meta = self.txns.get(tid)
        if meta is None or meta.producer_id != pid:
            raise KafkaError(ErrorCode.invalid_producer_id_mapping)
        if epoch != meta.producer_epoch:
            raise KafkaError(ErrorCode.producer_fenced)

    def state_of(self, tid: str) -> str | None:
        """The state name of an id whose ``__transaction_state`` partition this broker leads."""
        index = partition_for_key(tid, len(self.metadata.topics[TOPIC].partitions)) if TOPIC in self.metadata.topics \
            else None
        part = self.replicas.local_replica(TOPIC, index) if index is not None else None
        if part is None or not part.is_leader:
            return None
        meta = self.txns.get(tid)
        return meta.state.name if meta else "unknown"

    def describe(self, tid: str) -> TxnMetadata:
        """The state DescribeTransactions (KIP-664) reports for an id this broker coordinates."""
        self._state_partition(tid)  # NOT_COORDINATOR where another broker leads its partition
        meta = self.txns.get(tid)
        if meta is None:
            raise KafkaError(ErrorCode.transactional_id_not_found, f"No transaction is known for {tid!r}.")
        return meta

    # -- completing and aborting --------------------------------------------------------------
    async def _complete(self, meta: TxnMetadata) -> None:
        commit = meta.state == TxnState.PREPARE_COMMIT
        pending = await self._write_markers(meta, commit)
        if pending:
            log.warning("markers for %s not yet written to %s; will retry", meta.transactional_id, pending)
            meta.partitions = set(pending)
            return
        meta.partitions, meta.previous_producer_id = set(), meta.producer_id
        if meta.next_producer_id >= 0:  # v2 used the epoch up: the producer goes on with a new id
            meta.producer_id, meta.producer_epoch, meta.next_producer_id = meta.next_producer_id, 0, -1
        await self._persist(meta, TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT)

    async def _complete_in_time(self, meta: TxnMetadata) -> None:
        """``_complete``, waited for up to MARKERS_WAIT; past it the markers go on alone (the state stays
        PREPARE_*, so the id's next request hears CONCURRENT_TRANSACTIONS) and the timer leaves the id
        to them until they are answered."""
        tid = meta.transactional_id
        if tid in self._completing:
            return
        task = asyncio.ensure_future(self._complete(meta))
        done, _ = await asyncio.wait({task}, timeout=MARKERS_WAIT.total_seconds())
        if done:
            task.result()
            return
        log.warning("markers for %s still unanswered after %s; going on without them", tid, MARKERS_WAIT)
        self._completing[tid] = task
        task.add_done_callback(lambda done: self._answered(tid, done))

    def _answered(self, tid: str, task: asyncio.Future[None]) -> None:
        """The markers left to themselves are answered: the timer takes the id back (and any rest)."""
        self._completing.pop(tid, None)
        if not task.cancelled() and task.exception() is not None:
            log.info("completing %r stopped: %s; the timer tries again", tid, task.exception())

    async def _write_markers(self, meta: TxnMetadata, commit: bool) -> list[TopicPartition]:
        """WriteTxnMarkers to each partition's leader, one request per leader broker, all at once;
        the partitions whose marker is not written yet."""
        by_leader: defaultdict[int, list[TopicPartition]] = defaultdict(list)
        for topic, index in sorted(meta.partitions):
            info = self.metadata.topics.get(topic)
            if info is None or index >= len(info.partitions):
                continue  # the topic was deleted: nothing to mark
            by_leader[info.partitions[index].leader].append((topic, index))
        state = self.replicas.local_replica(TOPIC, self.partition_of(meta.transactional_id))
        marker = Marker(meta.producer_id, meta.producer_epoch, commit, state.leader_epoch if state else -1)
        answers = await asyncio.gather(*(self.peers.write_markers(leader, marker, partitions)
                                         for leader, partitions in by_leader.items()))
        return sorted(tp for answer in answers for tp, code in answer.items()
                      if code != ErrorCode.none and tp[0] in self.metadata.topics)

    async def _abort_for_fencing(self, meta: TxnMetadata) -> None:
        meta.producer_epoch += 1  # markers carry the new epoch: the zombie's writes are refused
        await self._persist(meta, TxnState.PREPARE_ABORT)
        await self._complete_in_time(meta)

    async def run(self, interval_s: float = 0.2) -> None:
        """Abort transactions past their timeout; retry markers that could not be written."""
        try:
            while True:
                await asyncio.sleep(interval_s)
                now = self.clock.wall_ms()
                for meta in list(self.txns.values()):
                    try:
                        await self.tick(meta, now)
                    except KafkaError as e:
                        log.debug("transaction timer skipped %r: %s", meta.transactional_id, e.message)
        finally:  # the broker is closing: markers still out are sent again by the next coordinator
            for task in list(self._completing.values()):
                task.cancel()

    async def tick(self, meta: TxnMetadata, now: int) -> None:
        """The timer's step for one id, taken in turn with the id's requests."""
        async with self._locks[meta.transactional_id]:
            await self._tick(meta, now)

    async def _tick(self, meta: TxnMetadata, now: int) -> None:
        if self.txns.get(meta.transactional_id) is not meta:
            return  # expired or replaced while waiting for the lock
        if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            self._state_partition(meta.transactional_id)
            await self._complete_in_time(meta)
        elif meta.state == TxnState.ONGOING and now - meta.start_ms > meta.timeout_ms:
            self._state_partition(meta.transactional_id)
            log.info("aborting transaction %r: open longer than %d ms", meta.transactional_id, meta.timeout_ms)
            # A v2 producer's own abort, with the epoch it had, then counts as a retry of this one and
            # hands it the new epoch; its commit is fenced (epochs.end_step_v2).
            await self._abort_for_fencing(meta)
        elif meta.state in FINISHED and now - meta.last_update_ms > self.config["transactional.id.expiration.ms"]:
            await self._expire(meta)

    async def _expire(self, meta: TxnMetadata) -> None:
        """Forget an idle id: a tombstone in __transaction_state, then DEAD (and gone)."""
        part = self._state_partition(meta.transactional_id)
        states.check(meta.state, TxnState.DEAD)
        tombstone = records.Record(0, self.clock.wall_ms(), txnlog.encode_key(meta.transactional_id), None)
        await self._replicated(part, part.append_batches([records.build_batch([tombstone])]).last_offset + 1)
        meta.state = TxnState.DEAD
        del self.txns[meta.transactional_id]
        log.info("transactional id %r expired after %d ms idle", meta.transactional_id,
                 self.config["transactional.id.expiration.ms"])



def _next_producer(meta: TxnMetadata) -> tuple[int, int]:
    """The producer id and epoch a transaction protocol v2 producer goes on with."""
    if meta.next_producer_id >= 0:  # the old id's markers are still being written
        return meta.next_producer_id, 0
    return meta.producer_id, meta.producer_epoch
