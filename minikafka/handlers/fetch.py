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
The handler sees only ``ports.FetchPort`` (``minikafka.fetch_access`` on the broker's side) and
reads replicas through ``ports.ReadView``; ``max_wait`` is measured on the port's monotonic
clock (``minikafka.clock``, in ms), asyncio only told how long to sleep.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import uuid
from typing import Any

from kio.schema.fetch.v12.request import FetchPartition as NamedFetchPartition
from kio.schema.fetch.v12.request import FetchRequest as NamedFetchRequest
from kio.schema.fetch.v18.request import FetchPartition, FetchRequest, ReplicaState

from ..errors import ErrorCode, KafkaError
from ..protocol import codec
from ..security.acl import Operation, ResourceType
from ._topic_ids import ZERO
from .ports import Caller, FetchPort, ReadView, Response

READ_COMMITTED = 1
FOLLOWER_FETCH_SINCE = 11  # KIP-392: the version that carries the consumer's rack
REPLICA_STATE_SINCE = 15  # KIP-903: the replica id moved into ReplicaState
NO_PREFERENCE = -1  # no preferred read replica: read from the broker asked
MS = datetime.timedelta(milliseconds=1)
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
        self.part: ReadView | None = None
        self.error, self.records = ErrorCode.none, b""
        self.aborted: list[tuple[int, int]] | None = None
        self.preferred = NO_PREFERENCE
        self.diverging: tuple[int, int] | None = None  # a follower's log diverged (KIP-320)


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


async def _wait_for_data(slots: list[_Slot], ms: int) -> None:
    if ms <= 0:
        return
    seconds = ms / 1000
    waiters = [s.part.waiter() for s in slots if s.part is not None]
    if not waiters:  # nothing can arrive (no partitions): wait out max_wait without holding the loop
        await asyncio.sleep(seconds)
        return
    _done, pending = await asyncio.wait(waiters, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    for fut in pending:
        fut.cancel()


def _partition_data(caller: Caller, s: _Slot, committed: bool) -> Any:
    p = s.part
    aborted = tuple(caller.make("AbortedTransaction", producer_id=pid, first_offset=off)
                    for pid, off in (s.aborted or ()))
    extra = {} if s.diverging is None else {
        "diverging_epoch": caller.make("EpochEndOffset", epoch=s.diverging[0], end_offset=s.diverging[1])}
    return caller.make("PartitionData", partition_index=s.req.partition, error_code=s.error,
                       high_watermark=p.high_watermark if p else -1,
                       last_stable_offset=p.last_stable_offset if p else -1,
                       log_start_offset=p.log_start_offset if p else -1,
                       aborted_transactions=aborted if committed else None,
                       preferred_read_replica=s.preferred, records=s.records, **extra)


class Fetch:
    def __init__(self, port: FetchPort) -> None:
        self.port = port

    def _slots(self, request: Request) -> list[_Slot]:
        """One slot per requested partition, by topic name (None: an id no topic has)."""
        if isinstance(request, FetchRequest):  # v13+ (``upgrade``)
            return [_Slot(self.port.topic_name_of(str(t.topic_id)), p) for t in request.topics for p in t.partitions]
        return [_Slot(t.topic, p) for t in request.topics for p in t.partitions]

    def _respond(self, caller: Caller, request: Request, slots: list[_Slot], committed: bool) -> Response:
        ids = [t.topic_id for t in request.topics for _ in t.partitions] if isinstance(request, FetchRequest) else None
        by_topic: dict[tuple[Any, Any], list[Any]] = {}
        for i, s in enumerate(slots):
            key = (s.topic, ids[i] if ids else self._id_of(s.topic))
            by_topic.setdefault(key, []).append(_partition_data(caller, s, committed))
        responses = tuple(caller.make("FetchableTopicResponse", topic=name, topic_id=topic_id, partitions=tuple(ps))
                          for (name, topic_id), ps in by_topic.items())
        return caller.respond(error_code=ErrorCode.none, session_id=0, responses=responses, node_endpoints=())

    def _id_of(self, topic: str | None) -> uuid.UUID:
        found = self.port.topic_id_of(topic) if topic is not None else None
        return ZERO if found is None else uuid.UUID(found)

    def error_response(self, caller: Caller, request: Request, code: ErrorCode) -> Response:
        """The fault API's answer: every requested partition fails with ``code``."""
        slots = self._slots(request)
        for s in slots:
            s.error = code
        return self._respond(caller, request, slots, committed=False)

    def _resolve(self, caller: Caller, slots: list[_Slot], request: Request) -> None:
        rack = (request.rack_id or "") if caller.api_version >= FOLLOWER_FETCH_SINCE else None
        for s in slots:
            assert s.topic is not None  # only slots without an error (a known topic) are resolved
            try:
                s.part, s.preferred = self.port.consumer_replica(s.topic, s.req.partition, rack, s.req.fetch_offset)
            except KafkaError as e:
                s.error = e.code

    def _read_for_follower(self, slots: list[_Slot], request: Request, follower: int) -> int:
        """Each partition as its leader serves a follower: to the log end, within the leader's throttle."""
        budget, total = request.max_bytes, 0
        for s in slots:
            if s.part is None or s.error != ErrorCode.none:
                continue
            assert s.topic is not None
            req = s.req
            limit = min(req.partition_max_bytes, max(budget - total, 0)) if total else req.partition_max_bytes
            try:
                read = self.port.follower_read(s.topic, req.partition, follower, req.current_leader_epoch,
                                               req.fetch_offset, getattr(req, "last_fetched_epoch", -1), limit)
            except KafkaError as e:
                s.error, s.records = e.code, b""
                continue
            s.records, s.diverging = read.records, read.diverging
            total += len(s.records)
        return total

    async def _follower_fetch(self, caller: Caller, request: Request, follower: int) -> Response:
        """A follower broker's fetch (KIP-903 ReplicaState): the replication rules, not the consumer's."""
        slots = self._slots(request)
        broker_allowed = caller.allowed_cluster(Operation.CLUSTER_ACTION)
        for s in slots:
            if s.topic is None:
                s.error = ErrorCode.unknown_topic_id
            elif not broker_allowed:
                s.error = ErrorCode.topic_authorization_failed
            else:
                try:
                    s.part = self.port.follower_replica(s.topic, s.req.partition)
                except KafkaError as e:
                    s.error = e.code
        deadline = self.port.monotonic_ms() + request.max_wait // MS
        while True:
            for s in slots:
                s.records = b""
            got = self._read_for_follower(slots, request, follower)
            remaining = deadline - self.port.monotonic_ms()
            if (got >= request.min_bytes or remaining <= 0
                    or any(s.error != ErrorCode.none or s.diverging is not None for s in slots)):
                break
            await _wait_for_data(slots, remaining)
        return self._respond(caller, request, slots, committed=False)

    async def handle(self, caller: Caller, request: Request) -> Response:
        follower = replica_id(request)
        if follower >= 0:
            return await self._follower_fetch(caller, request, follower)
        slots = self._slots(request)
        for s in slots:
            if s.topic is None:
                s.error = ErrorCode.unknown_topic_id
            elif not caller.allowed(Operation.READ, ResourceType.TOPIC, s.topic):
                s.error = ErrorCode.topic_authorization_failed
        self._resolve(caller, [s for s in slots if s.error == ErrorCode.none], request)
        deadline = self.port.monotonic_ms() + request.max_wait // MS
        while True:
            got = _read_all(slots, request)
            remaining = deadline - self.port.monotonic_ms()
            if (got >= request.min_bytes or remaining <= 0
                    or any(s.error != ErrorCode.none or s.preferred != NO_PREFERENCE for s in slots)):
                break
            await _wait_for_data(slots, remaining)
        return self._respond(caller, request, slots, request.isolation_level == READ_COMMITTED)
