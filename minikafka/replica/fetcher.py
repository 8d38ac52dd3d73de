"""Followers copy the leader's log; the leader keeps the ISR honest.

Each broker runs one ``ReplicaFetcher``. For every leader it follows partitions from, it
runs one loop (Kafka's fetcher thread) that asks that leader, in one request, for the
batches after each partition's log end offset. Where the request goes is a
``FetchSource`` (``replica.sources``): a method call on the leader broker when the brokers
share a process (the embedded cluster's default), or a Fetch request over TCP. Both
reach the same leader-side rules, ``serve_follower``: the fetch offset tells the leader
how far the follower has got; from that the leader advances the high watermark (the
smallest log end offset in the ISR), adds a follower that caught up back to the ISR, and
drops one that has not caught up for ``replica.lag.time.max.ms`` (the rule is in
``minikafka.replica.isr``).

Each fetch carries the epoch of the follower's last batch (LastFetchedEpoch, KIP-320):
when the leader's epoch cache shows the follower's log diverged from its own, it answers
with the largest epoch they share and where it ended (DivergingEpoch, KIP-101, KIP-279)
instead of records, and the follower cuts its log there. A follower out of the ISR whose
topic lists it for throttling fetches within the leader's and its own replication byte
rates (``minikafka.replica.throttle``, KIP-73).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from ..clock import now_ms
from ..config import BrokerConfig
from ..errors import ErrorCode, KafkaError
from ..log.errors import UnexpectedAppendOffset
from ..records import BatchHeader
from .partition import FollowerState, Partition
from .throttle import ByteRate, listed

log = logging.getLogger("minikafka.replication")

LEADER_POLL_S = 0.05  # how soon a fetcher notices a partition that now follows another leader
STOP_WAIT_S = 2.0  # how long a stopping broker waits for its fetch loops to end


# -- the leader's side -------------------------------------------------------------------------
def fetch_for_follower(leader: Partition, follower_id: int, offset: int, max_bytes: int) -> tuple[bytes, int, int]:
    """Leader side of a follower's fetch: record its progress, return (data, hw, log start)."""
    if not leader.is_leader:
        raise KafkaError(ErrorCode.not_leader_or_follower)
    if offset > leader.log_end_offset:
        raise KafkaError(ErrorCode.offset_out_of_range, "The follower is ahead of the leader; it must truncate.")
    state = leader.followers.setdefault(follower_id, FollowerState(offset))
    state.log_end_offset, state.last_fetch_ms = offset, now_ms()
    if offset >= leader.log_end_offset:
        state.last_caught_up_ms = state.last_fetch_ms
    leader.update_high_watermark()
    if offset < leader.log_start_offset:
        return b"", leader.high_watermark, leader.log_start_offset
    return leader.log.read(offset, max_bytes), leader.high_watermark, leader.log_start_offset


def check_leader_epoch(part: Partition, current_leader_epoch: int) -> None:
    """CurrentLeaderEpoch (KIP-320): a request from an older epoch is fenced, one from a newer
    epoch than this replica knows is early; -1 asks for no check."""
    if current_leader_epoch < 0 or current_leader_epoch == part.leader_epoch:
        return
    if current_leader_epoch < part.leader_epoch:
        raise KafkaError(ErrorCode.fenced_leader_epoch,
                         f"Leader epoch {current_leader_epoch} of {part.topic}-{part.index} is older than this "
                         f"broker's, {part.leader_epoch}.")
    raise KafkaError(ErrorCode.unknown_leader_epoch,
                     f"Leader epoch {current_leader_epoch} of {part.topic}-{part.index} is newer than this "
                     f"broker's, {part.leader_epoch}.")


def epoch_end(leader: Partition, epoch: int) -> tuple[int, int]:
    """OffsetForLeaderEpoch's answer: the largest epoch <= ``epoch`` the leader knows, and where it ended."""
    return leader.epochs.end_offset_for(epoch, leader.log_end_offset)


