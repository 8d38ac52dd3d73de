"""OffsetFetch: where a group's consumers should resume, per partition.

A partition without a committed offset answers -1 with no error; the consumer then
applies its ``auto.offset.reset``. From v2 a null topic list asks for every committed
offset of the group (what ``kafka-consumer-groups --describe`` shows) and a
group-level error code exists. v7 adds ``require_stable``: a partition with a
transactional commit still pending answers UNSTABLE_OFFSET_COMMIT (KIP-447). v8+
batches several groups; it is not advertised.
"""

from __future__ import annotations

from collections import defaultdict

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from ._groups import coordinator


def _wanted(request) -> list[tuple[str, int]] | None:
    if request.topics is None:
        return None
    return [(t.name, p) for t in request.topics for p in t.partition_indexes]


def _partition(ctx, index: int, committed, code):
    return ctx.make("OffsetFetchResponsePartition", partition_index=index,
                    committed_offset=committed.offset if committed else -1,
                    committed_leader_epoch=committed.leader_epoch if committed else -1,
                    metadata=committed.metadata if committed else "", error_code=code)


def _authorized(ctx, rows, wanted) -> list:
    """Topics the principal may not DESCRIBE: left out of "all", TOPIC_AUTHORIZATION_FAILED when named."""
    ok = {t: ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, t) for t in {r[0] for r in rows}}
    if wanted is None:
        return [r for r in rows if ok[r[0]]]
    return [r if ok[r[0]] else (r[0], r[1], None, ErrorCode.topic_authorization_failed) for r in rows]


def error_response(ctx, request, code: ErrorCode):
    """The group-level error: at the top from v2, on every named partition before."""
    if ctx.api_version >= 2:
        return ctx.respond(error_code=code, topics=())
    return _respond(ctx, [(t, p, None, code) for t, p in _wanted(request) or ()])


async def handle(ctx, request):
    wanted = _wanted(request)
    try:
        rows = coordinator(ctx).fetch(request.group_id, wanted, request.require_stable)
    except KafkaError as e:
        return error_response(ctx, request, e.code)
    return _respond(ctx, _authorized(ctx, rows, wanted))


def _respond(ctx, rows):
    by_topic = defaultdict(list)
    for topic, index, committed, code in rows:
        by_topic[topic].append(_partition(ctx, index, committed, code))
    topics = tuple(ctx.make("OffsetFetchResponseTopic", name=t, partitions=tuple(ps)) for t, ps in by_topic.items())
    return ctx.respond(error_code=ErrorCode.none, topics=topics)
