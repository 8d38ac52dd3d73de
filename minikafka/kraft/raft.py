"""The Raft core of a KRaft controller (KIP-595), sans I/O.

A ``RaftNode`` is driven from outside: ``tick(now)`` for its timers, ``handle_request`` for a
request from another controller (it returns the answer), ``handle_response`` for the answer
to one it sent, ``request_failed`` when that request got none. What it wants sent is left in
``outbox`` as (destination node id, request). Nothing here opens a socket or reads a clock,
so a test can run a whole quorum in one thread, in any message order.

The states are Kafka's (``QuorumState``): *unattached* (an epoch, no leader, no vote),
*voted* (a vote granted in this epoch), *candidate*, *leader*, *follower* and *resigned* (a
leader that is shutting down, or restarted after leading). An epoch has at most one leader:
a voter grants one vote per epoch, kept in ``quorum-state`` before it answers, and only to
a candidate whose log is at least as long as its own (last epoch, then end offset).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ..errors import ErrorCode
from ..records import Record
from .config import QuorumConfig
from .leader import LeaderState
from .messages import (
    NO_LEADER,
    BeginQuorumEpochRequest,
    EndQuorumEpochRequest,
    EpochAnswer,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    NotLeader,
    Request,
    Response,
    VoteRequest,
    VoteResponse,
)
from .metadata_log import MetadataLog
from .quorum_state import ElectionState, QuorumStateStore
from .records import leader_change_record

UNATTACHED, VOTED, CANDIDATE, LEADER, FOLLOWER, RESIGNED = (
    "Unattached",
    "Voted",
    "Candidate",
    "Leader",
    "Follower",
    "Resigned",
)
NEVER = 2**62


class RaftNode:
    def __init__(
        self,
        node_id: int,
        voters: set[int],
        log: MetadataLog,
        store: QuorumStateStore,
        config: QuorumConfig,
        now: int,
        rng: random.Random | None = None,
    ):
        self.node_id, self.voters, self.log, self.store, self.config = node_id, set(voters), log, store, config
        self.rng = rng or random.Random()
        self.outbox: list[tuple[int, Request]] = []
        self.leader_state: LeaderState | None = None
        self.high_watermark = 0
        self.granted: set[int] = set()
        self.rejected: set[int] = set()
        self.election_deadline = self.fetch_deadline = self.backoff_until = NEVER
        self.fetch_in_flight, self.next_fetch_at, self.elections_lost = False, 0, 0
        self.on_commit: Callable[[int], None] = lambda high_watermark: None
        self.read_snapshot: Callable[[int, int], bytes | None] = lambda end_offset, epoch: None
        self.on_snapshot: Callable[[int, int, bytes], None] = lambda end_offset, epoch, data: None
        saved = store.read()
        self.epoch, self.leader_id, self.voted_id = saved.epoch, saved.leader_id, saved.voted_id
        if saved.leader_id == node_id:  # led before a restart: it cannot lead that epoch again
            self._become(RESIGNED, saved.epoch, node_id, saved.voted_id, now)
        elif saved.leader_id != NO_LEADER:
            self._become(FOLLOWER, saved.epoch, saved.leader_id, saved.voted_id, now)
        else:
            self._become(
                VOTED if saved.voted_id != NO_LEADER else UNATTACHED, saved.epoch, NO_LEADER, saved.voted_id, now
            )

    # -- states

    @property
    def is_voter(self) -> bool:
        return self.node_id in self.voters

    @property
    def majority(self) -> int:
        return len(self.voters) // 2 + 1

    def _become(self, state: str, epoch: int, leader_id: int, voted_id: int, now: int) -> None:
        """Enter ``state``; the election state is on disk before anything else happens."""
        self.store.write(ElectionState(epoch, leader_id, voted_id))
        self.state, self.epoch, self.leader_id, self.voted_id = state, epoch, leader_id, voted_id
        self.leader_state = None
        self.election_deadline = self.fetch_deadline = self.backoff_until = NEVER
        if state in (UNATTACHED, VOTED, RESIGNED, CANDIDATE):
            self._reset_election_timer(now)
        if state == FOLLOWER:
            self.fetch_deadline, self.next_fetch_at, self.fetch_in_flight = (
                now + self.config.fetch_timeout_ms,
                now,
                False,
            )

    def _reset_election_timer(self, now: int) -> None:
        timeout = self.config.election_timeout_ms
        self.election_deadline = now + timeout + self.rng.randint(0, timeout)

    def _observe(self, epoch: int, leader_id: int, now: int) -> bool:
        """Another node speaks of ``epoch`` (led by ``leader_id``, or nobody known). A newer epoch,
        or a leader for this one, moves this node to follow it. True if the node changed state."""
        if epoch > self.epoch:
            if leader_id not in (NO_LEADER, self.node_id):
                self._become(FOLLOWER, epoch, leader_id, NO_LEADER, now)
            else:
                self._become(UNATTACHED, epoch, NO_LEADER, NO_LEADER, now)
            return True
        if (
            epoch == self.epoch
            and leader_id not in (NO_LEADER, self.node_id)
            and self.state in (UNATTACHED, VOTED, CANDIDATE)
        ):
            self._become(FOLLOWER, epoch, leader_id, self.voted_id, now)
            return True
        return False

    # -- timers

    def tick(self, now: int) -> None:
        if self.state == LEADER:
            self._tick_leader(now)
        elif self.state == FOLLOWER:
            if now >= self.fetch_deadline and self.is_voter:
                self._start_election(now)
            elif not self.fetch_in_flight and now >= self.next_fetch_at:
                self._send_fetch()
        elif self.state == CANDIDATE:
            if now >= self.backoff_until:
                self._start_election(now)
            elif now >= self.election_deadline and self.backoff_until == NEVER:
                self._back_off(now)
        elif now >= self.election_deadline and self.is_voter:
            self._start_election(now)

    def _tick_leader(self, now: int) -> None:
        leader = self.leader_state
        assert leader is not None
        leader.update_local(self.log.end_offset, now)
        if not leader.has_quorum(now, self.config.check_quorum_ms):
            self._become(UNATTACHED, self.epoch, NO_LEADER, self.voted_id, now)  # check quorum: step down
            return
        for voter in self.voters - leader.acknowledged:
            if now - leader.begin_sent_at.get(voter, -NEVER) >= self.config.request_timeout_ms:
                leader.begin_sent_at[voter] = now
                self.outbox.append((voter, BeginQuorumEpochRequest(self.node_id, self.epoch)))

    def _back_off(self, now: int) -> None:
        """A lost or timed-out election: wait a random, growing while, at most the backoff max."""
        self.elections_lost += 1
        ceiling = min(self.config.election_backoff_max_ms, 50 * 2 ** min(self.elections_lost, 10))
        self.backoff_until = now + self.rng.randint(0, ceiling)

    def _start_election(self, now: int) -> None:
        """Stand in the next epoch: vote for itself, ask every other voter."""
        self._become(CANDIDATE, self.epoch + 1, NO_LEADER, self.node_id, now)
        self.granted, self.rejected = {self.node_id}, set()
        if len(self.granted) >= self.majority:
            self._become_leader(now)
            return
        request = VoteRequest(self.node_id, self.epoch, self.log.last_epoch, self.log.end_offset)
        self.outbox.extend((voter, request) for voter in sorted(self.voters - {self.node_id}))

    def _become_leader(self, now: int) -> None:
        """Won: write the leader-change record in the new epoch, tell every voter."""
        self._become(LEADER, self.epoch, self.node_id, self.voted_id, now)
        self.elections_lost = 0
        start = self.log.end_offset
        leader = self.leader_state = LeaderState(self.node_id, self.epoch, self.voters, start, now)
        key, value = leader_change_record(self.node_id, sorted(self.voters))
        self.log.append_leader([Record(0, now, key, value)], self.epoch, control=True)
        leader.update_local(self.log.end_offset, now)
        self._advance_leader(now)
        self._tick_leader(now)

    def resign(self, now: int) -> None:
        """Graceful shutdown of a leader: EndQuorumEpoch to the others, best caught up first."""
        if self.state != LEADER or self.leader_state is None:
            return
        successors = self.leader_state.successors()
        self._become(RESIGNED, self.epoch, self.node_id, self.voted_id, now)
        request = EndQuorumEpochRequest(self.node_id, self.epoch, successors)
        self.outbox.extend((voter, request) for voter in successors)

    # -- the leader's log

    def append(self, records: list[Record], now: int) -> int:
        """The leader appends records in its epoch; returns their first offset."""
        if self.state != LEADER or self.leader_state is None:
            raise NotLeader(self.leader_id)
        base = self.log.append_leader(records, self.epoch)
        self.leader_state.update_local(self.log.end_offset, now)
        self._advance_leader(now)
        return base

    def _advance_leader(self, now: int) -> None:
        assert self.leader_state is not None
        if self.leader_state.advance_high_watermark():
            self._set_high_watermark(self.leader_state.high_watermark)

    def _set_high_watermark(self, offset: int) -> None:
        if offset != self.high_watermark:
            self.high_watermark = offset
            self.on_commit(offset)

    # -- requests from others

    def handle_request(self, request: Request, now: int) -> Response:
        if isinstance(request, VoteRequest):
            return self._handle_vote(request, now)
        if isinstance(request, BeginQuorumEpochRequest):
            return self._handle_begin(request, now)
        if isinstance(request, EndQuorumEpochRequest):
            return self._handle_end(request, now)
        if isinstance(request, FetchSnapshotRequest):
            return self._handle_fetch_snapshot(request)
        return self._handle_fetch(request, now)

    def _handle_vote(self, request: VoteRequest, now: int) -> VoteResponse:
        if request.candidate_epoch < self.epoch:
            return VoteResponse(ErrorCode.fenced_leader_epoch, self.leader_id, self.epoch, False)
        if request.candidate_id not in self.voters:
            return VoteResponse(ErrorCode.inconsistent_voter_set, self.leader_id, self.epoch, False)
        self._observe(request.candidate_epoch, NO_LEADER, now)
        log_ok = (request.last_offset_epoch, request.last_offset) >= (self.log.last_epoch, self.log.end_offset)
        free = self.state in (UNATTACHED, VOTED) and self.voted_id in (NO_LEADER, request.candidate_id)
        granted = free and log_ok
        if granted:
            self._become(VOTED, self.epoch, NO_LEADER, request.candidate_id, now)
        return VoteResponse(ErrorCode.none, self.leader_id, self.epoch, granted)

    def _handle_begin(self, request: BeginQuorumEpochRequest, now: int) -> EpochAnswer:
        if request.leader_epoch < self.epoch:
            return EpochAnswer(ErrorCode.fenced_leader_epoch, self.leader_id, self.epoch)
        self._observe(request.leader_epoch, request.leader_id, now)
        return EpochAnswer(ErrorCode.none, self.leader_id, self.epoch)

    def _handle_end(self, request: EndQuorumEpochRequest, now: int) -> EpochAnswer:
        if request.leader_epoch < self.epoch:
            return EpochAnswer(ErrorCode.fenced_leader_epoch, self.leader_id, self.epoch)
        self._observe(request.leader_epoch, request.leader_id, now)
        if self.state == FOLLOWER and self.leader_id == request.leader_id:
            # Stand soon: the first preferred successor at once, the others after a growing backoff.
            place = (
                request.preferred_successors.index(self.node_id)
                if self.node_id in request.preferred_successors
                else len(request.preferred_successors)
            )
            spread = self.config.election_backoff_max_ms * place // max(1, len(request.preferred_successors))
            self.fetch_deadline = now + spread + (self.rng.randint(0, 50) if place else 0)
        return EpochAnswer(ErrorCode.none, self.leader_id, self.epoch)

    def _handle_fetch(self, request: FetchRequest, now: int) -> FetchResponse:
        if request.current_leader_epoch < self.epoch:
            return FetchResponse(ErrorCode.fenced_leader_epoch, self.leader_id, self.epoch)
        if request.current_leader_epoch > self.epoch:
            return FetchResponse(ErrorCode.unknown_leader_epoch, self.leader_id, self.epoch)
        if self.state != LEADER or self.leader_state is None:
            return FetchResponse(ErrorCode.not_leader_or_follower, self.leader_id, self.epoch)
        if request.fetch_offset < self.log.start_offset:  # the records are gone: a snapshot has them
            return FetchResponse(
                ErrorCode.none,
                self.node_id,
                self.epoch,
                max(self.leader_state.high_watermark, 0),
                snapshot_end_offset=self.log.start_offset,
                snapshot_epoch=self.log.start_epoch,
            )
        epoch, end = self.log.end_offset_for_epoch(request.last_fetched_epoch)
        if request.fetch_offset > 0 and (epoch != request.last_fetched_epoch or end < request.fetch_offset):
            return FetchResponse(
                ErrorCode.none,
                self.node_id,
                self.epoch,
                self.leader_state.high_watermark,
                diverging_epoch=epoch,
                diverging_end_offset=end,
            )
        if request.fetch_offset > self.log.end_offset:
            return FetchResponse(ErrorCode.offset_out_of_range, self.node_id, self.epoch)
        self.leader_state.update_replica(request.replica_id, request.fetch_offset, self.log.end_offset, now)
        self._advance_leader(now)
        return FetchResponse(
            ErrorCode.none,
            self.node_id,
            self.epoch,
            max(self.leader_state.high_watermark, 0),
            records=self.log.read(request.fetch_offset),
        )

    def _handle_fetch_snapshot(self, request: FetchSnapshotRequest) -> FetchSnapshotResponse:
        if request.current_leader_epoch != self.epoch or self.state != LEADER:
            code = (
                ErrorCode.fenced_leader_epoch
                if request.current_leader_epoch < self.epoch
                else ErrorCode.not_leader_or_follower
            )
            return FetchSnapshotResponse(code, self.leader_id, self.epoch)
        data = self.read_snapshot(request.end_offset, request.epoch)
        if data is None:
            return FetchSnapshotResponse(ErrorCode.snapshot_not_found, self.node_id, self.epoch)
        return FetchSnapshotResponse(ErrorCode.none, self.node_id, self.epoch, request.end_offset, request.epoch, data)

    # -- answers to what this node sent

    def handle_response(self, source: int, request: Request, response: Response, now: int) -> None:
        if isinstance(response, FetchResponse):
            self._handle_fetch_response(source, request, response, now)
            return
        if isinstance(response, FetchSnapshotResponse):
            self._handle_snapshot_response(source, response, now)
            return
        if response.error == ErrorCode.none or response.leader_epoch > self.epoch:
            self._observe(response.leader_epoch, response.leader_id, now)
        if (
            isinstance(response, VoteResponse)
            and self.state == CANDIDATE
            and isinstance(request, VoteRequest)
            and request.candidate_epoch == self.epoch
            and response.leader_epoch == self.epoch
        ):
            (self.granted if response.vote_granted else self.rejected).add(source)
            if len(self.granted) >= self.majority:
                self._become_leader(now)
            elif len(self.rejected) >= self.majority and self.backoff_until == NEVER:
                self._back_off(now)
        elif (
            isinstance(request, BeginQuorumEpochRequest)
            and self.leader_state is not None
            and response.error == ErrorCode.none
            and request.leader_epoch == self.epoch
        ):
            self.leader_state.acknowledged.add(source)

    def request_failed(self, destination: int, request: Request, now: int) -> None:
        """No answer (timeout, refused connection): a fetch is retried after a backoff."""
        if isinstance(request, FetchRequest | FetchSnapshotRequest) and self.state == FOLLOWER:
            self.fetch_in_flight = False
            self.next_fetch_at = now + self.config.retry_backoff_ms

    def _send_fetch(self) -> None:
        self.fetch_in_flight = True
        self.outbox.append(
            (self.leader_id, FetchRequest(self.node_id, self.epoch, self.log.end_offset, self.log.last_epoch))
        )

    def _handle_fetch_response(self, source: int, request: Request, response: FetchResponse, now: int) -> None:
        if (
            self.state != FOLLOWER
            or source != self.leader_id
            or not isinstance(request, FetchRequest)
            or request.current_leader_epoch != self.epoch
        ):
            self._observe(response.leader_epoch, response.leader_id, now)
            return
        if self._refused(response.error, response.leader_epoch, response.leader_id, now):
            return
        self.fetch_deadline = now + self.config.fetch_timeout_ms
        if response.snapshot_end_offset >= 0:  # keep fetch_in_flight: no Fetch until the snapshot is in
            self.fetch_in_flight = True
            self.outbox.append(
                (
                    self.leader_id,
                    FetchSnapshotRequest(
                        self.node_id, self.epoch, response.snapshot_end_offset, response.snapshot_epoch
                    ),
                )
            )
            return
        if response.diverged:
            _, mine = self.log.end_offset_for_epoch(response.diverging_epoch)
            self.log.truncate_to(min(mine, response.diverging_end_offset))
            self.next_fetch_at = now
            return
        appended = self.log.append_replicated(response.records) if response.records else 0
        self._set_high_watermark(min(response.high_watermark, self.log.end_offset))
        self.next_fetch_at = now if appended else now + self.config.fetch_poll_ms

    def _refused(self, error: ErrorCode, leader_epoch: int, leader_id: int, now: int) -> bool:
        """A Fetch or FetchSnapshot answered: the next one may go. An error answer tells of a newer
        epoch or leader, or the follower backs off before asking again."""
        self.fetch_in_flight = False
        if error == ErrorCode.none:
            return False
        if not self._observe(leader_epoch, leader_id, now):
            self.next_fetch_at = now + self.config.retry_backoff_ms
        return True

    def _handle_snapshot_response(self, source: int, response: FetchSnapshotResponse, now: int) -> None:
        """A whole snapshot from the leader: the log restarts at its end offset."""
        if self.state != FOLLOWER or source != self.leader_id:
            self._observe(response.leader_epoch, response.leader_id, now)
            return
        if self._refused(response.error, response.leader_epoch, response.leader_id, now):
            return
        self.fetch_deadline, self.next_fetch_at = now + self.config.fetch_timeout_ms, now
        self.log.restart_at(response.end_offset, response.epoch)
        self.on_snapshot(response.end_offset, response.epoch, response.data)
        self._set_high_watermark(response.end_offset)

    def take_outbox(self) -> list[tuple[int, Request]]:
        out, self.outbox = self.outbox, []
        return out
