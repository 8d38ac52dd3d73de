"""Followers copy the leader's log; the leader keeps the ISR honest.

Each broker runs one ``ReplicaFetcher``. For every partition it follows, it asks the
leader for the batches after its own log end offset, exactly as Kafka's replica
fetcher does with Fetch requests (the brokers share a process, so the "request" is a
method call on the leader broker: ``Leader.fetch_for_follower``). The fetch offset
tells the leader how far the follower has got; from that the leader advances the high
watermark (the smallest log end offset in the ISR), adds a follower that caught up
back to the ISR, and drops one that has not caught up for ``replica.lag.time.max.ms``
(the rule is in ``minikafka.replica.isr``).

Before its first fetch from a new leader a follower cuts its log where it diverges
from the leader's, found through the leader epoch cache (KIP-101, KIP-279). A follower
out of the ISR whose topic lists it for throttling fetches within the leader's and its
own replication byte rates (``minikafka.replica.throttle``, KIP-73).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from ..clock import now_ms
from ..errors import ErrorCode, KafkaError
from ..log.errors import UnexpectedAppendOffset
from ..records import BatchHeader
from .partition import FollowerState, Partition
from .peers import Peers
from .throttle import ByteRate, listed

log = logging.getLogger("minikafka.replication")

REPLICA_FETCH_MAX_BYTES = 1 << 20
REPLICA_FETCH_WAIT_S = 0.5  # replica.fetch.wait.max.ms


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


def divergence_point(follower: Partition, leader: Partition) -> int:
    """Where the follower's log must be cut so that it is a prefix of the leader's.

    The leader answers with the largest epoch it knows up to the follower's latest and where
    that epoch ended. When the leader never had the follower's latest epoch (KIP-279), the
    follower's own copy of the leader's epoch may end earlier than the leader's: what follows
    it was written in an epoch the leader never saw, so the cut is at the smaller of the two,
    and a follower that lacks the leader's epoch too goes one epoch further back.
    """
    end, epoch = follower.log_end_offset, follower.epochs.latest
    while epoch >= 0:
        leader_epoch, leader_end = leader.epochs.end_offset_for(epoch, leader.log_end_offset)
        if leader_epoch < 0:
            return min(end, leader_end, leader.log_end_offset)
        mine, mine_end = follower.epochs.end_offset_for(leader_epoch, follower.log_end_offset)
        end = min(end, leader_end, mine_end)
        if mine == leader_epoch:
            return end
        epoch = mine
    return min(end, leader.log_end_offset)


class ReplicaFetcher:
    """One broker's loop that keeps all its follower replicas up to date."""

    def __init__(self, node_id: int, replicas: Mapping[tuple[str, int], Partition], peers: Peers,
                 follower_quota: ByteRate | None = None):
        self.node_id, self.replicas, self.peers = node_id, replicas, peers
        self.delay_ms = 0  # slow_broker(): a lagging follower, to watch the ISR shrink
        self.follower_quota = follower_quota  # follower.replication.throttled.rate (KIP-73)

    def followed(self) -> list[tuple[Partition, Partition]]:
        """(my replica, the leader's replica) for every partition I follow whose leader is up."""
        out = []
        for part in list(self.replicas.values()):
            if part.is_leader:
                continue
            leader = self.peers.leader_replica(part.topic, part.info)
            if leader is not None:
                out.append((part, leader))
        return out

    async def run(self) -> None:
        while True:
            if self.delay_ms:
                await asyncio.sleep(self.delay_ms / 1000)
            pairs = self.followed()
            progressed = False
            for mine, leader in pairs:
                try:
                    progressed |= self.fetch_once(mine, leader)
                except Exception:  # one partition's failure must not stop every other's replication
                    log.exception("fetch of %s-%d from broker %d failed", mine.topic, mine.index, leader.node_id)
            if not progressed:
                waiters = [leader.waiter() for _, leader in pairs]
                await self._wait(waiters)

    def fetch_once(self, mine: Partition, leader: Partition) -> bool:
        if mine.needs_truncation:
            mine.truncate_to(divergence_point(mine, leader))
            mine.needs_truncation = False
        if mine.log_end_offset < leader.log_start_offset:
            # Retention removed what this follower lacks: restart its log at the leader's start.
            mine.restart_at(leader.log_start_offset)
        quotas, now = self._throttles(mine, leader), now_ms()
        max_bytes = min([REPLICA_FETCH_MAX_BYTES, *(q.allowance(now) for q in quotas)])
        if max_bytes <= 0:
            return False  # throttled until the next window
        try:
            data, hw, _ = fetch_for_follower(leader, self.node_id, mine.log_end_offset, max_bytes)
        except KafkaError as e:
            if e.code == ErrorCode.offset_out_of_range:
                mine.needs_truncation = True
            return False
        for quota in quotas:
            quota.record(len(data), now)
        if data:
            self._append(mine, data, hw, leader.log_start_offset)
        mine.set_high_watermark(hw)
        return bool(data)

    def _throttles(self, mine: Partition, leader: Partition) -> list[ByteRate]:
        """The byte rates this fetch must keep to: none for an in-sync replica."""
        if self.node_id in mine.info.isr:
            return []
        out = []
        if self.follower_quota and listed(mine.config["follower.replication.throttled.replicas"],
                                          mine.index, self.node_id):
            out.append(self.follower_quota)
        host = self.peers.get(leader.node_id)
        if host is not None and listed(leader.config["leader.replication.throttled.replicas"],
                                       leader.index, leader.node_id):
            out.append(host.leader_quota)
        return out

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

    @staticmethod
    async def _wait(waiters: list[asyncio.Future]) -> None:
        if not waiters:
            await asyncio.sleep(REPLICA_FETCH_WAIT_S)
            return
        _, pending = await asyncio.wait(waiters, timeout=REPLICA_FETCH_WAIT_S, return_when=asyncio.FIRST_COMPLETED)
        for fut in pending:
            fut.cancel()

