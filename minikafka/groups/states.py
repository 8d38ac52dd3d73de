"""The states of a consumer group and the events that move it, declared once as data.

This is the classic group membership protocol of Kafka's group coordinator (the one
behind JoinGroup/SyncGroup/Heartbeat, KIP-62 for the rebalance timeout, KIP-345 for
static members). A group is always in one of five states:

* **Empty**: no members; committed offsets may still be kept.
* **PreparingRebalance**: membership changed; the coordinator holds every JoinGroup
  until all known members have rejoined (or the rebalance timeout passed).
* **CompletingRebalance**: a new generation exists and its leader has the members'
  subscriptions; everyone waits for the leader's SyncGroup with the assignments.
* **Stable**: every member has its assignment and heartbeats.
* **Dead**: the group was deleted or its offsets expired; it is forgotten.

``TRANSITIONS`` lists every legal move as ``(from, event, to)``. ``Group`` asks
``next_state`` on every change, so a move that is not in the table is a bug that fails
loudly; the course and the slides draw the same rows as a diagram.
"""

from __future__ import annotations

from enum import Enum

from ..state_table import IllegalTransition, StateTable

__all__ = ["EVENTS", "TABLE", "TRANSITIONS", "GroupState", "IllegalTransition", "next_state"]


class GroupState(str, Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:  # Kafka's own spelling, as DescribeGroups reports it
        return self.value


EMPTY, PREPARING, COMPLETING, STABLE, DEAD = GroupState

# What happens to a group, in Kafka's words.
EVENTS: dict[str, str] = {
    "join": "a new member joins, or a member rejoins with changed subscriptions",
    "leave": "a member leaves (LeaveGroup), misses its session timeout or its rebalance",
    "all_joined": "every known member has rejoined (or the rebalance timeout passed): a new generation",
    "all_left": "the rebalance ended with no member left",
    "leader_synced": "the leader's SyncGroup brought the assignments",
    "static_rejoin": "a restarted static member (group.instance.id) takes its old place",
    "delete": "DeleteGroups, or every committed offset of the empty group expired",
}

TRANSITIONS: tuple[tuple[GroupState, str, GroupState], ...] = (
    (EMPTY, "join", PREPARING),
    (EMPTY, "delete", DEAD),
    (PREPARING, "join", PREPARING),
    (PREPARING, "leave", PREPARING),
    (PREPARING, "static_rejoin", PREPARING),
    (PREPARING, "all_joined", COMPLETING),
    (PREPARING, "all_left", EMPTY),
    (COMPLETING, "join", PREPARING),
    (COMPLETING, "leave", PREPARING),
    (COMPLETING, "static_rejoin", PREPARING),
    (COMPLETING, "leader_synced", STABLE),
    (STABLE, "join", PREPARING),
    (STABLE, "leave", PREPARING),
    (STABLE, "static_rejoin", STABLE),
)

TABLE = StateTable("a group", TRANSITIONS, EVENTS)
next_state = TABLE.next
