"""One consumer group on the consumer group protocol (KIP-848): epochs, heartbeats, reconciliation.

There is no JoinGroup/SyncGroup barrier. Every member sends ConsumerGroupHeartbeat
(member epoch 0 to join, -1 to leave, -2 for a static member leaving for now) with
what changed: its subscription, its chosen server-side assignor, the partitions it
owns. Three epochs drive everything:

* the **group epoch** goes up when membership or subscriptions change (a member joins,
  leaves, misses its session timeout, subscribes to something else, or a subscribed
  topic gains partitions);
* the **target assignment epoch** is the group epoch the coordinator last computed a
  target assignment for (with the group's server-side assignor);
* each **member epoch** is the target epoch that member has reached; it moves there
  through ``member.reconcile``, one heartbeat at a time, giving up
  only the partitions that move and getting each new one once its old owner let go.

Fencing: a heartbeat with an epoch the coordinator does not expect gets
FENCED_MEMBER_EPOCH (except the previous epoch, when a response was lost), an unknown
member UNKNOWN_MEMBER_ID; the member rejoins with epoch 0. A member silent for
``group.consumer.session.timeout.ms`` is removed; one that does not revoke within its
rebalance timeout (the client's ``max.poll.interval.ms``) too. Static members
(``group.instance.id``) that leave with epoch -2 keep their partitions for the session
timeout; a new member with the same instance id takes them over, and one that joins
while the old is still there gets UNRELEASED_INSTANCE_ID.

Sans-I/O: methods take ``now``, integer milliseconds on the coordinator's monotonic
clock (``minikafka.clock``), on which every session and rebalance deadline is kept; the
injected clock's wall reading stamps only when the group became empty. Methods raise
``KafkaError``; the coordinator decides what to persist (``on_epoch`` is called when the
group epoch moves).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from ...clock import SYSTEM, Clock
from ...errors import ErrorCode, KafkaError
from .assignors import ASSIGNORS
from .member import NO_PARTITIONS, ConsumerMember, TopicPartition, reconcile
from .states import (JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH, ConsumerGroupState,
                                       MemberState)

Topics = Callable[[], Mapping[str, int]]  # topic name -> partition count, now


@dataclass(frozen=True)
class ConsumerGroupSettings:
    """The broker settings a consumer-protocol group obeys (``group.consumer.*``)."""

    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5_000
    assignors: tuple[str, ...] = ("uniform", "range")


@dataclass(frozen=True)
class Heartbeat:
    """A ConsumerGroupHeartbeat, topic ids already turned into names. None: "unchanged"."""

    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: frozenset[TopicPartition] | None = None
    client_id: str = ""
    client_host: str = ""

    @property
    def is_full(self) -> bool:
        """A join, or a request carrying everything (a client does so after an error)."""
        subscribed = self.subscribed_topic_names is not None or self.subscribed_topic_regex is not None
        return self.member_epoch == JOIN_EPOCH or (self.rebalance_timeout_ms != -1 and subscribed
                                                  and self.owned is not None)


@dataclass(frozen=True)
class HeartbeatResult:
    member_id: str
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: frozenset[TopicPartition] | None  # None: unchanged since the member's last heartbeat


def _invalid(message: str) -> KafkaError:
    return KafkaError(ErrorCode.invalid_request, message)


class ConsumerGroup:
    group_type = protocol_type = "consumer"

    def __init__(self, group_id: str, settings: ConsumerGroupSettings, topics: Topics, clock: Clock = SYSTEM):
        self.group_id, self.settings, self.topics, self.clock = group_id, settings, topics, clock
        self.group_epoch = self.assignment_epoch = 0
        self.members: dict[str, ConsumerMember] = {}
        self.static: dict[str, str] = {}  # group.instance.id -> member id
        self.target: dict[str, frozenset[TopicPartition]] = {}
        self.subscription_metadata: dict[str, int] = {}  # subscribed topic -> partitions, at the group epoch
        self.assignor = settings.assignors[0]
        self.state_timestamp_ms = clock.wall_ms()
        self.on_epoch: Callable[[ConsumerGroup], None] | None = None

    # -- the summary states ---------------------------------------------------------------
    @property
    def state(self) -> ConsumerGroupState:
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if all(m.reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.STABLE
        return ConsumerGroupState.RECONCILING

    @property
    def is_empty(self) -> bool:
        return not self.members

    # -- ConsumerGroupHeartbeat ---------------------------------------------------------------
    def heartbeat(self, hb: Heartbeat, now: int) -> HeartbeatResult:
        self._validate(hb)
        if hb.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
            return self._leave(hb)
        old = self._member_for(hb)
        member = self.update(old, self._updated(old, hb), hb.owned, now)
        member = replace(member, session_deadline=now + self.settings.session_timeout_ms)
        self.members[member.member_id] = member
        changed = old is None or old.assigned != member.assigned
        return HeartbeatResult(member.member_id, member.member_epoch, self.settings.heartbeat_interval_ms,
                               member.assigned if hb.is_full or changed else None)

    def update(self, old: ConsumerMember | None, member: ConsumerMember, reported: frozenset[TopicPartition] | None,
               now: int) -> ConsumerMember:
        """Put a new or changed member in (a new group epoch if it joined or changed its
        subscription, or a subscribed topic appeared or grew) and reconcile it toward its target."""
        self._put(member)
        resubscribed = old is None or (old.subscribed_topic_names, old.subscribed_topic_regex) != (
            member.subscribed_topic_names, member.subscribed_topic_regex)
        if resubscribed or self.layout() != self.subscription_metadata:
            self._bump()
        member = self._reconcile(self.members[member.member_id], reported, now)
        self.members[member.member_id] = member
        return member

    def has_free_target(self, member: ConsumerMember) -> bool:
        """Whether a partition of the member's target that it lacks is now free to take."""
        others = self._owned_by_others(member.member_id)
        return any(tp not in others for tp in self.target.get(member.member_id, NO_PARTITIONS) - member.assigned)

    def _owned_by_others(self, member_id: str) -> set[TopicPartition]:
        return set().union(*(m.owns() for m in self.members.values() if m.member_id != member_id))

    def _validate(self, hb: Heartbeat) -> None:
        if not hb.member_id:
            raise _invalid("MemberId can't be empty.")
        if hb.instance_id == "" or hb.rack_id == "":
            raise _invalid("InstanceId and RackId can't be empty strings.")
        if hb.member_epoch == JOIN_EPOCH:
            if hb.rebalance_timeout_ms == -1:
                raise _invalid("RebalanceTimeoutMs must be provided in first request.")
            if hb.owned is None or hb.owned:
                raise _invalid("TopicPartitions must be empty when (re-)joining.")
            if not hb.subscribed_topic_names and hb.subscribed_topic_regex is None:
                raise _invalid("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
        elif hb.member_epoch == STATIC_LEAVE_EPOCH and hb.instance_id is None:
            raise _invalid("InstanceId can't be null when leaving with member epoch -2.")
        elif hb.member_epoch < STATIC_LEAVE_EPOCH:
            raise _invalid(f"MemberEpoch {hb.member_epoch} is invalid.")
        if hb.server_assignor is not None and hb.server_assignor not in self.settings.assignors:
            raise KafkaError(ErrorCode.unsupported_assignor,
                             f"ServerAssignor {hb.server_assignor} is not supported. Supported assignors: "
                             f"{', '.join(self.settings.assignors)}.")
        if hb.subscribed_topic_regex:
            try:
                re.compile(hb.subscribed_topic_regex)
            except re.error as e:
                raise KafkaError(ErrorCode.invalid_regular_expression,
                                 f"SubscribedTopicRegex {hb.subscribed_topic_regex!r} is invalid: {e}.") from None

    def _member_for(self, hb: Heartbeat) -> ConsumerMember | None:
        """The member this heartbeat comes from (None: a new member), after the fencing rules."""
        if hb.member_epoch == JOIN_EPOCH:
            return self._joining(hb)
        if hb.instance_id is not None:
            self._check_instance(hb.instance_id, hb.member_id)
        member = self._known(hb.member_id)
        if hb.member_epoch > member.member_epoch or (
                hb.member_epoch < member.member_epoch
                and (hb.member_epoch != member.previous_member_epoch or hb.owned is None
                     or not hb.owned <= member.assigned)):
            raise KafkaError(ErrorCode.fenced_member_epoch,
                             f"The member epoch {hb.member_epoch} is not the {member.member_epoch} the coordinator "
                             "knows: the member must abandon all its partitions and rejoin.")
        return member

    def _joining(self, hb: Heartbeat) -> ConsumerMember | None:
        """Epoch 0: a new member, a member rejoining after it was fenced (it gave up all its
        partitions), or a static member taking over from the one that left with epoch -2."""
        previous_id = self.static.get(hb.instance_id) if hb.instance_id is not None else None
        if previous_id is not None and previous_id != hb.member_id:
            previous = self.members[previous_id]
            if previous.member_epoch != STATIC_LEAVE_EPOCH:
                raise KafkaError(ErrorCode.unreleased_instance_id,
                                 f"Static member {hb.member_id} with instance id {hb.instance_id} cannot join: the "
                                 f"instance id is still owned by member {previous_id}.")
            target = self.target.get(previous_id, NO_PARTITIONS)
            self._forget(previous_id)
            self.target[hb.member_id] = target
            return replace(previous, member_id=hb.member_id, member_epoch=0, previous_member_epoch=0,
                           state=MemberState.STABLE, pending_revocation=NO_PARTITIONS)
        existing = self.members.get(hb.member_id)
        if existing is None:
            return None
        return replace(existing, member_epoch=0, previous_member_epoch=0, state=MemberState.STABLE,
                       assigned=NO_PARTITIONS, pending_revocation=NO_PARTITIONS, rebalance_deadline=None)

    def _check_instance(self, instance_id: str, member_id: str) -> None:
        owner = self.static.get(instance_id)
        if owner is None:
            raise KafkaError(ErrorCode.unknown_member_id, f"Instance id {instance_id} is unknown.")
        if owner != member_id:
            raise KafkaError(ErrorCode.fenced_instance_id,
                             f"Static member {member_id} with instance id {instance_id} was fenced by member {owner}.")

    def _known(self, member_id: str) -> ConsumerMember:
        member = self.members.get(member_id)
        if member is None:
            raise KafkaError(ErrorCode.unknown_member_id,
                             f"Member {member_id} is not a member of group {self.group_id}; rejoin with epoch 0.")
        return member

    @staticmethod
    def _updated(old: ConsumerMember | None, hb: Heartbeat) -> ConsumerMember:
        """The member with what this heartbeat changed (a None field is "unchanged")."""
        member = old or ConsumerMember(hb.member_id)
        changes: dict = {"client_id": hb.client_id, "client_host": hb.client_host}
        for name in ("instance_id", "rack_id", "server_assignor", "subscribed_topic_regex"):
            if getattr(hb, name) is not None:
                changes[name] = getattr(hb, name)
        if hb.subscribed_topic_names is not None:
            changes["subscribed_topic_names"] = tuple(sorted(hb.subscribed_topic_names))
        if hb.rebalance_timeout_ms != -1:
            changes["rebalance_timeout_ms"] = hb.rebalance_timeout_ms
        return replace(member, **changes)

    def _put(self, member: ConsumerMember) -> None:
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static[member.instance_id] = member.member_id

    def _forget(self, member_id: str) -> ConsumerMember:
        member = self.members.pop(member_id)
        if member.instance_id is not None and self.static.get(member.instance_id) == member_id:
            del self.static[member.instance_id]
        self.target.pop(member_id, None)
        if not self.members:
            self.state_timestamp_ms = self.clock.wall_ms()
        return member

    def _leave(self, hb: Heartbeat) -> HeartbeatResult:
        if hb.instance_id is not None:
            self._check_instance(hb.instance_id, hb.member_id)
        member = self._known(hb.member_id)
        if hb.member_epoch == STATIC_LEAVE_EPOCH:  # back soon: keep the partitions for the session timeout
            self.members[member.member_id] = replace(member, member_epoch=STATIC_LEAVE_EPOCH,
                                                     pending_revocation=NO_PARTITIONS, rebalance_deadline=None)
        else:
            self.remove(member.member_id)
        return HeartbeatResult(member.member_id, hb.member_epoch, self.settings.heartbeat_interval_ms, None)

    def remove(self, member_id: str) -> None:
        """A member is out (it left, or it was fenced): the others share its partitions."""
        self._forget(member_id)
        self._bump()

    # -- epochs and the target assignment --------------------------------------------------------
    def layout(self) -> dict[str, int]:
        topics = self.topics()
        subscribed = set().union(*(m.subscribed(topics) for m in self.members.values()))
        return {t: topics[t] for t in sorted(subscribed)}

    def _bump(self) -> None:
        """Membership or subscriptions changed: a new group epoch and a new target assignment."""
        self.group_epoch += 1
        self.subscription_metadata = self.layout()
        self._assign()
        if self.on_epoch is not None:
            self.on_epoch(self)

    def _assign(self) -> None:
        votes = Counter(m.server_assignor for m in self.members.values() if m.server_assignor)
        self.assignor = votes.most_common(1)[0][0] if votes else self.settings.assignors[0]
        topics = self.topics()
        subscriptions = {m.member_id: m.subscribed(topics) for m in self.members.values()}
        order = {m.member_id: m.instance_id or m.member_id for m in self.members.values()}
        result = ASSIGNORS[self.assignor](subscriptions, topics, self.target, order)
        self.target = {member_id: frozenset(tps) for member_id, tps in result.items()}
        self.assignment_epoch = self.group_epoch

    def _reconcile(self, member: ConsumerMember, reported: frozenset[TopicPartition] | None,
                   now: int) -> ConsumerMember:
        others = self._owned_by_others(member.member_id)
        updated = reconcile(member, self.assignment_epoch, self.target.get(member.member_id, NO_PARTITIONS),
                            others.__contains__, reported)
        if updated.state is MemberState.UNREVOKED_PARTITIONS:
            if member.state is not MemberState.UNREVOKED_PARTITIONS or updated.member_epoch != member.member_epoch:
                updated = replace(updated, rebalance_deadline=now + updated.rebalance_timeout_ms)
        elif updated.rebalance_deadline is not None:
            updated = replace(updated, rebalance_deadline=None)
        return updated

    # -- timers: session and rebalance timeouts ----------------------------------------------------
    def tick(self, now: int) -> list[str]:
        """Remove members past their session timeout, or past their rebalance timeout while
        they still own partitions they had to revoke; return their ids."""
        gone = [m.member_id for m in self.members.values() if now >= m.session_deadline
                or (m.rebalance_deadline is not None and now >= m.rebalance_deadline)]
        for member_id in gone:
            self.remove(member_id)
        return gone

    def next_deadline(self) -> int | None:
        times = [m.session_deadline for m in self.members.values()]
        times += [m.rebalance_deadline for m in self.members.values() if m.rebalance_deadline is not None]
        return min(times, default=None)

    # -- OffsetCommit and OffsetFetch from members (the member epoch is their generation) --------
    def check_commit(self, member_id: str, instance_id: str | None, member_epoch: int, api_version: int = 9,
                     transactional: bool = False) -> None:
        """Commits come from a member at its current epoch (STALE_MEMBER_EPOCH otherwise); with
        epoch -1 from anyone (tools, manual assignment) while the group is empty."""
        if member_epoch < 0 and not self.members:
            return
        member = self._known(member_id)
        if member.classic is not None and not transactional:  # its generation is its member epoch
            if member_epoch != member.member_epoch:
                raise KafkaError(ErrorCode.illegal_generation,
                                 f"Generation {member_epoch} is stale; the member is at {member.member_epoch}.")
            return
        if api_version < 9 and not transactional:
            raise KafkaError(ErrorCode.unsupported_version,
                             "OffsetCommit version 9 or above must be used by members of a consumer-protocol group.")
        if member_epoch != member.member_epoch:
            raise KafkaError(ErrorCode.stale_member_epoch,
                             f"The received member epoch {member_epoch} does not match the expected member "
                             f"epoch {member.member_epoch}.")

    def check_fetch(self, member_id: str | None, member_epoch: int) -> None:
        """OffsetFetch v9 names the member; without a member id (tools) anyone may read."""
        if not member_id and member_epoch < 0:
            return
        member = self._known(member_id or "")
        if member_epoch != member.member_epoch:
            raise KafkaError(ErrorCode.stale_member_epoch,
                             f"The received member epoch {member_epoch} does not match the expected member "
                             f"epoch {member.member_epoch}.")

    def subscribed_topics(self) -> set[str]:
        topics = self.topics()
        return set().union(*(m.subscribed(topics) for m in self.members.values()))

    def __repr__(self) -> str:
        return (f"<ConsumerGroup {self.group_id!r} {self.state} epoch={self.group_epoch} "
                f"assignment_epoch={self.assignment_epoch} members={len(self.members)}>")
