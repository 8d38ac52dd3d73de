"""WriteTxnMarkers: a transaction coordinator ends a transaction on the partitions this broker leads.

Kafka's coordinator sends it to each partition leader once a commit or abort is decided (KIP-98):
the leader appends a COMMIT or ABORT control record for the producer, which moves the last stable
offset on and, on ``__consumer_offsets``, applies or drops the transaction's offset commits. Each
partition gets its own answer: NOT_LEADER_OR_FOLLOWER tells the coordinator to send that one again
to the partition's new leader. Only brokers send it (CLUSTER_ACTION on the cluster, as in Kafka).
"""

from __future__ import annotations

from kio.schema.write_txn_markers.v2.request import WritableTxnMarker, WriteTxnMarkersRequest

from ..errors import ErrorCode
from ..security.acl import CLUSTER_NAME, Operation, ResourceType
from .ports import Caller, Response, TxnMarkersPort


class WriteTxnMarkers:
    def __init__(self, markers: TxnMarkersPort) -> None:
        self.markers = markers

    async def handle(self, caller: Caller, request: WriteTxnMarkersRequest) -> Response:
        if not caller.allowed(Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
            return error_response(caller, request, ErrorCode.cluster_authorization_failed)
        return caller.respond(markers=tuple([await self._marker(caller, m) for m in request.markers]))

    async def _marker(self, caller: Caller, marker: WritableTxnMarker) -> object:
        topics = []
        for t in marker.topics:
            results = []
            for index in t.partition_indexes:
                code = await self.markers.write_txn_marker(t.name, int(index), int(marker.producer_id),
                                                           int(marker.producer_epoch), marker.transaction_result)
                results.append(caller.make("WritableTxnMarkerPartitionResult", partition_index=index, error_code=code))
            topics.append(caller.make("WritableTxnMarkerTopicResult", name=t.name, partitions=tuple(results)))
        return caller.make("WritableTxnMarkerResult", producer_id=marker.producer_id, topics=tuple(topics))


def error_response(caller: Caller, request: WriteTxnMarkersRequest, code: ErrorCode) -> Response:
    """Every partition of every marker fails with ``code`` (an ACL refusal, an injected fault)."""
    return caller.respond(markers=tuple(caller.make("WritableTxnMarkerResult", producer_id=m.producer_id, topics=tuple(
        caller.make("WritableTxnMarkerTopicResult", name=t.name, partitions=tuple(
            caller.make("WritableTxnMarkerPartitionResult", partition_index=p, error_code=code)
            for p in t.partition_indexes)) for t in m.topics)) for m in request.markers))
