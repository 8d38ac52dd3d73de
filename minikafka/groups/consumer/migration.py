"""Online migration between the classic and the consumer group protocols (KIP-848).

A group id names one group, classic (JoinGroup/SyncGroup) or consumer
(ConsumerGroupHeartbeat). Moving a running application from one protocol to the other
one consumer at a time needs groups that hold both kinds of member, and Kafka converts
a group with members as they come and go, as ``group.consumer.migration.policy`` allows:

* **upgrade**: a ConsumerGroupHeartbeat joins a classic group that has members (and uses
  the ``consumer`` protocol type). The group becomes a consumer group at the classic
  generation as its epoch; each classic member stays, as a classic member of the consumer
  group, with the partitions its leader gave it as its current and target assignment.
  Their JoinGroup and SyncGroup waiting for the old rebalance are answered
  REBALANCE_IN_PROGRESS; the newcomer then moves the group epoch and the server-side
  assignor shares the partitions (see ``consumer.classic``).
* **downgrade**: the last consumer-protocol member leaves (or is fenced) and only classic
  members remain. The group becomes classic again at its epoch as generation, each member
  keeping its partitions, and a rebalance starts at once: their Heartbeats answer
  REBALANCE_IN_PROGRESS, they rejoin, and a leader assigns as the classic protocol does.

``bidirectional`` (Kafka's default) allows both, ``upgrade`` and ``downgrade`` one each,
``disabled`` neither: a refused upgrade answers GROUP_ID_NOT_FOUND ("not a consumer
group"), and a refused downgrade leaves a consumer group whose members are all classic.
A classic member may always join a consumer group that has members, and an empty group
changes protocol whatever the policy says. Committed offsets are the group id's: they
stay through every conversion.
"""

from __future__ import annotations

from enum import Enum

from .group import ConsumerGroup
from .member import ClassicMembership, ConsumerMember
from ..embedded_protocol import encode_assignment, parse_assignment, parse_subscription
from ..group import Group
from ..member import Member


class MigrationPolicy(str, Enum):
    BIDIRECTIONAL = "bidirectional"
    UPGRADE = "upgrade"
    DOWNGRADE = "downgrade"
    DISABLED = "disabled"

    @property
    def upgrades(self) -> bool:
        return self in (MigrationPolicy.BIDIRECTIONAL, MigrationPolicy.UPGRADE)

    @property
    def downgrades(self) -> bool:
        return self in (MigrationPolicy.BIDIRECTIONAL, MigrationPolicy.DOWNGRADE)


def upgrade_refusal(policy: MigrationPolicy, classic: Group) -> str | None:
    """Why this classic group with members cannot become a consumer group (None: it can)."""
    if not policy.upgrades:
        return (
            f"Group {classic.group_id} is a classic group with {len(classic.members)} member(s) and "
            f"group.consumer.migration.policy={policy.value} does not allow upgrading it."
        )
    if classic.protocol_type != "consumer":
        return (
            f"Group {classic.group_id} is a classic group of protocol type {classic.protocol_type!r}, "
            "not 'consumer': it cannot become a consumer group."
        )
    for m in classic.members.values():
        try:
            parse_subscription(_metadata(classic, m))
        except ValueError:
            return f"Group {classic.group_id}: member {m.member_id}'s subscription is malformed."
    return None


def _metadata(classic: Group, member: Member) -> bytes:
    return member.metadata(classic.protocol_name) if classic.protocol_name else member.protocols[0][1]


def upgrade(classic: Group, group: ConsumerGroup) -> None:
    """Fill the new consumer group ``group`` with the classic group's members, at its generation."""
    epoch = max(classic.generation_id, group.group_epoch)
    group.group_epoch = group.assignment_epoch = epoch
    for m in classic.members.values():
        subscription = parse_subscription(_metadata(classic, m))
        preferred = [(n, meta) for n, meta in m.protocols if n == classic.protocol_name]
        protocols = tuple(preferred + [(n, meta) for n, meta in m.protocols if n != classic.protocol_name])
        assigned = parse_assignment(m.assignment)
        group.members[m.member_id] = ConsumerMember(
            m.member_id,
            m.group_instance_id,
            subscription.rack_id,
            m.client_id,
            m.client_host,
            m.rebalance_timeout_ms,
            tuple(sorted(set(subscription.topics))),
            member_epoch=epoch,
            previous_member_epoch=epoch,
            assigned=assigned,
            session_deadline=m.session_deadline,
            classic=ClassicMembership(m.session_timeout_ms, protocols),
        )
        group.target[m.member_id] = assigned
        if m.group_instance_id:
            group.static[m.group_instance_id] = m.member_id
    group.subscription_metadata = group.layout()


def downgrade_due(policy: MigrationPolicy, group: ConsumerGroup) -> bool:
    """Only classic members are left and the policy lets the group become classic again."""
    return policy.downgrades and bool(group.members) and all(m.classic is not None for m in group.members.values())


def downgrade(group: ConsumerGroup, classic: Group, now: int) -> None:
    """Make ``classic`` (the group id's classic side, which keeps its offsets) hold the consumer
    group's members, at its epoch as generation, and start a rebalance."""
    members = []
    for m in group.members.values():
        assert m.classic is not None
        member = Member(
            m.member_id,
            m.instance_id,
            m.client_id,
            m.client_host,
            m.classic.session_timeout_ms,
            m.rebalance_timeout_ms,
            protocols=m.classic.protocols,
            assignment=encode_assignment(m.assigned, parse_subscription(m.classic.protocols[0][1]).version),
        )
        member.session_deadline = m.session_deadline
        members.append(member)
    classic.adopt(members, group.group_epoch, now)