@dataclass(frozen=True)
class FollowerRead:
    """The leader's answer to one partition of a follower's fetch."""

    records: bytes
    high_watermark: int
    log_start_offset: int
    diverging: tuple[int, int] | None = None  # (epoch, end offset): the follower must cut its log first


def serve_follower(leader: Partition, follower_id: int, current_leader_epoch: int, fetch_offset: int,
                   last_fetched_epoch: int, max_bytes: int) -> FollowerRead:
    """Leader side of one partition of a follower's fetch, whichever way it arrived.

    Raises ``KafkaError``: FENCED_LEADER_EPOCH/UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER
    (not the leader, or the fetching broker holds no replica), OFFSET_OUT_OF_RANGE (the follower
    lacks what retention removed here: it restarts its log at the log start offset).
    """
    check_leader_epoch(leader, current_leader_epoch)
    if not leader.is_leader:
        raise KafkaError(ErrorCode.not_leader_or_follower,
                         f"Broker {leader.node_id} does not lead {leader.topic}-{leader.index}.")
    if follower_id not in leader.info.replicas:
        raise KafkaError(ErrorCode.not_leader_or_follower,
                         f"Broker {follower_id} is not a replica of {leader.topic}-{leader.index}.")
    if last_fetched_epoch >= 0:
        epoch, end = epoch_end(leader, last_fetched_epoch)
        if epoch < 0 and fetch_offset < leader.log_start_offset:
            raise KafkaError(ErrorCode.offset_out_of_range, f"Offset {fetch_offset} is below the log start offset "
                                                            f"{leader.log_start_offset}.")
        if epoch != last_fetched_epoch or end < fetch_offset:
            # the follower holds at most ``end`` of this log: whatever the leader knew of it before
            # (say, before it was killed and restarted) must not put it back in the ISR
            state = leader.followers.get(follower_id)
            if state is not None:
                state.log_end_offset, state.last_fetch_ms = min(state.log_end_offset, end, fetch_offset), now_ms()
            return FollowerRead(b"", leader.high_watermark, leader.log_start_offset, (epoch, end))
    if fetch_offset < leader.log_start_offset:
        raise KafkaError(ErrorCode.offset_out_of_range, f"Offset {fetch_offset} is below the log start offset "
                                                        f"{leader.log_start_offset}.")
    data, hw, start = fetch_for_follower(leader, follower_id, fetch_offset, max_bytes)
    return FollowerRead(data, hw, start)


def leader_throttled(leader: Partition, follower_id: int) -> bool:
    """Whether the leader's replication throttle (KIP-73) applies to this follower's fetch."""
    return follower_id not in leader.info.isr and listed(leader.config["leader.replication.throttled.replicas"],
                                                          leader.index, leader.node_id)


# -- the follower's side -----------------------------------------------------------------------
def truncation_point(follower: Partition, leader_epoch: int, leader_end: int) -> tuple[int, bool]:
    """Where the follower cuts its log for the leader's (epoch, end offset) about its latest epoch,
    and whether that settles it (else the next fetch asks about the epoch now last).

    When the leader never had the follower's latest epoch (KIP-279), the follower's own copy of
    the leader's epoch may end earlier than the leader's: what follows it was written in an
    epoch the leader never saw, so the cut is at the smaller of the two, and a follower that
    lacks the leader's epoch too goes one epoch further back.
    """
    end = follower.log_end_offset
    if leader_epoch < 0:
        return min(end, leader_end), True
    mine, mine_end = follower.epochs.end_offset_for(leader_epoch, follower.log_end_offset)
    return min(end, leader_end, mine_end), mine == leader_epoch


def divergence_point(follower: Partition, leader: Partition) -> int:
    """Where the follower's log must be cut so that it is a prefix of the leader's: the
    exchange of ``epoch_end`` and ``truncation_point`` carried out at once, in one process."""
    end, epoch = follower.log_end_offset, follower.epochs.latest
    while epoch >= 0:
        leader_epoch, leader_end = epoch_end(leader, epoch)
        if leader_epoch < 0:
            return min(end, leader_end, leader.log_end_offset)
        cut, settled = truncation_point(follower, leader_epoch, leader_end)
        end = min(end, cut)
        if settled:
            return end
        epoch, _ = follower.epochs.end_offset_for(leader_epoch, follower.log_end_offset)
    return min(end, leader.log_end_offset)


