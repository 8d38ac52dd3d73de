"""The share-partition leader: ShareFetch and ShareAcknowledge on one broker (KIP-932).

Share consumers fetch from the leader of each partition, as ordinary consumers do, and
that broker keeps the share-partitions (``partition``) of every share group reading the
partitions it leads. For each ShareFetch it checks the member's share session
(``sessions``), applies the acknowledgements the request carries, then acquires records
for the member: available in-flight records first, then new ones from the log, whole
batches, up to ``max_records``. When nothing can be acquired the request waits up to
``max_wait`` for new records, a release, or an acquisition lock running out. A timer
task expires the locks. Every change is written to ``__share_group_state``
(``state_topic``), and a share-partition is read back from there when this broker first
needs it (a restart, a new leader); a new one starts where the group's
``share.auto.offset.reset`` says.

Time is the injected ``minikafka.clock.Clock`` (the broker's ``SYSTEM``), in monotonic
milliseconds: lock deadlines, and how long a ShareFetch may still wait. A test that gives a
``ManualClock`` runs ``expire_locks`` by hand after moving it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from ..clock import SYSTEM, Clock
from ..errors import ErrorCode, KafkaError
from ..records import BatchHeader
from ..replica.partition import Partition
from ..replica.peers import LocalReplicas
from .alarm import Alarm, Waiters
from .configs import GroupConfig
from .partition import Acquired, AckBatch, SharePartition
from .sessions import FINAL_EPOCH, INITIAL_EPOCH, SharePartitionId, ShareSession, ShareSessionCache
from .state_topic import StateStore, partition_key

log = logging.getLogger("minikafka.share")
MAX_IDLE_MS = 5_000


@dataclass
class Fetched:
    """One partition of a ShareFetch answer."""

    error: ErrorCode = ErrorCode.none
    records: bytes = b""
    acquired: list[Acquired] = field(default_factory=list)


class SharePartitionManager:
    def __init__(self, replicas: LocalReplicas, store: StateStore, clock: Clock = SYSTEM):
        self.replicas, self.store, self.clock = replicas, store, clock
        self.config, self.metadata = replicas.config, replicas.metadata
        self.partitions: dict[tuple[str, str, int], SharePartition] = {}  # (group, topic id, index)
        self.sessions = ShareSessionCache(self.config["group.share.max.share.sessions"])
        self.available = Waiters()  # fetches waiting for released or expired records
        self.alarm = Alarm()

    def group_config(self, group_id: str) -> GroupConfig:
        return GroupConfig(self.config, self.metadata.group_configs.get(group_id))

    # -- share-partitions -------------------------------------------------------------------------
    def _key(self, group_id: str, topic: str, index: int) -> tuple[str, str, int]:
        info = self.metadata.topics.get(topic)
        if info is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"Topic {topic!r} does not exist.")
        return group_id, info.topic_id, index

    def share_partition(self, group_id: str, topic: str, index: int) -> tuple[SharePartition, Partition]:
        """The group's share-partition of a partition this broker leads, loaded or started on first need."""
        key = self._key(group_id, topic, index)
        try:
            part = self.replicas.leader_replica(topic, index)
        except KafkaError:
            self.partitions.pop(key, None)  # another broker leads it now, and owns its state
            raise
        share = self.partitions.get(key)
        if share is None:
            share = self.partitions[key] = self._load(group_id, topic, part)
        share.move_start_to(part.log_start_offset)
        return share, part

    def _load(self, group_id: str, topic: str, part: Partition) -> SharePartition:
        limit = self.config["group.share.delivery.count.limit"]
        locks = self.group_config(group_id)["share.partition.max.record.locks"]
        snapshot = self.store.read(partition_key(group_id, self.metadata.topics[topic].topic_id, part.index))
        if snapshot is not None:
            try:
                return SharePartition.restore(snapshot, limit, locks, self.clock)
            except (KeyError, ValueError, TypeError) as e:  # a damaged record: start again, and say so
                log.warning("share state of %s-%d for group %r is unreadable (%s); starting afresh",
                            topic, part.index, group_id, e)
        earliest = self.group_config(group_id)["share.auto.offset.reset"] == "earliest"
        share = SharePartition(part.log_start_offset if earliest else part.high_watermark, limit, locks, self.clock)
        self._save(group_id, topic, part.index, share)  # the start offset is fixed from now on
        return share

    def _save(self, group_id: str, topic: str, index: int, share: SharePartition) -> tuple[Partition | None, int]:
        key = partition_key(group_id, self.metadata.topics[topic].topic_id, index)
        return self.store.write(key, {"topic": topic, **share.snapshot()})

    # -- sessions ---------------------------------------------------------------------------------
    async def fetch_session(self, group_id: str, member_id: str, epoch: int, added: set[SharePartitionId],
                            forgotten: set[SharePartitionId], has_acks: bool, connection_id: int) -> ShareSession:
        """The share session a ShareFetch belongs to, opened, advanced or about to close."""
        if epoch == INITIAL_EPOCH:
            if has_acks:
                raise KafkaError(ErrorCode.invalid_request, "A ShareFetch that opens a session (epoch 0) "
                                                            "cannot carry acknowledgements.")
            session, old = self.sessions.open(group_id, member_id, added, connection_id)
            self._note_ids(session, added)
            if old is not None:
                await self._release(old, old.partitions)
            return session
        session = self.sessions.existing(group_id, member_id, epoch)
        if epoch == FINAL_EPOCH:
            if forgotten or added - session.partitions:
                raise KafkaError(ErrorCode.invalid_request, "The last ShareFetch of a session (epoch -1) "
                                                            "cannot add or forget partitions.")
            return session
        dropped = self.sessions.advance(session, added, forgotten)
        self._note_ids(session, added)
        await self._release(session, dropped)
        return session

    def _note_ids(self, session: ShareSession, added: set[SharePartitionId]) -> None:
        """Which topic id the member asked for: a topic deleted and created again under the same
        name is another topic, not fetched until the member names its new id."""
        for topic, _ in added:
            info = self.metadata.topics.get(topic)
            if info is not None:
                session.topic_ids[topic] = info.topic_id

    def _stale(self, session: ShareSession, topic: str) -> bool:
        info = self.metadata.topics.get(topic)
        known = session.topic_ids.get(topic)
        return info is not None and known is not None and known != info.topic_id

    def acknowledge_session(self, group_id: str, member_id: str, epoch: int) -> ShareSession:
        """ShareAcknowledge: an open session; it never opens one."""
        if epoch == INITIAL_EPOCH:
            raise KafkaError(ErrorCode.invalid_share_session_epoch,
                             "ShareAcknowledge cannot open a share session (epoch 0); ShareFetch does.")
        session = self.sessions.existing(group_id, member_id, epoch)
        if epoch != FINAL_EPOCH:
            self.sessions.advance(session, set(), set())
        return session

    async def close(self, session: ShareSession) -> None:
        """Epoch -1: release what the member still holds, forget the session."""
        self.sessions.close(session)
        await self._release(session, session.partitions)

    async def _release(self, session: ShareSession, partitions: set[SharePartitionId]) -> None:
        writes = []
        for topic, index in sorted(partitions):
            try:
                share, _ = self.share_partition(session.group_id, topic, index)
            except KafkaError:
                continue
            if share.release_member(session.member_id):
                writes.append(self._save(session.group_id, topic, index, share))
        await self._settle(writes)

    async def _settle(self, writes: list) -> None:
        for where in writes:
            await self.store.replicated(where)
        if writes:
            self.available.notify()

    # -- acknowledging ------------------------------------------------------------------------------
    async def acknowledge(self, group_id: str, member_id: str,
                          acks: dict[SharePartitionId, list[AckBatch]]) -> dict[SharePartitionId, KafkaError | None]:
        """Apply acknowledgements partition by partition; written to the state topic before the answer.

        A Renew (KIP-1222) restarts a lock for the group's ``share.record.lock.duration.ms``
        if the group's ``share.renew.acknowledge.enable`` allows it."""
        config = self.group_config(group_id)
        renew_ms = config["share.record.lock.duration.ms"] if config["share.renew.acknowledge.enable"] else None
        results: dict[SharePartitionId, KafkaError | None] = {}
        writes = []
        for (topic, index), batches in acks.items():
            try:
                share, _ = self.share_partition(group_id, topic, index)
                share.acknowledge(member_id, batches, renew_ms)
                writes.append(self._save(group_id, topic, index, share))
                results[(topic, index)] = None
            except KafkaError as e:
                results[(topic, index)] = e
        await self._settle(writes)
        return results

    # -- acquiring ----------------------------------------------------------------------------------
    async def fetch(self, session: ShareSession, max_records: int, max_bytes: int, max_wait_ms: int,
                    record_limit: bool = False) -> dict[SharePartitionId, Fetched]:
        """Acquire records for the member from its session's partitions, waiting up to ``max_wait_ms``;
        ``record_limit``: KIP-1206's record-limit mode, never more than ``max_records`` in all."""
        deadline = self.clock.monotonic_ms() + max_wait_ms
        while True:
            out, waits = self._acquire_all(session, max_records, max_bytes, record_limit)
            remaining = deadline - self.clock.monotonic_ms()
            if remaining <= 0 or any(f.acquired or f.error for f in out.values()):
                return out
            waits.append(self.available.waiter())
            _, pending = await asyncio.wait(waits, timeout=remaining / 1000, return_when=asyncio.FIRST_COMPLETED)
            for future in pending:
                future.cancel()

    def _acquire_all(self, session: ShareSession, max_records: int, max_bytes: int, record_limit: bool
                     ) -> tuple[dict[SharePartitionId, Fetched], list[asyncio.Future]]:
        out: dict[SharePartitionId, Fetched] = {}
        waits: list[asyncio.Future] = []
        config = self.group_config(session.group_id)
        lock_ms = config["share.record.lock.duration.ms"]
        committed = config["share.isolation.level"] == "read_committed"
        for topic, index in sorted(session.partitions):
            if self._stale(session, topic):  # fetched by an old topic id: the client forgets it itself
                continue
            budget = max_records - sum(len_of(f.acquired) for f in out.values())
            if budget <= 0:
                break
            try:
                share, part = self.share_partition(session.group_id, topic, index)
                share.max_record_locks = config["share.partition.max.record.locks"]  # the group may change it
                out[(topic, index)] = self._acquire(session, share, part, budget, max_bytes, lock_ms, committed,
                                                    record_limit)
                waits.append(part.waiter())
            except KafkaError as e:
                out[(topic, index)] = Fetched(e.code)
        if any(f.acquired for f in out.values()):
            self.alarm.ring()  # new locks: the timer may need to wake earlier
        return out, waits

    def _acquire(self, session: ShareSession, share: SharePartition, part: Partition, max_records: int,
                 max_bytes: int, lock_ms: int, committed: bool = False, record_limit: bool = False) -> Fetched:
        batches = read_batches(part, share, max_records, max_bytes, committed)
        if committed:  # read_committed: an aborted transaction's records are archived, never delivered
            lead = 0
            while lead < len(batches) and _aborted(part, batches[lead][0]):
                lead += 1
            if share.archive_new([(h.base_offset, h.last_offset) for h, _ in batches[:lead]]):
                self._save(session.group_id, part.topic, part.index, share)
            batches = batches[lead:]
            cut = next((i for i, (h, _) in enumerate(batches) if _aborted(part, h)), len(batches))
            batches = batches[:cut]  # the next fetch archives the next aborted run
        runs = share.acquire(session.member_id, [(h.base_offset, h.last_offset) for h, _ in batches],
                             max_records, lock_ms, record_limit)
        if not runs:
            return Fetched()
        self._save(session.group_id, part.topic, part.index, share)
        wanted = [bytes(b) for h, b in batches if any(r.first_offset <= h.last_offset and r.last_offset >=
                                                      h.base_offset for r in runs)]
        return Fetched(ErrorCode.none, b"".join(wanted), runs)

    # -- acquisition locks --------------------------------------------------------------------------
    def expire_locks(self) -> int:
        """Release every record whose lock ran out; how many."""
        expired, writes = 0, []
        for (group_id, topic_id, index), share in list(self.partitions.items()):
            topic = self.metadata.topic_by_id(topic_id)
            if topic is None or not self._leads(topic.name, index):
                del self.partitions[(group_id, topic_id, index)]
                continue
            count = share.expire_locks()
            if count:
                expired += count
                writes.append(self._save(group_id, topic.name, index, share))
        if writes:
            self.available.notify()
        return expired

    def _leads(self, topic: str, index: int) -> bool:
        part = self.replicas.local_replica(topic, index)
        return part is not None and part.is_leader

    def next_lock_deadline(self) -> int | None:
        deadlines = [d for d in (s.next_lock_deadline() for s in self.partitions.values()) if d is not None]
        return min(deadlines, default=None)

    async def run(self) -> None:
        """The timer task: wake when the next lock expires (or a fetch made a new one)."""
        while True:
            try:
                self.expire_locks()
            except Exception:  # a bug in one share-partition must not stop every lock timer
                log.exception("share-partition lock timer failed")
            deadline = self.next_lock_deadline()
            wait_ms = MAX_IDLE_MS if deadline is None else min(MAX_IDLE_MS, deadline - self.clock.monotonic_ms())
            await self.alarm.sleep((wait_ms + 1) / 1000)

    # -- what a teacher may look at -----------------------------------------------------------------
    def describe(self, group_id: str, topic: str, index: int) -> dict | None:
        """A share-partition's offsets and in-flight records, as plain data; None if the group
        never read the partition (looking does not start it)."""
        key = self._key(group_id, topic, index)
        if key not in self.partitions and self.store.read(partition_key(*key)) is None:
            return None
        share, _ = self.share_partition(group_id, topic, index)
        return {"start_offset": share.start_offset, "end_offset": share.end_offset,
                "records": {o: {"state": str(r.state), "delivery_count": r.delivery_count, "member_id": r.member_id}
                            for o, r in sorted(share.records.items())}}


