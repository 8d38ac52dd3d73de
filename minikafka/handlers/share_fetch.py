"""ShareFetch (KIP-932): acknowledge what a share consumer is done with, and acquire more records.

One request does both, in this order: the share session is checked or opened
(``minikafka.share.sessions``), the acknowledgements it carries are applied, then
records are acquired for the member and returned whole batches at a time, with
``AcquiredRecords`` naming the offsets it now holds and their delivery counts (the
client drops the other records of a batch). With epoch -1 nothing is fetched: the
session closes and what the member still holds is released. Acknowledgement errors are
per partition (INVALID_RECORD_STATE for a record the member does not hold); session
errors are top-level (SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH).

Version 2 (Kafka 4.2) adds two fields. ``ShareAcquireMode`` (KIP-1206): 0, batch-optimized,
takes whole batches and may pass ``MaxRecords`` to finish one; 1, record-limit, never
acquires more than ``MaxRecords``, even mid-batch. ``IsRenewAck`` (KIP-1222): the request
carries Renew acknowledgements and fetches nothing, so ``MaxWaitMs``, ``MinBytes``,
``MaxBytes`` and ``MaxRecords`` must all be 0. Either field out of line is a top-level
INVALID_REQUEST, before the share session moves on.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Mapping
from typing import Any

from kio.schema.share_fetch.v2.request import ShareFetchRequest

from ..errors import ErrorCode, KafkaError
from . import _share
from .ports import Caller, FetchedView, Response, SharePartition

BATCH_OPTIMIZED, RECORD_LIMIT = 0, 1  # ShareAcquireMode (KIP-1206)
FINAL_EPOCH = -1  # the share session epoch that closes the session
MS = datetime.timedelta(milliseconds=1)


def check_v2_fields(request: ShareFetchRequest) -> None:
    """INVALID_REQUEST for an unknown ShareAcquireMode, or a renew-only request that asks for records."""
    if request.share_acquire_mode not in (BATCH_OPTIMIZED, RECORD_LIMIT):
        raise KafkaError(ErrorCode.invalid_request, f"ShareAcquireMode {request.share_acquire_mode} is neither "
                                                    f"{BATCH_OPTIMIZED} (batch-optimized) nor {RECORD_LIMIT} "
                                                    "(record-limit).")
    asked = (request.max_wait.total_seconds(), request.min_bytes, request.max_bytes, request.max_records)
    if request.is_renew_ack and any(asked):
        raise KafkaError(ErrorCode.invalid_request, "A ShareFetch with IsRenewAck only renews acquisition locks "
                                                    "and fetches nothing: MaxWaitMs, MinBytes, MaxBytes and "
                                                    "MaxRecords must all be 0.")


class ShareFetch(_share.ShareHandler):
    async def handle(self, caller: Caller, request: ShareFetchRequest) -> Response:
        known, unknown = self.resolve(request.topics)
        forgotten: set[SharePartition] = {(name, i) for f in request.forgotten_topics_data
                                          if (name := self.share.topic_name_of(str(f.topic_id))) for i in f.partitions}
        acks = {tp: batches for tp, batches in known.items() if batches}
        try:
            group_id, member_id = _share.check_ids(request)
            check_v2_fields(request)
            session = await self.share.open_share_fetch(group_id, member_id, request.share_session_epoch,
                                                        set(known), forgotten, bool(acks), caller.connection_id)
        except KafkaError as e:
            return _error(caller, e)
        ack_results = await self.acknowledge(caller, group_id, member_id, acks) if acks else {}
        fetched: Mapping[SharePartition, FetchedView] = {}
        if request.share_session_epoch == FINAL_EPOCH:
            await self.share.close_share_session(session)
        elif not request.is_renew_ack:
            fetched = await self.share.acquire_share_records(session, request.max_records, request.max_bytes,
                                                             request.max_wait // MS,
                                                             request.share_acquire_mode == RECORD_LIMIT)
        lock_ms = self.share.share_lock_duration_ms(group_id)
        return self._respond(caller, fetched, ack_results, unknown, lock_ms)

    def _respond(self, caller: Caller, fetched: Mapping[SharePartition, FetchedView],
                 acks: dict[SharePartition, KafkaError | None], unknown: dict[tuple[uuid.UUID, int], Any],
                 lock_ms: int) -> Response:
        entries: dict[SharePartition, tuple[FetchedView | None, KafkaError | None]]
        entries = {tp: (f, acks.get(tp)) for tp, f in fetched.items() if f.acquired or f.error}
        entries.update({tp: (fetched.get(tp), e) for tp, e in acks.items()})
        topics = [caller.make("ShareFetchableTopicResponse", topic_id=self.topic_id(t),
                              partitions=tuple(self._partition(caller, t, i, f, e) for i, (f, e) in parts))
                  for t, parts in _share.by_topic(entries).items()]
        no_leader = caller.make("LeaderIdAndEpoch", leader_id=-1, leader_epoch=-1)
        topics += [caller.make("ShareFetchableTopicResponse", topic_id=tid, partitions=tuple(
            caller.make("PartitionData", partition_index=i, error_code=ErrorCode.unknown_topic_id,
                        acknowledge_error_code=0, current_leader=no_leader, records=b"", acquired_records=())
            for i, _ in parts)) for tid, parts in _share.by_topic(unknown).items()]
        moved = [tp for tp, (f, _) in entries.items() if f and f.error == ErrorCode.not_leader_or_follower]
        return caller.respond(error_code=ErrorCode.none,
                              acquisition_lock_timeout=datetime.timedelta(milliseconds=lock_ms),
                              responses=tuple(topics), node_endpoints=self.node_endpoints(caller, moved))

    def _partition(self, caller: Caller, topic: str, index: int, fetched: FetchedView | None,
                   ack_error: KafkaError | None) -> Any:
        error = fetched.error if fetched else ErrorCode.none
        acquired = tuple(caller.make("AcquiredRecords", first_offset=r.first_offset, last_offset=r.last_offset,
                                     delivery_count=r.delivery_count) for r in (fetched.acquired if fetched else ()))
        return caller.make("PartitionData", partition_index=index, error_code=error,
                           acknowledge_error_code=ack_error.code if ack_error else ErrorCode.none,
                           acknowledge_error_message=ack_error.message if ack_error else None,
                           current_leader=self.leader(caller, topic, index),
                           records=fetched.records if fetched else b"", acquired_records=acquired)


def _error(caller: Caller, e: KafkaError) -> Response:
    return caller.respond(error_code=e.code, error_message=e.message, acquisition_lock_timeout=datetime.timedelta(0),
                          responses=(), node_endpoints=())
