"""The share group coordinator on one broker: ShareGroupHeartbeat and ShareGroupDescribe (KIP-932).

A share group is coordinated, like a consumer group, by the leader of its partition of
``__consumer_offsets`` (FindCoordinator answers the same broker for both); other
brokers answer NOT_COORDINATOR. One group id names one group of one type: a share
heartbeat for the id of a consumer group gets GROUP_ID_NOT_FOUND ("not a share
group"), as in Kafka, and the classic handlers ask ``is_share_group`` to refuse the
other way round. Membership and assignment are ``group``'s business; this module
routes heartbeats, applies the group's settings (``configs``), records each group and
its epoch in ``__share_group_state`` (so the group is still listed after a restart),
and expires members whose session timed out.

Time is the injected ``minikafka.clock.Clock`` (the broker's ``SYSTEM``): a member's
session deadline is its last heartbeat's monotonic milliseconds plus the group's
``share.session.timeout.ms``; a test with a ``ManualClock`` calls ``expire_members``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..clock import SYSTEM, Clock
from ..config import BrokerConfig
from ..errors import ErrorCode, KafkaError
from ..metadata import ClusterMetadata
from .alarm import Alarm
from .configs import GroupConfig
from .group import LEAVE_EPOCH, Heartbeat, ShareGroup, ShareMember
from .states import RecordState
from .state_topic import StateStore, group_key

log = logging.getLogger("minikafka.share")
MAX_IDLE_MS = 5_000


class ShareGroupCoordinator:
    def __init__(self, node_id: int, config: BrokerConfig, metadata: ClusterMetadata, store: StateStore,
                 coordinator_of: Callable[[str], int], other_group_type: Callable[[str], str | None],
                 clock: Clock = SYSTEM):
        self.node_id, self.config, self.metadata, self.store = node_id, config, metadata, store
        self.coordinator_of, self.other_group_type, self.clock = coordinator_of, other_group_type, clock
        self.groups: dict[str, ShareGroup] = {}
        self.alarm = Alarm()
        self._loaded = False

    def group_config(self, group_id: str) -> GroupConfig:
        return GroupConfig(self.config, self.metadata.group_configs.get(group_id))

    def _load(self) -> None:
        """Once: the share groups recorded before a restart (members rejoin by themselves)."""
        if self._loaded:
            return
        try:
            recorded = self.store.groups()
        except KafkaError as e:  # the state topic has no leader yet: try again on the next request
            log.info("share groups not loaded yet: %s", e)
            return
        self._loaded = True
        for group_id, value in recorded.items():
            self.groups.setdefault(group_id, self._new(group_id, int(value.get("group_epoch", 0))))

    def _new(self, group_id: str, epoch: int = 0) -> ShareGroup:
        group = ShareGroup(group_id, epoch)
        group.on_epoch = self._record
        return group

    def _record(self, group: ShareGroup) -> None:
        try:
            self.store.write(group_key(group.group_id), {"group_epoch": group.group_epoch})
        except KafkaError as e:
            log.warning("could not record share group %r: %s", group.group_id, e)

    def _owned(self, group_id: str) -> None:
        leader = self.coordinator_of(group_id)
        if leader != self.node_id:
            code = ErrorCode.not_coordinator if leader >= 0 else ErrorCode.coordinator_not_available
            raise KafkaError(code, f"Broker {self.node_id} is not the coordinator of group {group_id!r}.")
        self._load()

    def is_share_group(self, group_id: str) -> bool:
        self._load()
        return group_id in self.groups

    # -- ShareGroupHeartbeat ------------------------------------------------------------------------
    def heartbeat(self, group_id: str, hb: Heartbeat) -> tuple[ShareMember, bool, int]:
        """One heartbeat: the member, whether to send its assignment, and the heartbeat interval (ms)."""
        _check(group_id, hb)
        self._owned(group_id)
        group = self.groups.get(group_id)
        if group is None:
            if hb.member_epoch != 0:
                raise KafkaError(ErrorCode.group_id_not_found, f"Group {group_id} not found.")
            other = self.other_group_type(group_id)
            if other is not None:
                raise KafkaError(ErrorCode.group_id_not_found, f"Group {group_id} is not a share group "
                                                               f"(it is a {other} group).")
            group = self.groups[group_id] = self._new(group_id)
        settings = self.group_config(group_id)
        visible = {name: t for name, t in self.metadata.topics.items() if not t.internal}
        topics = {name: len(t.partitions) for name, t in visible.items()}
        member, news = group.heartbeat(hb, topics, settings["share.session.timeout.ms"], self.clock.monotonic_ms(),
                                       self.config["group.share.max.size"], {n: t.topic_id for n, t in visible.items()})
        self.alarm.ring()
        return member, news and member.member_epoch != LEAVE_EPOCH, settings["share.heartbeat.interval.ms"]

    # -- ShareGroupDescribe, ListGroups -------------------------------------------------------------
    def describe(self, group_id: str) -> ShareGroup:
        """ShareGroupDescribe of one group; GROUP_ID_NOT_FOUND when no share group has that id."""
        if not group_id:
            raise KafkaError(ErrorCode.invalid_group_id, "A group id cannot be empty.")
        self._owned(group_id)
        group = self.groups.get(group_id)
        if group is None:
            other = self.other_group_type(group_id)
            raise KafkaError(ErrorCode.group_id_not_found, f"Group {group_id} is not a share group." if other
                             else f"Group {group_id} not found.")
        return group

    def start_offsets(self, group_id: str, wanted: dict[str, list[int]] | None,
                      high_watermark: Callable[[str, int], int | None]) -> list[tuple[str, int, int, int]]:
        """DescribeShareGroupOffsets: (topic, partition, start offset, lag) of the group's share-partitions,
        all of them or the ``wanted`` ones (-1, -1 for one the group never read). The lag counts the
        records up to the high watermark not yet acknowledged or archived."""
        self._owned(group_id)
        if group_id not in self.groups:
            raise KafkaError(ErrorCode.group_id_not_found, f"Group {group_id} is not a share group.")
        states = {}
        for (topic_id, index), snapshot in self.store.share_partitions(group_id).items():
            topic = self.metadata.topic_by_id(topic_id)
            if topic is not None:
                states[(topic.name, index)] = snapshot
        keys = sorted(states) if wanted is None else [(t, i) for t, ps in wanted.items() for i in ps]
        return [(t, i, *_offset_and_lag(states.get((t, i)), high_watermark(t, i))) for t, i in keys]

    def list_groups(self) -> list[ShareGroup]:
        self._load()
        return [g for g in self.groups.values() if self.coordinator_of(g.group_id) == self.node_id]

    # -- session timeouts ---------------------------------------------------------------------------
    def expire_members(self) -> list[tuple[str, str]]:
        now = self.clock.monotonic_ms()
        return [(g.group_id, m) for g in list(self.groups.values()) for m in g.expire(now)]

    async def run(self) -> None:
        while True:
            try:
                for group_id, member_id in self.expire_members():
                    log.info("share group %r: member %s missed its session timeout", group_id, member_id)
            except Exception:
                log.exception("share group session timer failed")
            deadlines = [d for d in (g.next_deadline() for g in self.groups.values()) if d is not None]
            now = self.clock.monotonic_ms()
            wait_ms = min([MAX_IDLE_MS] + [d - now for d in deadlines])
            await self.alarm.sleep((wait_ms + 1) / 1000)


def _offset_and_lag(snapshot: dict | None, high_watermark: int | None) -> tuple[int, int]:
    if snapshot is None:
        return -1, -1
    start = snapshot["start_offset"]
    if high_watermark is None:
        return start, -1
    done = sum(last - first + 1 for first, last, state, _ in snapshot["batches"] if RecordState(state).terminal)
    return start, max(0, high_watermark - start - done)


def _check(group_id: str, hb: Heartbeat) -> None:
    """The request checks Kafka makes before looking at the group (INVALID_REQUEST)."""
    if not group_id:
        raise KafkaError(ErrorCode.invalid_request, "GroupId can't be empty.")
    if not hb.member_id:
        raise KafkaError(ErrorCode.invalid_request, "MemberId can't be empty.")
    if hb.member_epoch < LEAVE_EPOCH:
        raise KafkaError(ErrorCode.invalid_request, f"MemberEpoch {hb.member_epoch} is invalid.")
