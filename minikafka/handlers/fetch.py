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

A request with a replica id (``replica_id`` up to v14, ``ReplicaState.ReplicaId`` from v15,
KIP-903) is a follower broker's: it needs CLUSTER_ACTION, reads up to the log end rather
than the high watermark, and is answered by the leader-side replication rules
(``replica.fetcher.serve_follower``: the follower's progress, its leader epoch, DivergingEpoch).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

from kio.schema.fetch.v12.request import FetchPartition as NamedFetchPartition
from kio.schema.fetch.v12.request import FetchRequest as NamedFetchRequest
from kio.schema.fetch.v18.request import FetchPartition, FetchRequest, ReplicaState

from ..clock import now_ms
from ..errors import ErrorCode, KafkaError
from ..protocol import codec
from ..replica.fetcher import leader_throttled, serve_follower
from ..replica.partition import Partition
from ..replica.selector import NO_PREFERENCE, preferred_read_replica
from ..security.acl import CLUSTER_NAME, Operation, ResourceType
from ._topic_ids import id_of, name_of
from .context import RequestContext, Response

READ_COMMITTED = 1
FOLLOWER_FETCH_SINCE = 11  # KIP-392: the version that carries the consumer's rack
REPLICA_STATE_SINCE = 15  # KIP-903: the replica id moved into ReplicaState
Request = FetchRequest | NamedFetchRequest  # v13+ lifted to the newest, older ones to v12 (``upgrade``)


def upgrade(decoded: Any, latest: type) -> Any:
    """v13+ to the newest (topics by id), older ones to v12; v13-14's replica id kept in ReplicaState."""
    if type(decoded).__version__ < 13:
        return codec.upgrade(decoded, codec.request_class(1, 12))
    lifted = codec.upgrade(decoded, latest)
    if type(decoded).__version__ < REPLICA_STATE_SINCE and decoded.replica_id >= 0:
        return dataclasses.replace(lifted, replica_state=ReplicaState(replica_id=decoded.replica_id))
    return lifted


def replica_id(request: Request) -> int:
    """The fetching broker's id, or -1 for a consumer."""
    return int(request.replica_state.replica_id if isinstance(request, FetchRequest) else request.replica_id)


class _Slot:
    """One requested partition: where to read, and what was read."""

    __slots__ = ("topic", "req", "part", "error", "records", "aborted", "preferred", "diverging")

    def __init__(self, topic: str | None, req: FetchPartition | NamedFetchPartition) -> None:
        self.topic, self.req = topic, req
        self.part: Partition | None = None
        self.error, self.records = ErrorCode.none, b""
        self.aborted: list[tuple[int, int]] | None = None
        self.preferred = NO_PREFERENCE
        self.diverging: tuple[int, int] | None = None  # a follower's log diverged (KIP-320)


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
    extra = {} if s.diverging is None else {
        "diverging_epoch": ctx.make("EpochEndOffset", epoch=s.diverging[0], end_offset=s.diverging[1])}
    return ctx.make("PartitionData", partition_index=s.req.partition, error_code=s.error,
                    high_watermark=p.high_watermark if p else -1,
                    last_stable_offset=p.last_stable_offset if p else -1,
                    log_start_offset=p.log_start_offset if p else -1,
                    aborted_transactions=aborted if committed else None,
                    preferred_read_replica=s.preferred, records=s.records, **extra)


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


def _read_for_follower(ctx: RequestContext, slots: list[_Slot], request: Request, follower: int) -> int:
    """Each partition as its leader serves a follower: to the log end, within the leader's throttle."""
    budget, total, now = request.max_bytes, 0, now_ms()
    for s in slots:
        if s.part is None or s.error != ErrorCode.none:
            continue
        req, quota = s.req, ctx.broker.leader_quota
        throttled = leader_throttled(s.part, follower)
        limit = min(req.partition_max_bytes, max(budget - total, 0)) if total else req.partition_max_bytes
        if throttled:
            limit = min(limit, quota.allowance(now))
        try:
            read = serve_follower(s.part, follower, req.current_leader_epoch, req.fetch_offset,
                                  getattr(req, "last_fetched_epoch", -1), limit)
        except KafkaError as e:
            s.error, s.records = e.code, b""
            continue
        s.records, s.diverging = read.records, read.diverging
        if throttled:
            quota.record(len(read.records), now)
        total += len(s.records)
    return total


async def _follower_fetch(ctx: RequestContext, request: Request, follower: int) -> Response:
    """A follower broker's fetch (KIP-903 ReplicaState): the replication rules, not the consumer's."""
    slots = _slots(ctx, request)
    broker_allowed = ctx.allowed(Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME)
    for s in slots:
        if s.topic is None:
            s.error = ErrorCode.unknown_topic_id
        elif not broker_allowed:
            s.error = ErrorCode.topic_authorization_failed
        else:
            s.part = ctx.broker.local_replica(s.topic, s.req.partition)
            if s.part is None:
                known = ctx.broker.metadata.topics.get(s.topic)
                s.error = ErrorCode.not_leader_or_follower if known is not None and \
                    s.req.partition < len(known.partitions) else ErrorCode.unknown_topic_or_partition
    deadline = time.monotonic() + request.max_wait.total_seconds()
    while True:
        for s in slots:
            s.records = b""
        got = _read_for_follower(ctx, slots, request, follower)
        remaining = deadline - time.monotonic()
        if (got >= request.min_bytes or remaining <= 0
                or any(s.error != ErrorCode.none or s.diverging is not None for s in slots)):
            break
        await _wait_for_data(slots, remaining)
    return _respond(ctx, request, slots, committed=False)


async def handle(ctx: RequestContext, request: Request) -> Response:
    follower = replica_id(request)
    if follower >= 0:
        return await _follower_fetch(ctx, request, follower)
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
