"""The consumer-protocol groups (KIP-848) of one group coordinator, beside its classic groups.

Group ids are one namespace: a group is either classic (JoinGroup/SyncGroup) or
consumer (ConsumerGroupHeartbeat). An empty group of either kind becomes the other kind
when a member of the other protocol arrives, keeping its offsets. A group with members
may hold both kinds (``migration``, under ``group.consumer.migration.policy``): a
ConsumerGroupHeartbeat upgrades a classic group (``ConsumerGroups.upgrade``), a JoinGroup
joins a consumer group as a classic member (``consumer.classic``), and the
group turns classic again when only classic members remain.

Committed offsets stay where the classic coordinator keeps them (``__consumer_offsets``,
in the group's ``Group`` object); this module checks who may commit. What is persisted of
a consumer group is what offsets need to outlive a restart: Kafka's ConsumerGroupMetadata
record (key version 3: the group id; value: the group epoch), so after a restart the
group is still a consumer group at its epoch, its former members are told
UNKNOWN_MEMBER_ID and rejoin, and their committed offsets are where they left them.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ...clock import SYSTEM, Clock
from ...errors import ErrorCode, KafkaError
from .assignors import assignor_names
from .group import ConsumerGroup, ConsumerGroupSettings, Heartbeat, HeartbeatResult, Topics
from .states import JOIN_EPOCH
from . import migration

if TYPE_CHECKING:
    from ...config import BrokerConfig
    from ..group import Group

METADATA_KEY_VERSION, METADATA_VALUE_VERSION = 3, 0
Persist = Callable[[str, bytes, bytes | None], None]  # group id, key, value (None: a tombstone)


def metadata_key(group_id: str) -> bytes:
    data = group_id.encode()
    return struct.pack(">hh", METADATA_KEY_VERSION, len(data)) + data


def metadata_value(epoch: int) -> bytes:
    """ConsumerGroupMetadataValue v0 (a flexible version: an empty tagged-field section ends it)."""
    return struct.pack(">hi", METADATA_VALUE_VERSION, epoch) + b"\0"


def parse_metadata(key: bytes, value: bytes | None) -> tuple[str, int | None] | None:
    """(group id, epoch or None for a tombstone) of a ConsumerGroupMetadata record; None for other records."""
    (version,) = struct.unpack_from(">h", key, 0)
    if version != METADATA_KEY_VERSION:
        return None
    (n,) = struct.unpack_from(">h", key, 2)
    group_id = key[4 : 4 + n].decode()
    return group_id, None if value is None else struct.unpack_from(">i", value, 2)[0]


class ConsumerGroups:
    def __init__(self, settings: ConsumerGroupSettings, topics: Topics, persist: Persist, clock: Clock = SYSTEM):
        self.settings, self.topics, self.persist, self.clock = settings, topics, persist, clock
        self.groups: dict[str, ConsumerGroup] = {}

    def get(self, group_id: str) -> ConsumerGroup | None:
        return self.groups.get(group_id)

    def active(self, group_id: str) -> bool:
        """A consumer group with members (its id is not free for the classic protocol)."""
        group = self.groups.get(group_id)
        return group is not None and not group.is_empty

    def heartbeat(self, group_id: str, hb: Heartbeat, now: int) -> HeartbeatResult:
        if not group_id:
            raise KafkaError(ErrorCode.invalid_request, "GroupId can't be empty.")
        group = self.groups.get(group_id)
        if group is None:
            if hb.member_epoch != JOIN_EPOCH:
                raise KafkaError(ErrorCode.group_id_not_found, f"Consumer group {group_id} not found.")
            group = self._create(group_id)
        return group.heartbeat(hb, now)

    def upgrade(self, classic: Group, hb: Heartbeat, now: int) -> HeartbeatResult:
        """A ConsumerGroupHeartbeat to a classic group with members: the group becomes a consumer
        group holding them (``migration.upgrade``), once the newcomer's heartbeat is valid."""
        if not classic.group_id:
            raise KafkaError(ErrorCode.invalid_request, "GroupId can't be empty.")
        group = ConsumerGroup(classic.group_id, self.settings, self.topics, self.clock)
        migration.upgrade(classic, group)
        result = group.heartbeat(hb, now)  # a refused heartbeat leaves the classic group as it was
        group.on_epoch = self._persist_epoch
        self.groups[group.group_id] = group
        self._persist_epoch(group)
        classic.release_members()
        return result

    def _create(self, group_id: str, epoch: int = 0) -> ConsumerGroup:
        group = ConsumerGroup(group_id, self.settings, self.topics, self.clock)
        group.group_epoch = group.assignment_epoch = epoch
        group.on_epoch = self._persist_epoch
        self.groups[group_id] = group
        return group

    def _persist_epoch(self, group: ConsumerGroup) -> None:
        self.persist(group.group_id, metadata_key(group.group_id), metadata_value(group.group_epoch))

    def drop(self, group_id: str) -> None:
        """The group is deleted, or becomes classic: a tombstone for its record."""
        if self.groups.pop(group_id, None) is not None:
            self.persist(group_id, metadata_key(group_id), None)

    # -- replay of __consumer_offsets ------------------------------------------------------------
    def restore(self, key: bytes, value: bytes | None) -> str | None:
        """Apply one record while loading; the group id when it was a consumer group record."""
        parsed = parse_metadata(key, value)
        if parsed is None:
            return None
        group_id, epoch = parsed
        if epoch is None:
            self.groups.pop(group_id, None)
        else:
            self._create(group_id, epoch)
        return group_id

    def unload(self, owned_by_partition: Callable[[str], bool]) -> None:
        for group_id in [g for g in self.groups if owned_by_partition(g)]:
            del self.groups[group_id]

    # -- timers ----------------------------------------------------------------------------------
    def tick(self, now: int) -> None:
        for group in list(self.groups.values()):
            group.tick(now)

    def next_deadline(self) -> int | None:
        deadlines = [g.next_deadline() for g in self.groups.values()]
        return min((d for d in deadlines if d is not None), default=None)


def settings_from(config: BrokerConfig | Mapping[str, Any]) -> ConsumerGroupSettings:
    return ConsumerGroupSettings(config["group.consumer.session.timeout.ms"],
                                 config["group.consumer.heartbeat.interval.ms"],
                                 tuple(assignor_names(config["group.consumer.assignors"])))
