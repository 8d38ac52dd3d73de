"""OffsetFetch: where a group's consumers should resume, per partition.

A partition without a committed offset answers -1 with no error; the consumer then
applies its ``auto.offset.reset``. From v2 a null topic list asks for every committed
offset of the group (what ``kafka-consumer-groups --describe`` shows) and a
group-level error code exists. v7 adds ``require_stable``: a partition with a
transactional commit still pending answers UNSTABLE_OFFSET_COMMIT (KIP-447). v8 asks
for several groups in one request, each with its own answer; v9 names the member and
its member epoch (KIP-848), which must be current for a consumer-protocol group
(STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID otherwise).

With an authorizer, each group needs DESCRIBE (GROUP_AUTHORIZATION_FAILED for that group),
and topics the principal may not DESCRIBE are left out of "all", or answered with
TOPIC_AUTHORIZATION_FAILED when named, as Kafka's KafkaApis does.

v10 (Kafka 4.2, KIP-848's topic ids) names topics by id in the request and the answer: an
id the cluster does not know answers UNKNOWN_TOPIC_ID on each partition asked, and "all"
leaves out committed offsets of topics that no longer exist (they have no id to give).

Requests before v8 are lifted to the v8/v9 shape (one group) by ``upgrade``, v10 keeps its
own (ids), so the handler reads two shapes; the answer takes the shape of the version asked.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from typing import Any

from kio.schema.offset_fetch.v9.request import OffsetFetchRequest as NamedOffsetFetchRequest
from kio.schema.offset_fetch.v9.request import OffsetFetchRequestGroup as NamedOffsetFetchRequestGroup
from kio.schema.offset_fetch.v10.request import OffsetFetchRequest, OffsetFetchRequestGroup

from ..errors import ErrorCode, KafkaError
from ..protocol import codec
from ..security.acl import Operation, ResourceType
from ._groups import GroupHandler
from ._ids import ZERO, given
from .ports import Caller, FetchedOffset, Response

GROUP_ERROR_SINCE = 2
GROUPS_SINCE = 8
TOPIC_IDS_SINCE = 10
Request = OffsetFetchRequest | NamedOffsetFetchRequest  # v10 as it is, older ones as v9 (``upgrade``)
Group = OffsetFetchRequestGroup | NamedOffsetFetchRequestGroup
Row = FetchedOffset  # topic, partition, its committed (offset, leader epoch, metadata), error


def upgrade(decoded: Any, latest: type) -> Any:
    """v10 as itself (topic ids), v8-v9 as v9, an old single-group request as v9 (batched, names)."""
    if type(decoded).__version__ >= TOPIC_IDS_SINCE:
        return codec.upgrade(decoded, latest)
    named = codec.request_class(9, TOPIC_IDS_SINCE - 1)
    if hasattr(decoded, "groups"):
        return codec.upgrade(decoded, named)
    module = codec.request_module(9, TOPIC_IDS_SINCE - 1)
    topics = None if decoded.topics is None else tuple(
        module.OffsetFetchRequestTopics(name=t.name, partition_indexes=t.partition_indexes) for t in decoded.topics)
    group = module.OffsetFetchRequestGroup(group_id=decoded.group_id, member_id=None, member_epoch=-1, topics=topics)
    return named(groups=(group,), require_stable=getattr(decoded, "require_stable", False))


def _authorized(caller: Caller, rows: list[Row], wanted: list[tuple[str, int]] | None) -> list[Row]:
    """Topics the principal may not DESCRIBE: left out of "all", TOPIC_AUTHORIZATION_FAILED when named."""
    ok = {t: caller.allowed(Operation.DESCRIBE, ResourceType.TOPIC, t) for t in {r[0] for r in rows}}
    if wanted is None:
        return [r for r in rows if ok[r[0]]]
    return [r if ok[r[0]] else (r[0], r[1], None, ErrorCode.topic_authorization_failed) for r in rows]


def _by_topic(caller: Caller, rows: list[Row], partition_class: str) -> dict[str, list[Any]]:
    by_topic: defaultdict[str, list[Any]] = defaultdict(list)
    for topic, index, committed, code in rows:
        offset, leader_epoch, metadata = committed if committed is not None else (-1, -1, "")
        by_topic[topic].append(caller.make(
            partition_class, partition_index=index, committed_offset=offset, committed_leader_epoch=leader_epoch,
            metadata=metadata, error_code=code))
    return by_topic


def _named(caller: Caller, rows: list[Row], topic_class: str, partition_class: str) -> tuple[Any, ...]:
    """The answer's topics up to v9, by name."""
    return tuple(caller.make(topic_class, name=t, partitions=tuple(ps))
                 for t, ps in _by_topic(caller, rows, partition_class).items())


