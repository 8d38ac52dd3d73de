"""The Raft requests and answers of KIP-595, as plain objects the core reads and writes.

``wire`` turns them into Kafka's VoteRequest, BeginQuorumEpochRequest, EndQuorumEpochRequest
and FetchRequest (with its quorum fields) and back. Keeping the core on these small objects
is what lets it run in a test with no sockets and no kio.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ErrorCode

NO_LEADER = -1


@dataclass(frozen=True)
class VoteRequest:
    """A candidate asks for a vote in ``candidate_epoch``, showing how far its log goes."""

    candidate_id: int
    candidate_epoch: int
    last_offset_epoch: int
    last_offset: int  # the candidate's log end offset


@dataclass(frozen=True)
class VoteResponse:
    error: ErrorCode
    leader_id: int
    leader_epoch: int
    vote_granted: bool


@dataclass(frozen=True)
class BeginQuorumEpochRequest:
    """A new leader tells a voter it won ``leader_epoch``."""

    leader_id: int
    leader_epoch: int


@dataclass(frozen=True)
class EndQuorumEpochRequest:
    """A leader that is shutting down hands over: the preferred successors stand first."""

    leader_id: int
    leader_epoch: int
    preferred_successors: tuple[int, ...] = ()


@dataclass(frozen=True)
class EpochAnswer:
    """The answer to BeginQuorumEpoch and EndQuorumEpoch: an error and who leads which epoch."""

    error: ErrorCode
    leader_id: int
    leader_epoch: int


@dataclass(frozen=True)
class FetchRequest:
    """A follower (or observer) asks the leader for the log from ``fetch_offset``."""

    replica_id: int
    current_leader_epoch: int
    fetch_offset: int
    last_fetched_epoch: int


@dataclass(frozen=True)
class FetchResponse:
    """Records from the fetch offset, the high watermark, or where the follower's log diverged."""

    error: ErrorCode
    leader_id: int
    leader_epoch: int
    high_watermark: int = -1
    diverging_epoch: int = -1  # with diverging_end_offset: truncate to there, then fetch again
    diverging_end_offset: int = -1
    records: bytes = b""
    snapshot_end_offset: int = -1  # the fetch offset is below the log start: read this snapshot first
    snapshot_epoch: int = -1

    @property
    def diverged(self) -> bool:
        return self.diverging_end_offset >= 0


@dataclass(frozen=True)
class FetchSnapshotRequest:
    """A follower behind the leader's log start reads the snapshot the leader named (KIP-630)."""

    replica_id: int
    current_leader_epoch: int
    end_offset: int
    epoch: int


@dataclass(frozen=True)
class FetchSnapshotResponse:
    error: ErrorCode
    leader_id: int
    leader_epoch: int
    end_offset: int = -1
    epoch: int = -1
    data: bytes = b""


class NotLeader(Exception):
    """Only the leader appends; ``leader_id`` is who does (-1: unknown)."""

    def __init__(self, leader_id: int):
        super().__init__(f"this controller is not the quorum leader (leader: {leader_id})")
        self.leader_id = leader_id


Request = VoteRequest | BeginQuorumEpochRequest | EndQuorumEpochRequest | FetchRequest | FetchSnapshotRequest
Response = VoteResponse | EpochAnswer | FetchResponse | FetchSnapshotResponse