@dataclass(frozen=True)
class PartitionFetch:
    """One partition of a follower's fetch (Fetch's FetchPartition)."""

    topic: str
    index: int
    current_leader_epoch: int
    fetch_offset: int
    last_fetched_epoch: int
    max_bytes: int


@dataclass(frozen=True)
class PartitionAnswer:
    """The leader's answer for one partition: an error, or a ``FollowerRead``'s fields."""

    error: ErrorCode
    records: bytes = b""
    high_watermark: int = -1
    log_start_offset: int = -1
    diverging: tuple[int, int] | None = None

    @classmethod
    def of(cls, read: FollowerRead) -> PartitionAnswer:
        return cls(ErrorCode.none, read.records, read.high_watermark, read.log_start_offset, read.diverging)


class FetchSource(Protocol):
    """Where a follower's fetches go: one call per leader, for all the partitions it follows there."""

    async def fetch(self, follower_id: int, leader_id: int, wanted: list[PartitionFetch]) -> list[PartitionAnswer]:
        """The leader's answers, in ``wanted``'s order, after waiting up to ``replica.fetch.wait.max.ms``
        for data. Raises ``OSError`` (``TimeoutError`` included) when the leader cannot be reached, or
        ``EOFError`` when it closed the connection before answering."""
        ...

    def close(self) -> None: ...


