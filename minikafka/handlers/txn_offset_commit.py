"""TxnOffsetCommit: offsets a consume-transform-produce transaction commits.

The group coordinator writes them to ``__consumer_offsets`` as transactional records of
the producer; they become the group's committed offsets only when the transaction's
COMMIT marker lands there, and vanish on ABORT. So the output records and the input
offsets are committed together, or not at all: exactly-once processing.

v5 on a cluster that finalizes ``transaction.version`` 2 is transaction protocol v2
(KIP-890 part 2): the request also adds the group's offsets partition to the
transaction, which older versions leave to AddOffsetsToTxn.
"""

from __future__ import annotations

from kio.schema.txn_offset_commit.v5.request import TxnOffsetCommitRequest

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from . import _txn
from .ports import Caller, Response, TxnOffset

ADDS_OFFSETS_SINCE = 5
Results = dict[tuple[str, int], ErrorCode]


def _respond(caller: Caller, request: TxnOffsetCommitRequest, results: Results) -> Response:
    topics = tuple(
        caller.make("TxnOffsetCommitResponseTopic", name=t.name, partitions=tuple(
            caller.make("TxnOffsetCommitResponsePartition", partition_index=p.partition_index,
                        error_code=results.get((t.name, p.partition_index), ErrorCode.none))
            for p in t.partitions))
        for t in request.topics)
    return caller.respond(topics=topics)


def error_response(caller: Caller, request: TxnOffsetCommitRequest, code: ErrorCode) -> Response:
    """Every partition fails with ``code`` (an ACL refusal, an injected fault)."""
    return _respond(caller, request, {(t.name, p.partition_index): code for t in request.topics for p in t.partitions})


class TxnOffsetCommit(_txn.TxnHandler):
    async def handle(self, caller: Caller, request: TxnOffsetCommitRequest) -> Response:
        offsets: list[TxnOffset] = [
            (t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch, p.committed_metadata or "")
            for t in request.topics for p in t.partitions]
        denied = {(t, p): ErrorCode.topic_authorization_failed for t, p, *_ in offsets
                  if not caller.allowed(Operation.READ, ResourceType.TOPIC, t)}
        allowed = [o for o in offsets if (o[0], o[1]) not in denied]
        results = await self._commit(caller, request, allowed) if allowed else {}
        return _respond(caller, request, {**results, **denied})

    async def _commit(self, caller: Caller, request: TxnOffsetCommitRequest, offsets: list[TxnOffset]) -> Results:
        try:
            return await self.transactions.commit_transaction_offsets(
                request.transactional_id, request.producer_id, request.producer_epoch, request.group_id,
                request.member_id, request.group_instance_id, request.generation_id, offsets,
                may_add=caller.api_version >= ADDS_OFFSETS_SINCE)
        except KafkaError as e:
            code = _txn.code_for(caller, "TxnOffsetCommit", e)
            return {(t, p): code for t, p, *_ in offsets}
