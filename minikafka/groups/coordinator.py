"""The group coordinator: consumer groups and their committed offsets, on one broker.

Every group belongs to one partition of ``__consumer_offsets`` (see ``offsets``); the
broker leading that partition coordinates the group, the others answer
NOT_COORDINATOR, and FindCoordinator tells clients which broker that is. Membership
(JoinGroup, SyncGroup, Heartbeat, LeaveGroup) is the business of each ``Group``; this
module routes requests to groups, writes commits and group metadata to the internal
topic, rebuilds both by replaying the topic when it becomes leader, and runs the timers:
session and rebalance deadlines, and ``offsets.retention.minutes`` (offsets of a
group that has been empty that long are deleted with tombstones, KIP-211).

``group.initial.rebalance.delay.ms`` is Kafka's 3000: a new group waits that long for
more members before its first rebalance. The course's embedded cluster sets 0 (see
``kafka_course.connection.TEACHING_DEFAULTS``), so the first consumer gets its partitions
at once and each newcomer causes one visible rebalance.

Transactional offset commits (KIP-98) stay pending per producer until the transaction
coordinator writes the commit or abort marker and calls ``complete_transaction``.

Time is the injected ``clock`` (``minikafka.clock``; the broker gives ``SYSTEM``): each
request reads its monotonic milliseconds once and hands them to the group as ``now``, so
session, rebalance and sync deadlines are integer ms on that clock; offset retention
compares commit timestamps with its wall milliseconds. A test gives a ``ManualClock`` and
calls ``tick`` itself: a session then expires at exactly ``session.timeout.ms``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import asyncio
import logging
from ..clock import SYSTEM, Clock
from ..errors import ErrorCode, KafkaError
from .consumer import classic as classic_members
from . import offsets, replay
from .consumer import migration
from .consumer.group import ConsumerGroup, Heartbeat, HeartbeatResult
from .consumer.coordinator import ConsumerGroups, settings_from
from .group import Group, GroupSettings
from .member import JoinRequest, JoinResult, SyncResult
from .offsets import CommittedOffset
from .states import EMPTY, STABLE, GroupState

if TYPE_CHECKING:
    from ..config import BrokerConfig
    from ..replica.partition import Partition
    from .offsets_topic import MemoryOffsetsTopic, OffsetsTopic

log = logging.getLogger("minikafka.groups")

MAX_METADATA_BYTES = 4096  # offset.metadata.max.bytes
MAX_IDLE_MS = 30_000  # the timer task wakes at least this often to notice leadership changes
_STORE_ERRORS = {  # an append error as the error an OffsetCommit answers (as Kafka maps them)
    ErrorCode.not_leader_or_follower: ErrorCode.not_coordinator,
    ErrorCode.message_too_large: ErrorCode.invalid_commit_offset_size,
    ErrorCode.record_list_too_large: ErrorCode.invalid_commit_offset_size,
}
TopicPartitionOffset = tuple[str, int, CommittedOffset]


class GroupCoordinator:
    def __init__(self, node_id: int, config: BrokerConfig | Mapping[str, Any], topic: OffsetsTopic | MemoryOffsetsTopic,
                 clock: Clock = SYSTEM):
        self.node_id, self.config, self.topic, self.clock = node_id, config, topic, clock
        self.settings = GroupSettings(config["group.min.session.timeout.ms"], config["group.max.session.timeout.ms"],
                                      config["group.initial.rebalance.delay.ms"])
        self.groups: dict[str, Group] = {}
        self.loaded: set[int] = set()  # __consumer_offsets partitions replayed into memory
        self.txn_offsets: dict[int, dict[int, list]] = {}  # partition -> producer id -> [(group, offset)]
        self._alarm: asyncio.Future | None = None  # the timer task sleeps on it; requests ring it
        self._wake_at: int | None = None  # when the timer task plans to wake (None: awake, before the first sleep)
        self.consumer_groups = ConsumerGroups(settings_from(config), self._partition_counts, self._persist, clock)
        self.policy = migration.MigrationPolicy(config["group.consumer.migration.policy"])

    def _now(self) -> int:
        """Monotonic milliseconds on the injected clock: what every deadline is measured on."""
        return self.clock.monotonic_ms()

    def load_led_partitions(self) -> None:
        """At start-up: replay the __consumer_offsets partitions this broker leads."""
        if self.topic.exists():
            for index in range(self.topic.num_partitions):
                if self.topic.leader(index) == self.node_id:
                    self.load(index)

    # -- placement ------------------------------------------------------------------------
    def ensure_offsets_topic(self) -> None:
        self.topic.ensure()

    def partition_of(self, group_id: str) -> int:
        return offsets.partition_for(group_id, self.topic.num_partitions)

    def coordinator_id(self, group_id: str) -> int:
        """FindCoordinator: the leader of the group's partition (-1 while it has none)."""
        self.topic.ensure()
        return self.topic.leader(self.partition_of(group_id))

    def _owned(self, group_id: str) -> int:
        """The group's partition, if this broker leads it; else NOT_COORDINATOR."""
        self.topic.ensure()
        index = self.partition_of(group_id)
        leader = self.topic.leader(index)
        if leader != self.node_id:
            self._unload(index)
            code = ErrorCode.not_coordinator if leader >= 0 else ErrorCode.coordinator_not_available
            raise KafkaError(code, f"Broker {self.node_id} is not the coordinator of group {group_id!r}.")
        if index not in self.loaded:
            self.load(index)
        return index

    def _group(self, group_id: str) -> Group:
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = Group(group_id, self.settings, self.clock)
            group.on_change = self._on_group_change
        return group

    # -- membership -------------------------------------------------------------------------
    async def join(self, group_id: str, req: JoinRequest) -> JoinResult:
        self._owned(group_id)
        if not group_id:
            raise KafkaError(ErrorCode.invalid_group_id, "A group id cannot be empty.")
        consumer = self._consumer_with_members(group_id)
        if consumer is not None:  # a classic member joins a consumer group (KIP-848's online migration)
            self._group(group_id).check_join(req)
            result = classic_members.join(consumer, req, self._now())
            self._ring()
            return result
        self.consumer_groups.drop(group_id)
        fut = self._group(group_id).join(req, self._now())
        self._ring()  # deadlines changed
        return await fut

    async def sync(self, group_id: str, member_id: str, instance_id: str | None, generation_id: int,
                   assignments: dict[str, bytes], protocol_type: str | None = None,
                   protocol_name: str | None = None) -> SyncResult:
        consumer = self._consumer_with_members(group_id)
        if consumer is not None:
            return classic_members.sync(consumer, member_id, instance_id, generation_id, self._now(), protocol_type,
                                        protocol_name)
        group = self._existing(group_id)
        fut = group.sync(member_id, instance_id, generation_id, assignments, self._now(), protocol_type, protocol_name)
        self._ring()
        return await fut

    def heartbeat(self, group_id: str, member_id: str, instance_id: str | None, generation_id: int) -> None:
        consumer = self._consumer_with_members(group_id)
        if consumer is not None:
            classic_members.heartbeat(consumer, member_id, instance_id, generation_id, self._now())
            return
        self._existing(group_id).heartbeat(member_id, instance_id, generation_id, self._now())

    def leave(self, group_id: str, members: list[tuple[str, str | None]]) -> list[ErrorCode]:
        """LeaveGroup: one error code per leaving member."""
        self._owned(group_id)
        consumer = self._consumer_with_members(group_id)
        group = self.groups.get(group_id)
        if group is None:
            return [ErrorCode.unknown_member_id] * len(members)
        out = []
        for member_id, instance_id in members:
            try:
                if consumer is not None:
                    classic_members.leave(consumer, member_id, instance_id)
                else:
                    group.leave(member_id, instance_id, self._now())
                out.append(ErrorCode.none)
            except KafkaError as e:
                out.append(e.code)
        self._maybe_downgrade(group_id)
        self._ring()
        return out

    def _consumer_with_members(self, group_id: str) -> ConsumerGroup | None:
        """The consumer group of this id, if it has members: it answers classic members too."""
        self._owned(group_id)
        consumer = self.consumer_groups.get(group_id)
        return consumer if consumer is not None and not consumer.is_empty else None

    def _maybe_downgrade(self, group_id: str) -> None:
        """Only classic members left in a consumer group: it becomes classic, if the policy allows."""
        consumer = self.consumer_groups.get(group_id)
        if consumer is not None and migration.downgrade_due(self.policy, consumer):
            log.info("group %r: downgraded to a classic group (%d members)", group_id, len(consumer.members))
            migration.downgrade(consumer, self._group(group_id), self._now())
            self.consumer_groups.drop(group_id)

    def _existing(self, group_id: str) -> Group:
        self._owned(group_id)
        group = self.groups.get(group_id)
        if group is None:
            raise KafkaError(ErrorCode.unknown_member_id, f"Group {group_id!r} has no members; join it first.")
        return group

    def _on_group_change(self, group: Group, old: GroupState, event: str) -> None:
        """Write the group's metadata when a generation settles (Stable) or ends (Empty)."""
        log.debug("group %r: %s --%s--> %s (generation %d, %d members)", group.group_id, old, event,
                  group.state, group.generation_id, len(group.members))
        if event in ("leader_synced", "all_left") or (event == "static_rejoin" and group.state is STABLE):
            self._append(group.group_id, [(offsets.group_key(group.group_id),
                                           offsets.group_value(replay.snapshot(group)))])

    # -- committed offsets --------------------------------------------------------------------
    async def commit(self, group_id: str, member_id: str, instance_id: str | None, generation_id: int,
                     commits: list[TopicPartitionOffset], api_version: int = 9) -> dict[tuple[str, int], ErrorCode]:
        """OffsetCommit: check the member (generation, or member epoch for a consumer-protocol
        group), write the records, then make them visible."""
        index = self._owned(group_id)
        group = self._committer(group_id, member_id, instance_id, generation_id, api_version)
        results, accepted = self._validate(commits)
        if accepted:
            await self._write(index, [(offsets.offset_key(group_id, t, p), offsets.offset_value(c)) for t, p,
                                      c in accepted])
            group.offsets.update({(t, p): c for t, p, c in accepted})
        return results

    def _committer(self, group_id: str, member_id: str, instance_id: str | None, generation_id: int,
                   api_version: int = 9) -> Group:
        if group_id not in self.groups and group_id not in self.consumer_groups.groups and generation_id >= 0:
            raise KafkaError(ErrorCode.illegal_generation, f"Group {group_id!r} has no generation {generation_id}.")
        group = self._group(group_id)
        consumer = self.consumer_groups.get(group_id)
        if consumer is not None:
            consumer.check_commit(member_id, instance_id, generation_id, api_version)
        else:
            group.check_commit(member_id, instance_id, generation_id, self._now())
        return group

    def _validate(self, commits: list[TopicPartitionOffset]
                  ) -> tuple[dict[tuple[str, int], ErrorCode], list[TopicPartitionOffset]]:
        results, accepted = {}, []
        for topic, partition, c in commits:
            if len(c.metadata.encode()) > MAX_METADATA_BYTES:
                results[(topic, partition)] = ErrorCode.offset_metadata_too_large
            elif not self.topic.topic_exists(topic):
                results[(topic, partition)] = ErrorCode.unknown_topic_or_partition
            else:
                results[(topic, partition)] = ErrorCode.none
                accepted.append((topic, partition, c))
        return results, accepted

    async def _write(self, index: int, entries: list, **txn: Any) -> None:
        try:
            end = self.topic.append(index, entries, **txn)
            await self.topic.replicated(index, end)
        except KafkaError as e:
            raise KafkaError(_STORE_ERRORS.get(e.code, ErrorCode.coordinator_not_available), e.message) from None

    def _append(self, group_id: str, entries: list) -> None:
        """Write without waiting for followers (group metadata, tombstones, expiry)."""
        try:
            self.topic.append(self.partition_of(group_id), entries)
        except KafkaError as e:
            log.warning("could not write group %r to %s: %s", group_id, offsets.TOPIC, e)

    def fetch(self, group_id: str, partitions: list[tuple[str, int]] | None, require_stable: bool = False,
              member_id: str | None = None, member_epoch: int = -1
              ) -> list[tuple[str, int, CommittedOffset | None, ErrorCode]]:
        """OffsetFetch: (topic, partition, committed offset or None, error) for each partition asked,
        or for every committed one when ``partitions`` is None. v9 names the member of a
        consumer-protocol group, whose epoch must be current (STALE_MEMBER_EPOCH)."""
        index = self._owned(group_id)
        consumer = self.consumer_groups.get(group_id)
        if consumer is not None:
            consumer.check_fetch(member_id, member_epoch)
        group = self.groups.get(group_id)
        committed = group.offsets if group else {}
        wanted = sorted(committed) if partitions is None else partitions
        unstable = self._pending_txn(index, group_id) if require_stable else set()
        return [(t, p, committed.get((t, p)),
                 ErrorCode.unstable_offset_commit if (t, p) in unstable else ErrorCode.none) for t, p in wanted]

    # -- transactional offsets (TxnOffsetCommit) -----------------------------------------------
    async def commit_transactional(self, group_id: str, producer_id: int, producer_epoch: int, member_id: str,
                                   instance_id: str | None, generation_id: int,
                                   commits: list[TopicPartitionOffset]) -> dict[tuple[str, int], ErrorCode]:
        """Offsets a transaction commits: written now, visible once its commit marker is."""
        index = self._owned(group_id)
        group = self._group(group_id)
        consumer = self.consumer_groups.get(group_id)
        if consumer is not None and (member_id or generation_id >= 0):
            consumer.check_commit(member_id, instance_id, generation_id, transactional=True)
        elif member_id or generation_id >= 0:
            group.check_commit(member_id, instance_id, generation_id, self._now())
        results, accepted = self._validate(commits)
        if accepted:
            entries = [(offsets.offset_key(group_id, t, p), offsets.offset_value(c)) for t, p, c in accepted]
            await self._write(index, entries, producer_id=producer_id, producer_epoch=producer_epoch,
                              transactional=True)
            pending = self.txn_offsets.setdefault(index, {}).setdefault(producer_id, [])
            pending += [(group_id, t, p, c) for t, p, c in accepted]
        return results

    def complete_transaction(self, index: int, producer_id: int, commit: bool) -> None:
        """The marker of a transaction is written: apply its offsets, or drop them."""
        for group_id, topic, partition, c in self.txn_offsets.get(index, {}).pop(producer_id, []):
            if commit:
                self._group(group_id).offsets[(topic, partition)] = c

    def _pending_txn(self, index: int, group_id: str) -> set[tuple[str, int]]:
        return {(t, p) for pending in self.txn_offsets.get(index, {}).values() for g, t, p,
                _ in pending if g == group_id}

    # -- admin: ListGroups, DescribeGroups, DeleteGroups, OffsetDelete --------------------------
    def list_groups(self, states: set[str] | None = None, types: set[str] | None = None) -> list:
        """Groups this broker coordinates, classic or consumer (KIP-848); ``states`` and ``types``
        filter by name, case-insensitively."""
        wanted, kinds = {s.lower() for s in states or ()}, {t.lower() for t in types or ()}
        found: dict[str, Group | ConsumerGroup] = {**self.groups, **self.consumer_groups.groups}
        return [g for g in found.values()
                if self._leads(g.group_id) and (not wanted or str(g.state).lower() in wanted)
                and (not kinds or g.group_type in kinds)]

    def _leads(self, group_id: str) -> bool:
        return self.topic.exists() and self.topic.leader(self.partition_of(group_id)) == self.node_id

    def describe(self, group_id: str) -> Group | None:
        """DescribeGroups sees classic groups only: a consumer-protocol group is not one (None)."""
        self._owned(group_id)
        return None if group_id in self.consumer_groups.groups else self.groups.get(group_id)

    # -- the consumer group protocol (KIP-848) ---------------------------------------------------
    def consumer_heartbeat(self, group_id: str, hb: Heartbeat) -> HeartbeatResult:
        """ConsumerGroupHeartbeat (see ``consumer.group``)."""
        self._owned(group_id)
        classic = self.groups.get(group_id)
        if classic is not None and classic.members and group_id not in self.consumer_groups.groups:
            refusal = migration.upgrade_refusal(self.policy, classic)
            if refusal is not None:
                raise KafkaError(ErrorCode.group_id_not_found, refusal)
            result = self.consumer_groups.upgrade(classic, hb, self._now())
            log.info("group %r: upgraded to a consumer group", group_id)
        else:
            result = self.consumer_groups.heartbeat(group_id, hb, self._now())
        self._maybe_downgrade(group_id)
        group = self.consumer_groups.groups.get(group_id)
        self._ring(group.next_deadline() if group is not None else None)  # session and rebalance deadlines moved
        return result

    def consumer_describe(self, group_id: str) -> ConsumerGroup:
        """ConsumerGroupDescribe: the consumer-protocol group, or GROUP_ID_NOT_FOUND."""
        self._owned(group_id)
        group = self.consumer_groups.get(group_id)
        if group is None:
            kind = "a classic group" if group_id in self.groups else "not found"
            raise KafkaError(ErrorCode.group_id_not_found, f"Group {group_id} is {kind}, not a consumer group.")
        return group

    def _partition_counts(self) -> dict[str, int]:
        return self.topic.partition_counts()

    def _persist(self, group_id: str, key: bytes, value: bytes | None) -> None:
        self._append(group_id, [(key, value)])

    def _restore_other(self, key: bytes, value: bytes | None) -> None:
        """Replay of a record that is not classic: a consumer group's takes its id from the classic side."""
        group_id = self.consumer_groups.restore(key, value)
        holder = self.groups.get(group_id) if group_id is not None and value is not None else None
        if holder is not None:
            holder.members, holder.static, holder.state = {}, {}, EMPTY

    def delete_group(self, group_id: str) -> None:
        """DeleteGroups of one group: only an Empty group; tombstones for it and its offsets."""
        self._owned(group_id)
        consumer = self.consumer_groups.get(group_id)
        group = self.groups.get(group_id) or (self._group(group_id) if consumer is not None else None)
        if group is None:
            raise KafkaError(ErrorCode.group_id_not_found, f"There is no group {group_id!r}.")
        members = len(consumer.members) if consumer is not None else len(group.members)
        if members or not group.is_empty:
            raise KafkaError(ErrorCode.non_empty_group, f"Group {group_id!r} has {members} active member(s).")
        self.consumer_groups.drop(group_id)
        self._drop(group)

    def _drop(self, group: Group) -> None:
        group.mark_dead()
        del self.groups[group.group_id]
        tombstones = [(offsets.offset_key(group.group_id, t, p), None) for t, p in sorted(group.offsets)]
        self._append(group.group_id, [*tombstones, (offsets.group_key(group.group_id), None)])

    def delete_offsets(self, group_id: str, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], ErrorCode]:
        """OffsetDelete (KIP-496): refused for topics the live group still subscribes to."""
        self._owned(group_id)
        group = self.groups.get(group_id)
        if group is None:
            raise KafkaError(ErrorCode.group_id_not_found, f"There is no group {group_id!r}.")
        if not group.is_empty and group.protocol_type != "consumer":
            raise KafkaError(ErrorCode.non_empty_group)
        consumer = self.consumer_groups.get(group_id)
        subscribed = consumer.subscribed_topics() if consumer is not None else group.subscribed_topics()
        results = {tp: ErrorCode.group_subscribed_to_topic if tp[0] in subscribed else ErrorCode.none
                   for tp in partitions}
        gone = [tp for tp, code in results.items() if code == ErrorCode.none and tp in group.offsets]
        for tp in gone:
            del group.offsets[tp]
        if gone:
            self._append(group_id, [(offsets.offset_key(group_id, t, p), None) for t, p in gone])
        return results

    # -- offsets retention ------------------------------------------------------------------------
    def expire_offsets(self, now: int | None = None) -> int:
        """Delete offsets past ``offsets.retention.minutes``; forget empty groups left with none."""
        now = self.clock.wall_ms() if now is None else now
        retention = self.config["offsets.retention.minutes"] * 60_000
        expired_count = 0
        for group in [g for g in self.groups.values()
                      if self._leads(g.group_id) and not self.consumer_groups.active(g.group_id)]:
            expired = [tp for tp, c in group.offsets.items() if self._expired(group, tp, c, now, retention)]
            for tp in expired:
                del group.offsets[tp]
            if expired:
                self._append(group.group_id, [(offsets.offset_key(group.group_id, t, p), None) for t, p in expired])
            if group.is_empty and not group.offsets and not group.pending:
                self.consumer_groups.drop(group.group_id)
                self._drop(group)
            expired_count += len(expired)
        return expired_count

    @staticmethod
    def _expired(group: Group, tp: tuple[str, int], c: CommittedOffset, now: int, retention: int) -> bool:
        if group.is_empty:  # KIP-211: the clock starts when the group became empty
            since = max(c.commit_timestamp_ms,
                        group.state_timestamp_ms) if group.protocol_type else c.commit_timestamp_ms
            return now - since >= retention
        if group.state is STABLE and group.protocol_type == "consumer":  # a topic the group stopped reading
            return tp[0] not in group.subscribed_topics() and now - c.commit_timestamp_ms >= retention
        return False

    # -- loading: replay a partition of __consumer_offsets ---------------------------------------
    def load(self, index: int) -> None:
        """Replay one partition of __consumer_offsets into memory (on becoming its leader)."""
        self.txn_offsets[index] = replay.replay(self.topic.read(index), self._group, self._forget, self._now(),
                                                self._restore_other)
        self.loaded.add(index)

    def _forget(self, group_id: str) -> None:
        self.groups.pop(group_id, None)

    def _unload(self, index: int) -> None:
        """Another broker leads this partition now: forget its groups (their members will find the new one)."""
        if index not in self.loaded:
            return
        self.loaded.discard(index)
        self.txn_offsets.pop(index, None)
        for group in [g for g in self.groups.values() if self.partition_of(g.group_id) == index]:
            group.fail_all(ErrorCode.not_coordinator)
            del self.groups[group.group_id]
        self.consumer_groups.unload(lambda group_id: self.partition_of(group_id) == index)

    def on_become_leader(self, part: Partition) -> None:
        """Broker hook: this broker now leads ``part``; a __consumer_offsets partition is replayed."""
        if part.topic == offsets.TOPIC:
            self._unload(part.index)
            self.load(part.index)

    # -- timers -----------------------------------------------------------------------------------
    def tick(self, now: int | None = None) -> None:
        """Apply every deadline passed at ``now`` (monotonic ms; the clock's, when not given)."""
        now = self._now() if now is None else now
        for group in list(self.groups.values()):
            group.tick(now)
        self.consumer_groups.tick(now)
        for group_id in list(self.consumer_groups.groups):
            self._maybe_downgrade(group_id)

    def next_deadline(self) -> int | None:
        deadlines = [g.next_deadline() for g in self.groups.values()] + [self.consumer_groups.next_deadline()]
        return min((d for d in deadlines if d is not None), default=None)

    async def run(self) -> None:
        """Wake at the next deadline (or when a request changed them) and apply it."""
        check_every = min(600_000, self.config["offsets.retention.minutes"] * 6_000)  # a tenth of the retention
        next_expiry = self._now() + check_every
        while True:
            now = self._now()
            try:
                self.tick(now)
                self._check_leadership()
                if now >= next_expiry:
                    self.expire_offsets()
                    next_expiry = now + check_every
            except Exception:  # a bug in one group must not stop every group's timers
                log.exception("group coordinator timer failed")
            deadline = self.next_deadline()
            wake_at = min(now + MAX_IDLE_MS if deadline is None else deadline, next_expiry, now + MAX_IDLE_MS)
            await self._sleep_until(wake_at)

    async def _sleep_until(self, wake_at: int) -> None:
        loop = asyncio.get_running_loop()
        self._alarm = loop.create_future()
        self._wake_at = wake_at  # the deadline itself: a group whose deadline is this one need not ring
        timer = loop.call_later((max(0, wake_at - self._now()) + 1) / 1000, self._ring)
        try:
            await self._alarm
        finally:
            timer.cancel()

    def _ring(self, deadline: int | None = None) -> None:
        """Deadlines may have changed: let the timer task recompute when to wake. Given the one
        deadline that changed, only if it comes before the wake already planned: a heartbeat
        pushes its member's deadline later, and recomputing every group's deadlines for each
        heartbeat is the coordinator's largest cost in a room of a hundred learners."""
        if deadline is not None and self._wake_at is not None and deadline >= self._wake_at:
            return
        if self._alarm is not None and not self._alarm.done():
            self._alarm.set_result(None)

    def _check_leadership(self) -> None:
        for index in [i for i in self.loaded if self.topic.leader(i) != self.node_id]:
            self._unload(index)