class ReplicaFetcher:
    """One broker's fetchers: a loop per leader that keeps this broker's follower replicas up to date."""

    def __init__(self, node_id: int, replicas: Mapping[tuple[str, int], Partition], source: FetchSource,
                 config: BrokerConfig, follower_quota: ByteRate | None = None):
        self.node_id, self.replicas, self.source, self.config = node_id, replicas, source, config
        self.delay_ms = 0  # slow_broker(): a lagging follower, to watch the ISR shrink
        self.follower_quota = follower_quota  # follower.replication.throttled.rate (KIP-73)
        self._loops: dict[int, asyncio.Task] = {}
        self._stopping = False

    def followed(self, leader_id: int) -> list[Partition]:
        return [p for p in list(self.replicas.values()) if not p.is_leader and p.info.leader == leader_id]

    async def run(self) -> None:
        """Start a loop for each leader this broker follows a partition from (Kafka's fetcher threads)."""
        try:
            while True:
                leaders = {p.info.leader for p in list(self.replicas.values()) if not p.is_leader}
                for leader_id in leaders - {-1, self.node_id}:
                    task = self._loops.get(leader_id)
                    if task is None or task.done():
                        self._loops[leader_id] = asyncio.get_running_loop().create_task(self._follow(leader_id))
                await asyncio.sleep(LEADER_POLL_S)
        finally:
            self._stopping = True  # Python 3.11's wait_for (PeerChannel) can swallow a cancellation
            for task in self._loops.values():
                task.cancel()
            if self._loops:  # bounded: a stop must not hang on a fetch that ignored its cancellation
                await asyncio.wait(list(self._loops.values()), timeout=STOP_WAIT_S)
            self._loops.clear()
            self.source.close()

    async def _follow(self, leader_id: int) -> None:
        """Fetch from one leader until this broker follows nothing there."""
        while not self._stopping:
            await asyncio.sleep(self.delay_ms / 1000)  # slow_broker(); and an in-process fetch lets others run
            mine = self.followed(leader_id)
            if not mine:
                return
            now = now_ms()
            asks = [(part, ask) for part in mine if (ask := self._ask(part, now)) is not None]
            if not asks:  # every partition throttled until the next window
                await asyncio.sleep(self.config["replica.fetch.wait.max.ms"] / 1000)
                continue
            try:
                answers = await self.source.fetch(self.node_id, leader_id, [ask for _, ask in asks])
            except (OSError, EOFError) as e:  # timeout, refused, closed mid-answer: back off, reconnect, ask again
                log.warning("broker %d cannot fetch from broker %d: %s", self.node_id, leader_id, e)
                await asyncio.sleep(self.config["replica.fetch.backoff.ms"] / 1000)
                continue
            failed = False
            for (part, ask), answer in zip(asks, answers):
                if part.is_leader or part.info.leader != leader_id or part.leader_epoch != ask.current_leader_epoch:
                    continue  # the partition changed hands while the fetch was out: its answer is stale (Kafka
                    # drops it too); applied to a replica that now leads, it would cut the leader's own log
                try:
                    failed |= not self.apply(part, answer)
                except Exception:  # one partition's failure must not stop every other's replication
                    log.exception("fetch of %s-%d from broker %d failed", part.topic, part.index, leader_id)
                    failed = True
            if failed:  # a partition error (e.g. the leader moved): the metadata catches up meanwhile
                await asyncio.sleep(min(self.config["replica.fetch.backoff.ms"], 100) / 1000)

    def _ask(self, part: Partition, now: int) -> PartitionFetch | None:
        part.needs_truncation = False  # LastFetchedEpoch makes every fetch check for divergence
        max_bytes = self.config["replica.fetch.max.bytes"]
        quota = self._follower_throttle(part)
        if quota is not None:
            max_bytes = min(max_bytes, quota.allowance(now))
            if max_bytes <= 0:
                return None
        return PartitionFetch(part.topic, part.index, part.leader_epoch, part.log_end_offset, part.epochs.latest,
                              max_bytes)

    def _follower_throttle(self, part: Partition) -> ByteRate | None:
        """This broker's follower throttle, when it applies to the partition: never in the ISR."""
        if self.node_id in part.info.isr or self.follower_quota is None:
            return None
        return self.follower_quota if listed(part.config["follower.replication.throttled.replicas"],
                                             part.index, self.node_id) else None

    def apply(self, mine: Partition, answer: PartitionAnswer) -> bool:
        """Take the leader's answer for one partition; False when it was an error."""
        if answer.error == ErrorCode.offset_out_of_range:
            if answer.log_start_offset > mine.log_end_offset:  # retention removed what this follower lacks
                mine.restart_at(answer.log_start_offset)
                return True
            mine.truncate_to(max(answer.high_watermark, 0))  # ahead of the leader: keep what is committed
            return False
        if answer.error != ErrorCode.none:
            log.debug("fetch of %s-%d: %s", mine.topic, mine.index, answer.error.name)
            return False
        if answer.diverging is not None:
            cut, _ = truncation_point(mine, *answer.diverging)
            before = (mine.log_end_offset, mine.epochs.latest)
            log.info("broker %d cuts %s-%d at %d (diverged from the leader's epoch %d)", self.node_id,
                     mine.topic, mine.index, cut, answer.diverging[0])
            mine.truncate_to(cut)
            return (mine.log_end_offset, mine.epochs.latest) != before  # no change: back off, do not spin
        if answer.records:
            quota = self._follower_throttle(mine)
            if quota is not None:
                quota.record(len(answer.records), now_ms())
            self._append(mine, answer.records, answer.high_watermark, answer.log_start_offset)
        mine.set_high_watermark(answer.high_watermark)
        return True

    @staticmethod
    def _append(mine: Partition, data: bytes, hw: int, leader_log_start: int) -> None:
        """Append fetched batches; an empty log may start where the first batch begins.

        After ``restart_at`` the follower's log is empty at the leader's log start, which
        can fall inside a batch: the leader then sends the whole batch, starting below it.
        As Kafka's follower does, the empty log starts again at the batch's base offset
        and keeps the leader's log start offset.
        """
        try:
            mine.append_replicated(data)
        except UnexpectedAppendOffset:
            if mine.log_end_offset != mine.log_start_offset:
                raise
            mine.restart_at(BatchHeader.parse(data).base_offset)
            mine.append_replicated(data)
            mine.set_high_watermark(hw)
            mine.log.delete_records_before(min(leader_log_start, mine.high_watermark))