def error_response(caller: Caller, request: Request, code: ErrorCode) -> Response:
    """The fault API's answer: the group-level error (per group from v8); v0-1 have none, so each
    partition asked carries it, as in Kafka's error answer."""
    if caller.api_version >= GROUPS_SINCE:
        return caller.respond(groups=tuple(caller.make("OffsetFetchResponseGroup", group_id=g.group_id, topics=(),
                                                       error_code=code) for g in request.groups))
    if caller.api_version >= GROUP_ERROR_SINCE:
        return codec.empty(codec.response_class(9, caller.api_version), error_code=code)
    group = request.groups[0]  # v0-1: one group, lifted to v9 (names)
    topics = group.topics if isinstance(group, NamedOffsetFetchRequestGroup) else None
    rows: list[Row] = [(t.name, p, None, code) for t in topics or () for p in t.partition_indexes]
    return caller.respond(topics=_named(caller, rows, "OffsetFetchResponseTopic", "OffsetFetchResponsePartition"))


class OffsetFetch(GroupHandler):
    async def handle(self, caller: Caller, request: Request) -> Response:
        if caller.api_version >= GROUPS_SINCE:
            return caller.respond(groups=tuple(self._answer(caller, g, request.require_stable)
                                               for g in request.groups))
        return self._answer(caller, request.groups[0], request.require_stable)

    def _wanted(self, group: Group) -> tuple[list[tuple[str, int]] | None, list[Row]]:
        """The (topic, partition) pairs asked (None: all), and rows for topic ids nobody knows (v10)."""
        if group.topics is None:
            return None, []
        if isinstance(group, NamedOffsetFetchRequestGroup):
            return [(t.name, p) for t in group.topics for p in t.partition_indexes], []
        wanted: list[tuple[str, int]] = []
        unknown: list[Row] = []
        for t in group.topics:  # v10: topic ids
            topic_id = given(t.topic_id)
            name = None if topic_id is None else self.groups.topic_name_of(str(topic_id))
            if name is None:
                unknown += [(str(t.topic_id or ZERO), p, None, ErrorCode.unknown_topic_id) for p in t.partition_indexes]
            else:
                wanted += [(name, p) for p in t.partition_indexes]
        return wanted, unknown

    def _rows(self, caller: Caller, group: Group, require_stable: bool) -> tuple[list[Row], ErrorCode]:
        wanted, unknown = self._wanted(group)
        try:
            if not caller.allowed(Operation.DESCRIBE, ResourceType.GROUP, group.group_id):
                raise KafkaError(ErrorCode.group_authorization_failed)
            rows = self.groups.fetch_offsets(group.group_id, wanted, require_stable, group.member_id,
                                             group.member_epoch)
            return _authorized(caller, rows, wanted) + unknown, ErrorCode.none
        except KafkaError as e:
            return [(t, p, None, e.code) for t, p in wanted or ()], e.code

    def _topics(self, caller: Caller, rows: list[Row], topic_class: str, partition_class: str) -> tuple[Any, ...]:
        if caller.api_version < TOPIC_IDS_SINCE:
            return _named(caller, rows, topic_class, partition_class)
        by_topic = _by_topic(caller, rows, partition_class)
        ids = {t: self._topic_id(t) for t in by_topic}
        return tuple(caller.make(topic_class, topic_id=ids[t], partitions=tuple(ps))
                     for t, ps in by_topic.items() if ids[t] != ZERO)

    def _topic_id(self, topic: str) -> uuid.UUID:
        """The id a v10 answer names ``topic`` by: an unknown id asked is its own text (see ``_wanted``)."""
        found = self.groups.topic_id_of(topic)
        if found is None:
            try:
                return uuid.UUID(topic)
            except ValueError:
                return ZERO  # a committed topic since deleted: no id, left out
        return uuid.UUID(found)

    def _answer(self, caller: Caller, group: Group, require_stable: bool) -> Any:
        rows, code = self._rows(caller, group, require_stable)
        if caller.api_version >= GROUPS_SINCE:
            topics = () if code != ErrorCode.none else self._topics(caller, rows, "OffsetFetchResponseTopics",
                                                                    "OffsetFetchResponsePartitions")
            return caller.make("OffsetFetchResponseGroup", group_id=group.group_id, topics=topics, error_code=code)
        if code != ErrorCode.none and caller.api_version >= 2:
            return caller.respond(error_code=code, topics=())
        return caller.respond(error_code=ErrorCode.none,
                              topics=self._topics(caller, rows, "OffsetFetchResponseTopic",
                                                  "OffsetFetchResponsePartition"))
