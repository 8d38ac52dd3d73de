"""Partition reassignment (KIP-455): the rules for moving a partition's replicas.

A reassignment gives a partition *target* replicas. Until every target replica is in sync
the partition has both sets, as in KRaft's PartitionRecord: ``replicas`` is the target
followed by the old replicas that are leaving, ``adding_replicas`` the target's newcomers
and ``removing_replicas`` the old ones not in the target. Newcomers start as followers,
fetch from the leader and join the ISR when caught up; then the reassignment completes:
the replicas become the target and the leaving ones drop out of the ISR (their brokers
delete their logs). Cancelling reverts to the replicas from before. These are plain rules
over ``PartitionInfo``; the controller applies them and tells the brokers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection

from .errors import ErrorCode, KafkaError
from .metadata import PartitionInfo


def check_target(target: list[int], registered: Collection[int], current: list[int],
                 allow_replication_factor_change: bool) -> None:
    """INVALID_REPLICA_ASSIGNMENT or INVALID_REPLICATION_FACTOR for a target Kafka refuses."""
    if not target:
        raise KafkaError(ErrorCode.invalid_replica_assignment, "The target replica list is empty.")
    twice = sorted(b for b, n in Counter(target).items() if n > 1)
    if twice:
        raise KafkaError(ErrorCode.invalid_replica_assignment,
                         f"The target replicas name broker {twice[0]} more than once.")
    unknown = sorted(b for b in target if b not in registered)
    if unknown:
        raise KafkaError(ErrorCode.invalid_replica_assignment,
                         f"The target replicas include broker {unknown[0]}, but no such broker is registered.")
    if not allow_replication_factor_change and len(target) != len(current):
        raise KafkaError(ErrorCode.invalid_replication_factor,
                         f"The replication factor would change from {len(current)} to {len(target)}, "
                         "but allowReplicationFactorChange is false.")


def start(info: PartitionInfo, target: list[int]) -> bool:
    """Give ``info`` the target; False when there is nothing to move."""
    current = list(info.replicas)
    adding = [b for b in target if b not in current]
    removing = [b for b in current if b not in target]
    replicas = list(target) + removing
    if replicas == current and not adding and not removing:
        return False
    info.replicas, info.adding_replicas, info.removing_replicas = replicas, adding, removing
    info.isr = [b for b in info.isr if b in replicas]
    return True


def in_progress(info: PartitionInfo) -> bool:
    return bool(info.adding_replicas or info.removing_replicas)


def target(info: PartitionInfo) -> list[int]:
    return [b for b in info.replicas if b not in info.removing_replicas]


def ready(info: PartitionInfo) -> bool:
    """Every target replica is in the ISR: the reassignment may complete."""
    return all(b in info.isr for b in target(info))


def complete(info: PartitionInfo) -> list[int]:
    """Make the target the replicas; return the brokers whose replicas must go."""
    removed = list(info.removing_replicas)
    info.replicas = target(info)
    info.isr = [b for b in info.isr if b in info.replicas]
    info.adding_replicas, info.removing_replicas = [], []
    return removed


def revert(info: PartitionInfo, unclean_allowed: bool) -> list[int]:
    """Cancel: back to the original replicas; return the brokers whose new replicas must go.

    As in Kafka, a revert that leaves no original replica in sync would need an unclean
    election, so it is refused unless ``unclean.leader.election.enable`` allows one.
    """
    if not in_progress(info):
        raise KafkaError(ErrorCode.no_reassignment_in_progress,
                         "No reassignment is in progress for this partition.")
    dropped = list(info.adding_replicas)
    replicas = [b for b in info.replicas if b not in dropped]
    isr = [b for b in info.isr if b not in dropped]
    if not isr and not unclean_allowed:
        raise KafkaError(ErrorCode.invalid_replica_assignment,
                         "Cancelling would need an unclean leader election: no original replica is in sync.")
    info.replicas, info.isr = replicas, isr or replicas[:1]
    info.adding_replicas, info.removing_replicas = [], []
    return dropped
