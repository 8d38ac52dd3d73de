"""What a Raft leader knows about its replicas (KIP-595's LeaderState).

Followers fetch; each Fetch tells the leader how far that replica's log goes (its fetch
offset). The high watermark is the largest offset a majority of voters has reached, the
leader included. It only moves once it covers the leader's first record of its own epoch
(the leader-change record): a record of an older epoch is never counted as committed on its
own, which is Raft's rule for why a new leader's log may still be cut back. Replicas that
fetch but are not voters are observers (brokers following the metadata log): they are
reported, never counted.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ReplicaProgress:
    """One replica as DescribeQuorum reports it (timestamps in wall-clock milliseconds)."""

    replica_id: int
    log_end_offset: int = -1
    last_fetch_ms: int = -1
    last_caught_up_ms: int = -1


class LeaderState:
    def __init__(self, node_id: int, epoch: int, voters: set[int], epoch_start_offset: int, now: int):
        self.node_id, self.epoch, self.epoch_start_offset = node_id, epoch, epoch_start_offset
        self.voters = {v: ReplicaProgress(v) for v in sorted(voters)}
        self.observers: dict[int, ReplicaProgress] = {}
        self.began_at = now
        self.high_watermark = -1
        self.acknowledged: set[int] = {node_id}  # voters that know this epoch (answered BeginQuorumEpoch or fetched)
        self.begin_sent_at: dict[int, int] = {}

    @property
    def majority(self) -> int:
        return len(self.voters) // 2 + 1

    def update_local(self, log_end_offset: int, now: int) -> None:
        me = self.voters[self.node_id]
        me.log_end_offset, me.last_fetch_ms, me.last_caught_up_ms = log_end_offset, now, now

    def update_replica(self, replica_id: int, fetch_offset: int, leader_end_offset: int, now: int) -> None:
        """A Fetch from ``replica_id``: its log reaches ``fetch_offset``."""
        progress = self.voters.get(replica_id) or self.observers.setdefault(replica_id, ReplicaProgress(replica_id))
        progress.log_end_offset, progress.last_fetch_ms = fetch_offset, now
        if fetch_offset >= leader_end_offset:
            progress.last_caught_up_ms = now
        if replica_id in self.voters:
            self.acknowledged.add(replica_id)

    def advance_high_watermark(self) -> bool:
        """Recompute the high watermark from the voters' offsets; True if it moved."""
        offsets = sorted((p.log_end_offset for p in self.voters.values()), reverse=True)
        candidate = offsets[self.majority - 1]
        if candidate > self.epoch_start_offset and candidate > self.high_watermark:
            self.high_watermark = candidate
            return True
        return False

    def has_quorum(self, now: int, within_ms: int) -> bool:
        """Did a majority of voters (this one included) fetch in the last ``within_ms``?"""
        since = max(now - within_ms, self.began_at)
        heard = sum(1 for v, p in self.voters.items() if v == self.node_id or p.last_fetch_ms >= since)
        return heard >= self.majority or now - self.began_at < within_ms

    def successors(self) -> tuple[int, ...]:
        """The other voters, the furthest caught up first: who should stand when this leader resigns."""
        others = [p for v, p in self.voters.items() if v != self.node_id]
        return tuple(p.replica_id for p in sorted(others, key=lambda p: -p.log_end_offset))
