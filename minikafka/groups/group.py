"""One consumer group: its members, its generation, and its rebalances.

This is the classic rebalance protocol of Kafka's group coordinator. A rebalance is a
barrier in two steps. **JoinGroup**: every member (re)sends its subscriptions; the
coordinator answers nobody until all known members have rejoined or the rebalance
timeout passed (KIP-62), then starts a new *generation*, picks one assignment strategy
every member supports, and sends the leader everybody's subscriptions. **SyncGroup**:
the leader computes the assignment (assignment is the clients' job: range, roundrobin,
sticky...) and sends it; the followers' SyncGroups wait for it. Members prove they are
alive by heartbeats; one that misses its session timeout is removed, and a Heartbeat
answers REBALANCE_IN_PROGRESS to tell the others to rejoin.

Static members (``group.instance.id``, KIP-345) keep their place across a restart: a
rejoin with a known instance id takes over the old member id's assignment without a
rebalance, and the old id is fenced (FENCED_INSTANCE_ID).

The object is sans-I/O: every method takes ``now``, integer milliseconds on the
coordinator's monotonic clock (``minikafka.clock``), and every deadline is kept on that
clock, so a timeout is ``now + session.timeout.ms`` and nothing else; the wall clock
(``clock.wall_ms()``) only stamps the state's change time that DescribeGroups and offset
expiry read. JoinGroup/SyncGroup answer with asyncio futures, so unit tests drive it with
method calls and made-up times. Every state change goes through ``states.next_state``.
"""

from __future__ import annotations

from typing import Any

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from ..clock import SYSTEM, Clock
from ..errors import ErrorCode, KafkaError
from .member import JoinRequest, JoinResult, Member, MemberIdRequired, SyncResult, new_member_id, subscribed_topics
from .states import COMPLETING, DEAD, EMPTY, PREPARING, STABLE, GroupState, next_state


@dataclass(frozen=True)
class GroupSettings:
    """The broker settings a group obeys (``group.*`` in the broker config)."""

    min_session_timeout_ms: int = 1000
    max_session_timeout_ms: int = 1_800_000
    initial_rebalance_delay_ms: int = 0


def _future() -> asyncio.Future:
    return asyncio.get_running_loop().create_future()


def _settle(fut: asyncio.Future | None, result: Any = None, error: ErrorCode | None = None) -> None:
    if fut is None or fut.done():
        return
    if error is None:
        fut.set_result(result)
    else:
        fut.set_exception(KafkaError(error))


