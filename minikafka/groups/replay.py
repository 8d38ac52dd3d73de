"""Rebuilding a coordinator's memory from ``__consumer_offsets``, as Kafka does on
becoming the leader of one of its partitions.

The records are applied in log order: the last commit of a partition wins, a
tombstone deletes, a group record restores the group's generation, leader and members
(so consumers keep heartbeating across a coordinator restart without a rebalance).
Transactional commits (KIP-98) count only once their transaction's COMMIT marker
follows; the ones still open are returned, to be completed by the transaction
coordinator later.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable, Iterable

from .. import records
from . import offsets
from .group import Group
from .member import Member
from .states import EMPTY, STABLE

log = logging.getLogger("minikafka.groups")

PendingTxnOffsets = dict[int, list]  # producer id -> [(group, topic, partition, CommittedOffset)]


OtherRecord = Callable[[bytes, bytes | None], None]


def replay(entries: Iterable, group_for: Callable[[str], Group], forget: Callable[[str], None],
           now: int, other: OtherRecord | None = None) -> PendingTxnOffsets:
    """Apply one partition's records; return the transactional offsets still pending.

    ``other`` gets the records that are neither offsets nor classic groups (key version
    3 and up: the consumer group protocol's, KIP-848), in log order.
    """
    pending: dict[int, list] = {}
    for entry in entries:
        if entry.marker is not None:
            done = pending.pop(entry.producer_id, [])
            for key, value in done if entry.marker == records.CONTROL_COMMIT else []:
                _apply_or_skip(key, value, group_for, forget, now, other)
        elif entry.transactional:
            pending.setdefault(entry.producer_id, []).append((entry.key, entry.value))
        elif entry.key is not None:
            _apply_or_skip(entry.key, entry.value, group_for, forget, now, other)
    out: PendingTxnOffsets = {}
    for pid, kv in pending.items():
        for key, value in kv:
            try:
                out.setdefault(pid, []).append(_txn_offset(key, value))
            except UNREADABLE as e:
                _skip(key, e)
    return out


# What a damaged or foreign record raises while being parsed.
UNREADABLE = (struct.error, ValueError, UnicodeDecodeError, IndexError, TypeError)


def _apply_or_skip(key: bytes, value: bytes | None, group_for: Callable[[str], Group],
                   forget: Callable[[str], None], now: int,
                   other: OtherRecord | None = None) -> None:
    """A record that cannot be read is logged and skipped: one bad record must not keep
    a coordinator (and so the broker) from loading every other group."""
    try:
        _apply(key, value, group_for, forget, now, other)
    except UNREADABLE as e:
        _skip(key, e)


def _skip(key: bytes, error: Exception) -> None:
    log.warning("skipping an unreadable record in %s (key %r): %s", offsets.TOPIC, key[:40], error)


def _txn_offset(key: bytes, value: bytes) -> tuple:
    _, (group_id, topic, partition) = offsets.parse_key(key)
    return group_id, topic, partition, offsets.parse_offset_value(value)


def _apply(key: bytes, value: bytes | None, group_for: Callable[[str], Group], forget: Callable[[str], None],
           now: int, other: OtherRecord | None = None) -> None:
    kind, fields = offsets.parse_key(key)
    if kind == "offset":
        group_id, topic, partition = fields
        if value is None:
            group_for(group_id).offsets.pop((topic, partition), None)
        else:
            group_for(group_id).offsets[(topic, partition)] = offsets.parse_offset_value(value)
    elif kind == "group" and value is None:
        forget(fields[0])
    elif kind == "group" and value is not None:
        restore(group_for(fields[0]), offsets.parse_group_value(value), now)
    elif kind == "unknown" and other is not None:
        other(key, value)


def snapshot(group: Group) -> offsets.GroupRecord:
    """What the group metadata record keeps of a group."""
    members = tuple((m.member_id, m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                     m.session_timeout_ms, m.metadata(group.protocol_name), m.assignment)
                    for m in group.members.values())
    return offsets.GroupRecord(group.protocol_type or "", group.generation_id, group.protocol_name,
                               group.leader_id, group.state_timestamp_ms, members)


def restore(group: Group, rec: offsets.GroupRecord, now: int) -> None:
    """Loading is not a rebalance: the group resumes in the state its record describes
    (Stable with its members, or Empty), without going through the transition table."""
    group.protocol_type, group.generation_id = rec.protocol_type or None, rec.generation_id
    group.protocol_name, group.leader_id = rec.protocol_name, rec.leader_id
    if rec.state_timestamp_ms > 0:
        group.state_timestamp_ms = rec.state_timestamp_ms
    group.members, group.static = {}, {}
    for member_id, instance_id, client_id, host, rebalance_ms, session_ms, subscription, assignment in rec.members:
        member = Member(member_id, instance_id, client_id, host, session_ms, rebalance_ms,
                        ((rec.protocol_name or "", subscription),), assignment)
        member.touch(now)  # a fresh session: the member has had no chance to heartbeat here yet
        group.members[member_id] = member
        if instance_id:
            group.static[instance_id] = member_id
    group.state = STABLE if group.members else EMPTY