def len_of(runs: list[Acquired]) -> int:
    return sum(r.last_offset - r.first_offset + 1 for r in runs)


def _aborted(part: Partition, header: BatchHeader) -> bool:
    """Whether a batch belongs to an aborted transaction."""
    return header.is_transactional and any(
        pid == header.producer_id and first <= header.base_offset <= marker for pid, first, marker in part.aborted)


def read_batches(part: Partition, share: SharePartition, max_records: int, max_bytes: int,
                 committed: bool = False) -> list[tuple]:
    """The data batches a fetch may acquire from: from the first available record up to the
    high watermark (the last stable offset for ``read_committed``), no further than
    ``max_records`` new records or the in-flight window allows (so a long backlog is not
    read whole on every fetch)."""
    out: list[tuple] = []
    size = fresh = 0
    limit = part.last_stable_offset if committed else part.high_watermark
    offset = share.next_fetch_offset()
    if offset >= limit:
        return out
    for header, batch in part.log.batches(max(offset, part.log_start_offset)):
        if header.last_offset >= limit or (out and size + header.size > max_bytes):
            break
        if fresh >= max_records or header.base_offset - share.start_offset >= share.max_record_locks:
            break
        if not header.is_control:
            out.append((header, batch))
            size += header.size
            fresh += max(0, header.last_offset + 1 - max(header.base_offset, share.end_offset))
    return out