class Group:
    group_type = "classic"  # ListGroups v5 tells it apart from a consumer-protocol group (KIP-848)

    def __init__(self, group_id: str, settings: GroupSettings = GroupSettings(), clock: Clock = SYSTEM):
        self.group_id, self.settings, self.clock = group_id, settings, clock
        self.state: GroupState = EMPTY
        self.state_timestamp_ms = clock.wall_ms()
        self.generation_id = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.members: dict[str, Member] = {}
        self.static: dict[str, str] = {}  # group.instance.id -> member id
        self.pending: dict[str, int] = {}  # member ids handed out by MEMBER_ID_REQUIRED -> deadline
        self.offsets: dict = {}  # (topic, partition) -> offsets.CommittedOffset, kept by the coordinator
        self.rebalance_deadline = self.delay_until = self.delay_limit = 0  # monotonic ms, like every deadline
        self.sync_deadline: int | None = None
        self.on_change: Callable[[Group, GroupState, str], None] | None = None

    # -- the table ------------------------------------------------------------------
    def _transition(self, event: str) -> None:
        old, self.state = self.state, next_state(self.state, event)
        if old != self.state:
            self.state_timestamp_ms = self.clock.wall_ms()
        if self.on_change:
            self.on_change(self, old, event)

    def mark_dead(self) -> None:
        self._transition("delete")

    @property
    def is_empty(self) -> bool:
        return self.state is EMPTY

    # -- JoinGroup --------------------------------------------------------------------
    def join(self, req: JoinRequest, now: int) -> asyncio.Future:
        """Answer a JoinGroup; the future resolves when the rebalance completes."""
        self.check_join(req)
        if req.member_id:
            return self._join_known(req, now)
        if req.group_instance_id and req.group_instance_id in self.static:
            return self._replace_static(req, now)
        member_id = new_member_id(req.group_instance_id or req.client_id)
        if req.require_known_member_id and not req.group_instance_id:
            self.pending[member_id] = now + req.session_timeout_ms
            raise MemberIdRequired(member_id)
        return self._add_member(member_id, req, now)

    def check_join(self, req: JoinRequest) -> None:
        s = self.settings
        if not s.min_session_timeout_ms <= req.session_timeout_ms <= s.max_session_timeout_ms:
            raise KafkaError(ErrorCode.invalid_session_timeout,
                             f"session.timeout.ms={req.session_timeout_ms} is outside the broker's range "
                             f"[{s.min_session_timeout_ms}, {s.max_session_timeout_ms}].")
        names = {name for name, _ in req.protocols}
        if not req.protocol_type or not names:
            raise KafkaError(ErrorCode.inconsistent_group_protocol,
                             "A member must name its protocol type and protocols.")
        if self.members and (req.protocol_type != self.protocol_type or not names & self.candidates()):
            raise KafkaError(ErrorCode.inconsistent_group_protocol,
                             f"Group {self.group_id!r} uses {self.protocol_type} with {sorted(self.candidates())}; "
                             f"the member offers {req.protocol_type} with {sorted(names)}.")

    def candidates(self) -> set[str]:
        """Assignment strategies every member supports."""
        sets = [{name for name, _ in m.protocols} for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def _join_known(self, req: JoinRequest, now: int) -> asyncio.Future:
        self._check_fenced(req.member_id, req.group_instance_id)
        if self.pending.pop(req.member_id, None) is not None:
            return self._add_member(req.member_id, req, now)
        member = self.member(req.member_id, req.group_instance_id)
        fut = _future()
        unchanged = member.protocols == tuple(req.protocols)
        if unchanged and (self.state is COMPLETING or (self.state is STABLE and member.member_id != self.leader_id)):
            member.touch(now)  # a retry, or a follower that rejoins for nothing: same generation
            fut.set_result(self._join_result(member))
            return fut
        member.protocols, member.rebalance_timeout_ms = tuple(req.protocols), req.rebalance_timeout_ms
        member.session_timeout_ms = req.session_timeout_ms
        _settle(member.join_waiter, error=ErrorCode.rebalance_in_progress)  # superseded by this request
        member.join_waiter = fut
        self._prepare_rebalance("join", now)
        self._maybe_complete_join(now)
        return fut

    def _add_member(self, member_id: str, req: JoinRequest, now: int) -> asyncio.Future:
        if not self.members:
            self.protocol_type = req.protocol_type
        member = Member.from_request(member_id, req)
        member.touch(now)
        member.join_waiter = fut = _future()
        self.members[member_id] = member
        if req.group_instance_id:
            self.static[req.group_instance_id] = member_id
        self._prepare_rebalance("join", now)
        self._maybe_complete_join(now)
        return fut

    def _replace_static(self, req: JoinRequest, now: int) -> asyncio.Future:
        """A static member is back (KIP-345): the new member id inherits the old one's place."""
        assert req.group_instance_id is not None
        old = self.members.pop(self.static[req.group_instance_id])
        _settle(old.join_waiter, error=ErrorCode.fenced_instance_id)
        _settle(old.sync_waiter, error=ErrorCode.fenced_instance_id)
        member = Member.from_request(new_member_id(req.group_instance_id), req)
        member.assignment = old.assignment
        member.touch(now)
        self.members[member.member_id] = member
        self.static[req.group_instance_id] = member.member_id
        reply_leader = self.leader_id
        if self.leader_id == old.member_id:
            self.leader_id = member.member_id
        fut = _future()
        if self.state is STABLE and self._select_protocol() == self.protocol_name:
            self._transition("static_rejoin")
            # The old leader id keeps the member from running the assignor: it is a
            # follower this time, and its SyncGroup returns the assignment it had.
            fut.set_result(JoinResult(member.member_id, self.generation_id, self.protocol_type,
                                      self.protocol_name, reply_leader or "", ()))
            return fut
        member.join_waiter = fut
        self._prepare_rebalance("join" if self.state is STABLE else "static_rejoin", now)
        self._maybe_complete_join(now)
        return fut

    def _prepare_rebalance(self, event: str, now: int) -> None:
        was = self.state
        if was is COMPLETING:  # the assignment being handed out is already stale
            for m in self.members.values():
                m.assignment = b""
                _settle(m.sync_waiter, error=ErrorCode.rebalance_in_progress)
                m.sync_waiter = None
        self._transition(event)
        self.sync_deadline = None
        if was is not PREPARING:
            timeout = max((m.rebalance_timeout_ms for m in self.members.values()), default=0)
            self.rebalance_deadline = self.delay_limit = now + timeout
            delay = self.settings.initial_rebalance_delay_ms if was is EMPTY else 0
            self.delay_until = min(now + delay, self.delay_limit)
        elif event == "join" and now < self.delay_until:  # group.initial.rebalance.delay.ms: wait for more
            self.delay_until = min(now + self.settings.initial_rebalance_delay_ms, self.delay_limit)

    def _maybe_complete_join(self, now: int) -> None:
        if (self.state is PREPARING and not self.pending and now >= self.delay_until
                and all(m.join_waiter is not None for m in self.members.values())):
            self._complete_join(now)

    def _complete_join(self, now: int) -> None:
        """Every member is in: a new generation, a protocol, a leader, and the answers."""
        self.generation_id += 1
        if not self.members:
            self.protocol_name = self.leader_id = None
            self._transition("all_left")
            return
        self.protocol_name = self._select_protocol()
        if self.leader_id not in self.members:
            self.leader_id = next(iter(self.members))
        self.sync_deadline = now + max(m.rebalance_timeout_ms for m in self.members.values())
        self._transition("all_joined")
        for m in self.members.values():
            m.touch(now)
            waiter, m.join_waiter = m.join_waiter, None
            _settle(waiter, self._join_result(m))

    def _select_protocol(self) -> str | None:
        """Each member votes for its favourite among the common strategies; most votes wins."""
        candidates = self.candidates()
        votes: dict[str, int] = {}
        for m in self.members.values():
            choice = next(name for name, _ in m.protocols if name in candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return max(votes, key=lambda name: votes[name]) if votes else None

    def _join_result(self, member: Member) -> JoinResult:
        members: tuple[tuple[str, str | None, bytes], ...] = ()
        if member.member_id == self.leader_id:
            members = tuple((m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
                            for m in self.members.values())
        return JoinResult(member.member_id, self.generation_id, self.protocol_type, self.protocol_name,
                          self.leader_id or "", members)

    # -- SyncGroup ------------------------------------------------------------------------
    def sync(self, member_id: str, instance_id: str | None, generation_id: int, assignments: dict[str, bytes],
             now: int, protocol_type: str | None = None, protocol_name: str | None = None) -> asyncio.Future:
        """Answer a SyncGroup; followers wait until the leader's brings the assignment."""
        member = self.member(member_id, instance_id)
        if generation_id != self.generation_id:
            raise KafkaError(ErrorCode.illegal_generation,
                             f"Generation {generation_id} is stale; group {self.group_id!r} "
                             f"is at {self.generation_id}.")
        if ((protocol_type and protocol_type != self.protocol_type)
                or (protocol_name and protocol_name != self.protocol_name)):
            raise KafkaError(ErrorCode.inconsistent_group_protocol)
        if self.state is PREPARING:
            raise KafkaError(ErrorCode.rebalance_in_progress)
        member.touch(now)
        fut = _future()
        if self.state is STABLE:
            fut.set_result(self._sync_result(member))
            return fut
        _settle(member.sync_waiter, error=ErrorCode.rebalance_in_progress)
        member.sync_waiter = fut
        if member_id == self.leader_id:
            self._complete_sync(assignments)
        return fut

    def _complete_sync(self, assignments: dict[str, bytes]) -> None:
        """The leader's assignment arrived: the generation is Stable; answer everyone waiting."""
        for m in self.members.values():
            m.assignment = assignments.get(m.member_id, b"")
        self.sync_deadline = None
        self._transition("leader_synced")
        for m in self.members.values():
            waiter, m.sync_waiter = m.sync_waiter, None
            _settle(waiter, self._sync_result(m))

    def _sync_result(self, member: Member) -> SyncResult:
        return SyncResult(member.assignment, self.protocol_type, self.protocol_name)

    # -- Heartbeat, LeaveGroup, and the members an OffsetCommit may come from -----------
    def heartbeat(self, member_id: str, instance_id: str | None, generation_id: int, now: int) -> None:
        member = self.member(member_id, instance_id)
        if self.state is PREPARING:
            member.touch(now)
            raise KafkaError(ErrorCode.rebalance_in_progress)
        if generation_id != self.generation_id:
            raise KafkaError(ErrorCode.illegal_generation)
        member.touch(now)

    def leave(self, member_id: str, instance_id: str | None, now: int) -> None:
        """LeaveGroup of one member (v3+ may name it by group.instance.id only)."""
        if instance_id is not None:
            known = self.static.get(instance_id)
            if known is None:
                raise KafkaError(ErrorCode.unknown_member_id, f"No member has group.instance.id {instance_id!r}.")
            if member_id and member_id != known:
                raise KafkaError(ErrorCode.fenced_instance_id)
            member_id = known
        if self.pending.pop(member_id, None) is not None:
            self._maybe_complete_join(now)
            return
        self._remove(self.member(member_id, None), ErrorCode.unknown_member_id)
        self._member_gone(now)

    def check_commit(self, member_id: str, instance_id: str | None, generation_id: int, now: int) -> None:
        """Whether an OffsetCommit may write: members of the current generation, or anyone
        (generation -1) while the group is Empty (tools, manual assignment)."""
        if generation_id < 0 and self.state is EMPTY:
            return
        member = self.member(member_id, instance_id)
        if generation_id != self.generation_id:
            raise KafkaError(ErrorCode.illegal_generation,
                             f"Generation {generation_id} is stale; group {self.group_id!r} "
                             f"is at {self.generation_id}.")
        if self.state is COMPLETING:  # the member does not know its new partitions yet
            raise KafkaError(ErrorCode.rebalance_in_progress)
        member.touch(now)

    def member(self, member_id: str, instance_id: str | None) -> Member:
        """The member behind a request, or UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID."""
        self._check_fenced(member_id, instance_id)
        member = self.members.get(member_id)
        if member is None:
            raise KafkaError(ErrorCode.unknown_member_id,
                             f"Group {self.group_id!r} has no member {member_id!r}; rejoin the group.")
        return member

    def _check_fenced(self, member_id: str, instance_id: str | None) -> None:
        if instance_id is not None and self.static.get(instance_id, member_id) != member_id:
            raise KafkaError(ErrorCode.fenced_instance_id,
                             f"group.instance.id {instance_id!r} now belongs to another member of {self.group_id!r}.")

    def _remove(self, member: Member, error: ErrorCode) -> None:
        del self.members[member.member_id]
        if member.group_instance_id and self.static.get(member.group_instance_id) == member.member_id:
            del self.static[member.group_instance_id]
        _settle(member.join_waiter, error=error)
        _settle(member.sync_waiter, error=error)

    def _member_gone(self, now: int) -> None:
        if self.state in (STABLE, COMPLETING, PREPARING):
            self._prepare_rebalance("leave", now)
        self._maybe_complete_join(now)

    # -- timers ---------------------------------------------------------------------------
    def tick(self, now: int) -> None:
        """Apply every deadline that has passed: sessions, pending ids, rebalance, sync."""
        for m in [m for m in self.members.values() if not m.waiting and now >= m.session_deadline]:
            self._remove(m, ErrorCode.unknown_member_id)  # session timeout: the member is presumed dead
            self._member_gone(now)
        for member_id in [i for i, deadline in self.pending.items() if now >= deadline]:
            del self.pending[member_id]
        if self.state is PREPARING and now >= self.rebalance_deadline:
            self._expire_rebalance(now)
        if self.state is COMPLETING and self.sync_deadline is not None and now >= self.sync_deadline:
            for m in [m for m in self.members.values() if m.sync_waiter is None]:
                self._remove(m, ErrorCode.unknown_member_id)
                self._member_gone(now)
        self._maybe_complete_join(now)

    def _expire_rebalance(self, now: int) -> None:
        """The rebalance timeout passed: members that did not rejoin are out."""
        for m in [m for m in self.members.values() if m.join_waiter is None]:
            self._remove(m, ErrorCode.unknown_member_id)
            self._transition("leave")
        self.pending.clear()
        self.delay_until = now
        self._complete_join(now)

    def next_deadline(self) -> int | None:
        """When ``tick`` next has something to do (None: nothing is scheduled)."""
        times = [m.session_deadline for m in self.members.values() if not m.waiting]
        times += self.pending.values()
        if self.state is PREPARING:
            times += [self.rebalance_deadline, self.delay_until]
        if self.state is COMPLETING and self.sync_deadline is not None:
            times.append(self.sync_deadline)
        return min(times, default=None)

    # -- online migration (KIP-848): members leave for a consumer group, or come back from one ---
    def release_members(self) -> None:
        """Upgrade: the members now belong to a consumer group; their pending JoinGroup and
        SyncGroup are answered REBALANCE_IN_PROGRESS and this side keeps only the offsets."""
        self.fail_all(ErrorCode.rebalance_in_progress)
        self.members, self.static, self.pending, self.leader_id = {}, {}, {}, None
        self.state = EMPTY

    def adopt(self, members: list[Member], generation_id: int, now: int) -> None:
        """Downgrade: a consumer group's classic members become this group's, in a Stable
        generation that at once starts a rebalance, so their leader assigns again."""
        self.members = {m.member_id: m for m in members}
        self.static = {m.group_instance_id: m.member_id for m in members if m.group_instance_id}
        self.generation_id, self.protocol_type, self.state = generation_id, "consumer", STABLE
        self.protocol_name, self.leader_id = self._select_protocol(), members[0].member_id
        self._prepare_rebalance("leave", now)

    # -- what DescribeGroups and OffsetDelete need -------------------------------------------
    def subscribed_topics(self) -> set[str]:
        if self.protocol_type != "consumer" or self.protocol_name is None:
            return set()
        return set().union(*(subscribed_topics(m.metadata(self.protocol_name)) for m in self.members.values()))

    def fail_all(self, error: ErrorCode) -> None:
        """The coordinator gives the group up (another broker leads its partition now)."""
        for m in self.members.values():
            _settle(m.join_waiter, error=error)
            _settle(m.sync_waiter, error=error)

    def __repr__(self) -> str:
        return f"<Group {self.group_id!r} {self.state} generation={self.generation_id} members={len(self.members)}>"


__all__ = ["Group", "GroupSettings", "JoinRequest", "JoinResult", "Member", "MemberIdRequired", "SyncResult",
           "DEAD", "EMPTY", "PREPARING", "COMPLETING", "STABLE"]
