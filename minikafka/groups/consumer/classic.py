"""Classic members of a consumer group (KIP-848's online migration): JoinGroup, SyncGroup,
Heartbeat and LeaveGroup answered by a consumer-protocol group.

A consumer that still speaks the classic protocol may join a group that the consumer
protocol holds, and a classic group's members stay on when it is upgraded. They know
nothing of epochs or server-side assignors, so the group speaks their language:

* **JoinGroup** is answered at once, without a barrier: the member's subscription (the
  embedded ConsumerProtocolSubscription) updates the group like a ConsumerGroupHeartbeat
  would, the member is reconciled toward its target, and the answer's generation is its
  member epoch. There is no leader: the assignment is the coordinator's.
* **SyncGroup** hands out the partitions the member may own now, encoded as a
  ConsumerProtocolAssignment, for the protocol (strategy) the member named first.
* **Heartbeat** checks the generation (ILLEGAL_GENERATION) and answers
  REBALANCE_IN_PROGRESS when the member must rejoin: the group epoch moved past its
  epoch, it has partitions to give up, or a partition it waits for is free now.
* **LeaveGroup** removes it; the others share its partitions.

Sans-I/O like ``ConsumerGroup``: functions take ``now`` (monotonic ms) and raise ``KafkaError``.
"""

from __future__ import annotations

from dataclasses import replace

from ...errors import ErrorCode, KafkaError
from .group import ConsumerGroup
from .member import ClassicMembership, ConsumerMember
from .states import MemberState
from ..embedded_protocol import encode_assignment, parse_subscription
from ..member import JoinRequest, JoinResult, MemberIdRequired, SyncResult, new_member_id

PROTOCOL_TYPE = "consumer"


def join(group: ConsumerGroup, req: JoinRequest, now: int) -> JoinResult:
    """A JoinGroup to a consumer group with members."""
    _check_protocols(group, req)
    member_id = req.member_id
    if not member_id:
        member_id = new_member_id(req.group_instance_id or req.client_id)
        if req.require_known_member_id and not req.group_instance_id:
            raise MemberIdRequired(member_id)
    old = group.members.get(member_id)
    if old is not None and old.classic is None:
        raise KafkaError(ErrorCode.unknown_member_id, f"Member {member_id} uses the consumer protocol, not JoinGroup.")
    if old is None and req.group_instance_id and req.group_instance_id in group.static:
        group.remove(group.static[req.group_instance_id])  # a restarted static member replaces its old id
    try:
        subscription = parse_subscription(dict(req.protocols)[req.protocols[0][0]])
    except ValueError as e:
        raise KafkaError(ErrorCode.inconsistent_group_protocol, str(e)) from None
    member = replace(
        old or ConsumerMember(member_id),
        instance_id=req.group_instance_id,
        rack_id=subscription.rack_id,
        client_id=req.client_id,
        client_host=req.client_host,
        rebalance_timeout_ms=req.rebalance_timeout_ms,
        subscribed_topic_names=tuple(sorted(set(subscription.topics))),
        classic=ClassicMembership(req.session_timeout_ms, tuple(req.protocols)),
    )
    member = group.update(old, member, subscription.owned, now)
    group.members[member_id] = member = replace(member, session_deadline=now + req.session_timeout_ms)
    return JoinResult(member_id, member.member_epoch, PROTOCOL_TYPE, _protocol(member), "", ())


def _check_protocols(group: ConsumerGroup, req: JoinRequest) -> None:
    """The consumer protocol type, and a strategy every classic member supports (Kafka's rule)."""
    names = {name for name, _ in req.protocols}
    if req.protocol_type != PROTOCOL_TYPE or not names:
        raise KafkaError(
            ErrorCode.inconsistent_group_protocol,
            f"Group {group.group_id} is a consumer group: a member must use protocol type "
            f"'consumer', not {req.protocol_type!r}.",
        )
    for m in group.members.values():
        if m.classic is not None and m.member_id != req.member_id and not names & {n for n, _ in m.classic.protocols}:
            raise KafkaError(
                ErrorCode.inconsistent_group_protocol,
                f"The member offers {sorted(names)}; member {m.member_id} of group {group.group_id} "
                f"offers none of them.",
            )


def _protocol(member: ConsumerMember) -> str:
    assert member.classic is not None
    return member.classic.protocol_name


def _classic(group: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerMember:
    member = group.members.get(member_id)
    if member is None or member.classic is None:
        raise KafkaError(
            ErrorCode.unknown_member_id,
            f"Group {group.group_id} has no classic member {member_id!r}; rejoin the group.",
        )
    if instance_id is not None and member.instance_id != instance_id:
        raise KafkaError(
            ErrorCode.fenced_instance_id, f"group.instance.id {instance_id!r} does not belong to member {member_id}."
        )
    return member


def _alive(group: ConsumerGroup, member: ConsumerMember, now: int) -> None:
    assert member.classic is not None
    group.members[member.member_id] = replace(member, session_deadline=now + member.classic.session_timeout_ms)


def _check_generation(member: ConsumerMember, generation_id: int) -> None:
    if generation_id != member.member_epoch:
        raise KafkaError(
            ErrorCode.illegal_generation,
            f"Generation {generation_id} is stale; member {member.member_id} is at {member.member_epoch}.",
        )


def sync(
    group: ConsumerGroup,
    member_id: str,
    instance_id: str | None,
    generation_id: int,
    now: int,
    protocol_type: str | None = None,
    protocol_name: str | None = None,
) -> SyncResult:
    """A SyncGroup: the member's current partitions, in the consumer protocol's encoding."""
    member = _classic(group, member_id, instance_id)
    _check_generation(member, generation_id)
    if (protocol_type and protocol_type != PROTOCOL_TYPE) or (protocol_name and protocol_name != _protocol(member)):
        raise KafkaError(
            ErrorCode.inconsistent_group_protocol,
            f"The member joined with {PROTOCOL_TYPE}/{_protocol(member)}, not {protocol_type}/{protocol_name}.",
        )
    _alive(group, member, now)
    assert member.classic is not None
    version = parse_subscription(member.classic.protocols[0][1]).version
    return SyncResult(encode_assignment(member.assigned, version), PROTOCOL_TYPE, _protocol(member))


def heartbeat(group: ConsumerGroup, member_id: str, instance_id: str | None, generation_id: int, now: int) -> None:
    """A Heartbeat: REBALANCE_IN_PROGRESS when the member has to rejoin to move toward its target."""
    member = _classic(group, member_id, instance_id)
    _check_generation(member, generation_id)
    _alive(group, member, now)
    if (
        member.member_epoch < group.group_epoch
        or member.state is MemberState.UNREVOKED_PARTITIONS
        or (member.state is MemberState.UNRELEASED_PARTITIONS and group.has_free_target(member))
    ):
        raise KafkaError(
            ErrorCode.rebalance_in_progress,
            f"Group {group.group_id} is at epoch {group.group_epoch}: rejoin for the new assignment.",
        )


def leave(group: ConsumerGroup, member_id: str, instance_id: str | None) -> None:
    """A LeaveGroup of one member (by member id, or by group.instance.id from v3)."""
    if instance_id is not None and not member_id:
        member_id = group.static.get(instance_id, "")
    _classic(group, member_id, instance_id)
    group.remove(member_id)
