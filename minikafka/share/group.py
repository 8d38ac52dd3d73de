"""A share group's members and their assignment (KIP-932, ShareGroupHeartbeat).

Membership follows the new consumer protocol's rules (KIP-848) with a simpler
assignment: the member chooses its own id (a UUID), joins with epoch 0, leaves with
epoch -1, and otherwise sends the epoch the coordinator last gave it. A known member
with another epoch is fenced (FENCED_MEMBER_EPOCH); an unknown one is told
UNKNOWN_MEMBER_ID and rejoins. The group epoch goes up whenever a new assignment is
needed (a member joins or leaves, a subscription changes, a subscribed topic appears
or grows), and each member's epoch follows it at its next heartbeat.

The assignment is done here, by the coordinator, never by a client. Share groups let
several members read one partition, so the simple assignor gives **every member every
partition of the topics it subscribes to**; records, not partitions, are what members
share (see ``partition``). A group is Empty without members and Stable with some.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..errors import ErrorCode, KafkaError

JOIN_EPOCH, LEAVE_EPOCH = 0, -1
Assignment = dict[str, tuple[int, ...]]  # topic name -> partitions


@dataclass
class ShareMember:
    member_id: str
    client_id: str = ""
    client_host: str = ""
    rack_id: str | None = None
    subscribed: tuple[str, ...] = ()
    member_epoch: int = 0
    assignment: Assignment = field(default_factory=dict)
    deadline: int = 0  # monotonic ms on the coordinator's clock: removed when no heartbeat came by then


@dataclass(frozen=True)
class Heartbeat:
    """What one ShareGroupHeartbeat says."""

    member_id: str
    member_epoch: int
    subscribed: tuple[str, ...] | None = None  # None: unchanged since the last heartbeat
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""


class ShareGroup:
    def __init__(self, group_id: str, group_epoch: int = 0):
        self.group_id, self.group_epoch = group_id, group_epoch
        self.assignment_epoch = group_epoch
        self.members: dict[str, ShareMember] = {}
        # subscribed topic -> (partition count, topic id), at the last assignment
        self._partitions: dict[str, tuple[int, str | None]] = {}
        self.on_epoch: Callable[[ShareGroup], None] | None = None  # the coordinator persists the epoch

    @property
    def state(self) -> str:
        return "Stable" if self.members else "Empty"

    def subscribed_topics(self) -> set[str]:
        return {t for m in self.members.values() for t in m.subscribed}

    # -- ShareGroupHeartbeat ---------------------------------------------------------------------
    def heartbeat(self, hb: Heartbeat, topics: Mapping[str, int], session_timeout_ms: int, now: int,
                  max_size: int, topic_ids: Mapping[str, str] | None = None) -> tuple[ShareMember, bool]:
        """Apply one heartbeat; return the member and whether its assignment is news to it.

        ``now`` is monotonic ms on the coordinator's clock; the member's session ends
        ``session_timeout_ms`` later. ``topics`` is the cluster's topics with their partition
        counts, ``topic_ids`` their ids (a topic deleted and created again under the same name
        between two heartbeats has the same name and size but a new id: the members must learn it).
        """
        if hb.member_epoch == LEAVE_EPOCH:
            return self.leave(hb.member_id), False
        member = self._join(hb, max_size) if hb.member_epoch == JOIN_EPOCH else self._known(hb)
        wanted = tuple(sorted(set(hb.subscribed))) if hb.subscribed is not None else member.subscribed
        changed, member.subscribed = wanted != member.subscribed, wanted
        member.rack_id = hb.rack_id if hb.rack_id is not None else member.rack_id
        member.deadline = now + session_timeout_ms
        self._reassign(topics, changed, topic_ids or {})
        behind = member.member_epoch != self.assignment_epoch
        news = behind or hb.member_epoch == JOIN_EPOCH or hb.subscribed is not None
        if behind:
            member.member_epoch = self.assignment_epoch
            member.assignment = self._target(member, topics)
        return member, news

    def _join(self, hb: Heartbeat, max_size: int) -> ShareMember:
        if not hb.subscribed:
            raise KafkaError(ErrorCode.invalid_request, "SubscribedTopicNames must be set in the first heartbeat.")
        member = self.members.get(hb.member_id)
        if member is None:
            if len(self.members) >= max_size:
                raise KafkaError(ErrorCode.group_max_size_reached, f"Share group {self.group_id!r} already has "
                                                                   f"{max_size} members (group.share.max.size).")
            member = self.members[hb.member_id] = ShareMember(hb.member_id, hb.client_id, hb.client_host)
        member.member_epoch = -1  # a (re)join always gets the whole current assignment
        return member

    def _known(self, hb: Heartbeat) -> ShareMember:
        member = self.members.get(hb.member_id)
        if member is None:
            raise KafkaError(ErrorCode.unknown_member_id,
                             f"Share group {self.group_id!r} has no member {hb.member_id}; join again with epoch 0.")
        if hb.member_epoch != member.member_epoch:
            raise KafkaError(ErrorCode.fenced_member_epoch,
                             f"Member {hb.member_id} sent epoch {hb.member_epoch}, but its epoch is "
                             f"{member.member_epoch}; it must rejoin.")
        return member

    def leave(self, member_id: str) -> ShareMember:
        member = self.members.pop(member_id, None)
        if member is None:
            raise KafkaError(ErrorCode.unknown_member_id, f"Share group {self.group_id!r} has no member {member_id}.")
        self._partitions = {t: n for t, n in self._partitions.items() if t in self.subscribed_topics()}
        self._bump()
        member.member_epoch = LEAVE_EPOCH
        return member

    # -- assignment -----------------------------------------------------------------------------
    def _reassign(self, topics: Mapping[str, int], subscriptions_changed: bool = False,
                  topic_ids: Mapping[str, str] | None = None) -> None:
        """A new assignment when a subscription changed, or the subscribed topics' partitions did
        (a topic created, grown, deleted, or deleted and created again)."""
        ids = topic_ids or {}
        current = {t: (topics[t], ids.get(t)) for t in self.subscribed_topics() if t in topics}
        if subscriptions_changed or current != self._partitions:
            self._partitions = current
            self._bump()
        self.assignment_epoch = self.group_epoch

    @staticmethod
    def _target(member: ShareMember, topics: Mapping[str, int]) -> Assignment:
        """The simple assignor: every partition of every subscribed topic that exists."""
        return {t: tuple(range(topics[t])) for t in member.subscribed if t in topics}

    def _bump(self) -> None:
        self.group_epoch += 1
        if self.on_epoch is not None:
            self.on_epoch(self)

    # -- timers ---------------------------------------------------------------------------------
    def expire(self, now: int) -> list[str]:
        """Remove members whose session timed out; their ids."""
        gone = [m.member_id for m in self.members.values() if m.deadline <= now]
        for member_id in gone:
            self.leave(member_id)
        return gone

    def next_deadline(self) -> int | None:
        return min((m.deadline for m in self.members.values()), default=None)
