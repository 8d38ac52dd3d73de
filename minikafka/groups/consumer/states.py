"""The states of the consumer group protocol (KIP-848), declared once as data.

A classic group moves as a whole through a stop-the-world rebalance (``states``). A
consumer-protocol group has no such barrier: each *member* converges on its own toward
the group's target assignment, and the group's state is only a summary of its members:

* **Empty**: no members (committed offsets may remain).
* **Assigning**: the group epoch moved past the target assignment epoch; the
  coordinator is computing a new target assignment.
* **Reconciling**: a target exists and some member has not reached it yet.
* **Stable**: every member owns exactly its target partitions, at the target epoch.
* **Dead**: the group was deleted.

A member is in one of three states (Kafka's ``MemberState``):

* **Stable**: it owns its target partitions, or is about to get free ones.
* **UnrevokedPartitions**: it must first give up partitions the target moved away;
  it keeps its epoch and keeps consuming the others until it acknowledges.
* **UnreleasedPartitions**: it has the new epoch but some of its target partitions
  are still owned by a member that has not revoked them yet; it gets each one as soon
  as it is free. A partition never has two owners.

``MEMBER_TRANSITIONS`` lists each move as ``(from, event, to)``, for the course's
diagrams; ``groups.consumer.member.reconcile`` is the code that makes them, and checks
each one against ``MEMBER_TABLE``.
"""

from __future__ import annotations

from enum import Enum

from ...state_table import StateTable


class ConsumerGroupState(str, Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:  # Kafka's own spelling, as ListGroups and ConsumerGroupDescribe report it
        return self.value


class MemberState(str, Enum):
    STABLE = "Stable"
    UNREVOKED_PARTITIONS = "UnrevokedPartitions"
    UNRELEASED_PARTITIONS = "UnreleasedPartitions"

    def __str__(self) -> str:
        return self.value


MEMBER_EVENTS: dict[str, str] = {
    "new_target": "the target assignment moved to a newer epoch",
    "must_revoke": "the new target takes partitions away from this member",
    "revoked": "the member's heartbeat no longer lists the partitions it had to give up",
    "still_owned": "a partition of the new target is still owned by another member",
    "released": "every partition of the target is free, or owned by this member",
}

_S, _UNREVOKED, _UNRELEASED = MemberState
MEMBER_TRANSITIONS: tuple[tuple[MemberState, str, MemberState], ...] = (
    (_S, "new_target", _S),
    (_S, "must_revoke", _UNREVOKED),
    (_S, "still_owned", _UNRELEASED),
    (_UNREVOKED, "revoked", _S),
    (_UNREVOKED, "still_owned", _UNRELEASED),
    (_UNREVOKED, "must_revoke", _UNREVOKED),
    (_UNRELEASED, "still_owned", _UNRELEASED),
    (_UNRELEASED, "released", _S),
    (_UNRELEASED, "must_revoke", _UNREVOKED),
)
MEMBER_TABLE = StateTable("a consumer group member", MEMBER_TRANSITIONS, MEMBER_EVENTS)

# ConsumerGroupHeartbeat's special member epochs.
JOIN_EPOCH = 0
LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2  # a static member leaves for now and will be back within the session timeout
