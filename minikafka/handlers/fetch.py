"""Fetch: consumers read batches from partition leaders.

A fetch returns whole batches starting with the one that holds the requested offset,
up to the high watermark (``read_uncommitted``) or the last stable offset
(``read_committed``, with the list of aborted transactions so the client can drop
their records). When less than ``min_bytes`` is available the request waits up to
``max_wait`` for new data: this long poll is what lets consumers idle cheaply. From
v13 topics are named by id (KIP-516); an unknown id is UNKNOWN_TOPIC_ID.

Fetch from the closest replica (KIP-392): from v11 a consumer says its rack
(``rack_id``) and may fetch from a follower, which serves up to its own high watermark.
With ``replica.selector.class`` set to the rack-aware selector, a leader answers a
consumer from another rack with no records and ``preferred_read_replica``: the follower
in the consumer's rack (``replica.selector``).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from kio.schema.fetch.v12.request import FetchPartition as NamedFetchPartition
from kio.schema.fetch.v12.request import FetchRequest as NamedFetchRequest
from kio.schema.fetch.v18.request import FetchPartition, FetchRequest

from ..errors import ErrorCode, KafkaError
from ..replica.partition import Partition
from ..replica.selector import NO_PREFERENCE, preferred_read_replica
from ..security.acl import Operation, ResourceType
from ._topic_ids import id_of, name_of, upgrade_within
from .context import RequestContext, Response

READ_COMMITTED = 1
FOLLOWER_FETCH_SINCE = 11  # KIP-392: the version that carries the consumer's rack
upgrade = upgrade_within(1, 13)  # v13+ name topics by id
Request = FetchRequest | NamedFetchRequest  # v13+ lifted to the newest, older ones to v12 (``upgrade``)


class _Slot:
    """One requested partition: where to read, and what was read."""

    __slots__ = ("topic", "req", "part", "error", "records", "aborted", "preferred")

    def __init__(self, topic: str | None, req: FetchPartition | NamedFetchPartition) -> None:
        self.topic, self.req = topic, req
        self.part: Partition | None = None
        self.error, self.records = ErrorCode.none, b""
        self.aborted: list[tuple[int, int]] | None = None
        self.preferred = NO_PREFERENCE


def _slots(ctx: RequestContext, request: Request) -> list[_Slot]:
    """One slot per requested partition, by topic name (None: an id no topic has)."""
    if isinstance(request, FetchRequest):  # v13+ (``upgrade``)
        return [_Slot(name_of(ctx, t.topic_id), p) for t in request.topics for p in t.partitions]
    return [_Slot(t.topic, p) for t in request.topics for p in t.partitions]


def _resolve(ctx: RequestContext, slots: list[_Slot], request: Request) -> None:
    broker, followers_too = ctx.broker, ctx.api_version >= FOLLOWER_FETCH_SINCE
    for s in slots:
        assert s.topic is not None  # only slots without an error (a known topic) are resolved
        try:
            s.part = broker.leader_replica(s.topic, s.req.partition)
        except KafkaError as e:
            local = broker.local_replica(s.topic, s.req.partition) if followers_too else None
            if local is None or e.code != ErrorCode.not_leader_or_follower:
                s.error = e.code
                continue
            s.part = local  # a follower serves consumers up to its high watermark
        if s.part.is_leader and followers_too:
            s.preferred = preferred_read_replica(broker.config["replica.selector.class"], s.part,
                                                 request.rack_id or "", s.req.fetch_offset, broker.metadata.racks,
                                                 broker.metadata.brokers)


def _read_all(slots: list[_Slot], request: Request) -> int:
    budget, total = request.max_bytes, 0
    committed = request.isolation_level == READ_COMMITTED
    for s in slots:
        if s.part is None or s.error != ErrorCode.none or s.preferred != NO_PREFERENCE:
            continue
        try:
            limit = min(s.req.partition_max_bytes, max(budget - total, 0)) if total else s.req.partition_max_bytes
            s.records = s.part.read(s.req.fetch_offset, limit, committed_only=committed) if limit > 0 else b""
            if committed and s.records:
                s.aborted = s.part.aborted_transactions(s.req.fetch_offset, s.part.last_stable_offset)
        except KafkaError as e:
            s.error, s.records = e.code, b""
        total += len(s.records)
    return total


async def _wait_for_data(slots: list[_Slot], seconds: float) -> None:
    if seconds <= 0:
        return
    waiters = [s.part.waiter() for s in slots if s.part is not None]
    if not waiters:  # nothing can arrive (no partitions): wait out max_wait without holding the loop
        await asyncio.sleep(seconds)
        return
    _done, pending = await asyncio.wait(waiters, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    for fut in pending:
        fut.cancel()


def _partition_data(ctx: RequestContext, s: _Slot, committed: bool) -> Any:
    p = s.part
    aborted = tuple(ctx.make("AbortedTransaction", producer_id=pid, first_offset=off) for pid, off in (s.aborted or ()))
    return ctx.make("PartitionData", partition_index=s.req.partition, error_code=s.error,
                    high_watermark=p.high_watermark if p else -1,
                    last_stable_offset=p.last_stable_offset if p else -1,
                    log_start_offset=p.log_start_offset if p else -1,
                    aborted_transactions=aborted if committed else None,
                    preferred_read_replica=s.preferred, records=s.records)


def _respond(ctx: RequestContext, request: Request, slots: list[_Slot], committed: bool) -> Response:
    ids = [t.topic_id for t in request.topics for _ in t.partitions] if isinstance(request, FetchRequest) else None
    by_topic: dict[tuple, list] = {}
    for i, s in enumerate(slots):
        key = (s.topic, ids[i] if ids else id_of(ctx, s.topic))
        by_topic.setdefault(key, []).append(_partition_data(ctx, s, committed))
    responses = tuple(ctx.make("FetchableTopicResponse", topic=name, topic_id=topic_id, partitions=tuple(ps))
                      for (name, topic_id), ps in by_topic.items())
    return ctx.respond(error_code=ErrorCode.none, session_id=0, responses=responses, node_endpoints=())


def error_response(ctx: RequestContext, request: Request, code: ErrorCode) -> Response:
    """The fault API's answer: every requested partition fails with ``code``."""
    slots = _slots(ctx, request)
    for s in slots:
        s.error = code
    return _respond(ctx, request, slots, committed=False)


async def handle(ctx: RequestContext, request: Request) -> Response:
    # Followers replicate in-process (replica.fetcher), so every Fetch here is a consumer's.
    slots = _slots(ctx, request)
    for s in slots:
        if s.topic is None:
            s.error = ErrorCode.unknown_topic_id
        elif not ctx.allowed(Operation.READ, ResourceType.TOPIC, s.topic):
            s.error = ErrorCode.topic_authorization_failed
    _resolve(ctx, [s for s in slots if s.error == ErrorCode.none], request)
    deadline = time.monotonic() + request.max_wait.total_seconds()
    while True:
        got = _read_all(slots, request)
        remaining = deadline - time.monotonic()
        if (got >= request.min_bytes or remaining <= 0
                or any(s.error != ErrorCode.none or s.preferred != NO_PREFERENCE for s in slots)):
            break
        await _wait_for_data(slots, remaining)
    return _respond(ctx, request, slots, request.isolation_level == READ_COMMITTED)
