"""One member of a consumer-protocol group (KIP-848) and how it reconciles, as plain data.

The coordinator knows, for each member: its member epoch (the epoch of the target
assignment it last reached), the partitions it may consume now (``assigned``), the
ones it must give up (``pending_revocation``), what it subscribes to, and its
timeouts. ``reconcile`` is KIP-848's reconciliation rule, a pure function (Kafka's
``CurrentAssignmentBuilder``): given a member, the target assignment and who owns what,
it returns the member's next state. The rules, in order:

1. keep the target partitions the member already owns;
2. partitions it owns that the target moved elsewhere must be **revoked first**: the
   member stays at its epoch (``UnrevokedPartitions``) and consumes the rest until a
   heartbeat shows it no longer owns them;
3. then it moves to the target epoch and gets each new partition that is **free**; one
   still owned by another member (not yet revoked there) waits
   (``UnreleasedPartitions``) and is handed over on a later heartbeat.

So a partition never has two owners, and only partitions that move stop being consumed.
"""

from __future__ import annotations

from typing import Any

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .states import MEMBER_TABLE, MemberState

TopicPartition = tuple[str, int]
NO_PARTITIONS: frozenset[TopicPartition] = frozenset()


@dataclass(frozen=True)
class ClassicMembership:
    """A member of a consumer group that speaks the classic protocol (JoinGroup, SyncGroup,
    Heartbeat; KIP-848's online migration): its session timeout and the assignment
    strategies its JoinGroup offered, with their metadata, first choice first."""

    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]

    @property
    def protocol_name(self) -> str:
        return self.protocols[0][0]


@dataclass(frozen=True)
class ConsumerMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = 300_000
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: frozenset[TopicPartition] = NO_PARTITIONS
    pending_revocation: frozenset[TopicPartition] = NO_PARTITIONS
    session_deadline: int = field(default=0, compare=False)  # monotonic ms, on the coordinator's clock
    rebalance_deadline: int | None = field(default=None, compare=False)
    classic: ClassicMembership | None = None  # set for a member using the classic protocol

    def owns(self) -> frozenset[TopicPartition]:
        """What the coordinator counts as this member's: assigned and not yet revoked."""
        return self.assigned | self.pending_revocation

    def subscribed(self, topics: Mapping[str, int]) -> set[str]:
        """The topics it subscribes to that exist: its names, and what its regex matches."""
        out = {t for t in self.subscribed_topic_names if t in topics}
        if self.subscribed_topic_regex:
            pattern = re.compile(self.subscribed_topic_regex)
            out |= {t for t in topics if not t.startswith("__") and pattern.fullmatch(t)}
        return out

    def reconciled_to(self, epoch: int) -> bool:
        return self.member_epoch == epoch and self.state is MemberState.STABLE

    def with_epoch(self, epoch: int, **changes: Any) -> ConsumerMember:
        """A new member epoch (the old one is kept as the previous epoch)."""
        return dataclasses.replace(self, member_epoch=epoch, previous_member_epoch=self.member_epoch, **changes)


def reconcile(member: ConsumerMember, target_epoch: int, target: frozenset[TopicPartition],
              owned_elsewhere: Callable[[TopicPartition], bool],
              reported: frozenset[TopicPartition] | None) -> ConsumerMember:
    """The member's next state toward ``target`` at ``target_epoch`` (itself when nothing moves).

    ``reported`` is what the member's heartbeat says it owns (None: not sent).
    """
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if reported is None or reported & member.pending_revocation:
            return member  # still consuming what it must give up: wait
        return _next(member, member.member_epoch + 1, target_epoch, target, owned_elsewhere, reported)
    if member.reconciled_to(target_epoch):
        return member
    return _next(member, member.member_epoch, target_epoch, target, owned_elsewhere, reported)


def _next(member: ConsumerMember, epoch: int, target_epoch: int, target: frozenset[TopicPartition],
          owned_elsewhere: Callable[[TopicPartition], bool], reported: frozenset[TopicPartition] | None
          ) -> ConsumerMember:
    keep = member.assigned & target
    revoke = member.assigned - target
    wanted = target - keep
    free = frozenset(tp for tp in wanted if not owned_elsewhere(tp))
    if revoke and (reported is None or reported & revoke):
        MEMBER_TABLE.check(member.state, MemberState.UNREVOKED_PARTITIONS)
        return member.with_epoch(epoch, state=MemberState.UNREVOKED_PARTITIONS, assigned=keep,
                                 pending_revocation=revoke)
    state = MemberState.UNRELEASED_PARTITIONS if free != wanted else MemberState.STABLE
    MEMBER_TABLE.check(member.state, state)
    return member.with_epoch(target_epoch, state=state, assigned=keep | free, pending_revocation=NO_PARTITIONS)
