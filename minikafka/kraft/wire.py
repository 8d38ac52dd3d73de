"""The Raft messages on the wire: kio's Vote, BeginQuorumEpoch, EndQuorumEpoch and Fetch.

All four name one topic partition, ``__cluster_metadata``-0; Fetch (v13 on) names it by
topic id, Kafka's fixed metadata topic id ``00000000-0000-0000-0000-000000000001``. The
cluster id travels in every request; a controller answers a request for another cluster
with INCONSISTENT_CLUSTER_ID. ``to_wire``/``from_wire`` turn the core's objects into kio
entities and back; ``answer``/``read_answer`` do the same for the answers.
"""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from ..errors import ErrorCode
from ..protocol import codec
from .messages import (
    BeginQuorumEpochRequest,
    EndQuorumEpochRequest,
    EpochAnswer,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    Request,
    Response,
    VoteRequest,
    VoteResponse,
)

METADATA_TOPIC = "__cluster_metadata"
METADATA_TOPIC_ID = uuid.UUID(int=1)
VOTE, BEGIN_QUORUM_EPOCH, END_QUORUM_EPOCH, FETCH, FETCH_SNAPSHOT = 52, 53, 54, 1, 59
VERSIONS = {
    VOTE: 0,
    BEGIN_QUORUM_EPOCH: 0,
    END_QUORUM_EPOCH: 0,
    FETCH: 16,
    FETCH_SNAPSHOT: 0,
}  # what a controller sends
KEYS = {
    VoteRequest: VOTE,
    BeginQuorumEpochRequest: BEGIN_QUORUM_EPOCH,
    EndQuorumEpochRequest: END_QUORUM_EPOCH,
    FetchRequest: FETCH,
    FetchSnapshotRequest: FETCH_SNAPSHOT,
}


def _request_module(key: int, version: int) -> Any:
    return codec.request_module(key, version)


def _response_module(key: int, version: int) -> Any:
    return codec.response_module(key, version)


def to_wire(request: Request, cluster_id: str) -> Any:
    """The kio request entity for one of the core's requests."""
    key = KEYS[type(request)]
    module = _request_module(key, VERSIONS[key])
    if isinstance(request, FetchSnapshotRequest):
        return _snapshot_request(module, request, cluster_id)
    if isinstance(request, FetchRequest):
        partition = codec.entity(
            module,
            "FetchPartition",
            partition=0,
            current_leader_epoch=request.current_leader_epoch,
            fetch_offset=request.fetch_offset,
            last_fetched_epoch=request.last_fetched_epoch,
            log_start_offset=0,
            partition_max_bytes=1 << 20,
        )
        return codec.make(
            codec.request_class(key, VERSIONS[key]),
            cluster_id=cluster_id,
            replica_state=codec.entity(module, "ReplicaState", replica_id=request.replica_id),
            max_wait=datetime.timedelta(0),
            min_bytes=0,
            max_bytes=1 << 20,
            topics=(codec.entity(module, "FetchTopic", topic_id=METADATA_TOPIC_ID, partitions=(partition,)),),
            forgotten_topics_data=(),
        )
    if isinstance(request, VoteRequest):
        partition = codec.entity(
            module,
            "PartitionData",
            partition_index=0,
            replica_epoch=request.candidate_epoch,
            replica_id=request.candidate_id,
            last_offset_epoch=request.last_offset_epoch,
            last_offset=request.last_offset,
        )
    elif isinstance(request, EndQuorumEpochRequest):
        partition = codec.entity(
            module,
            "PartitionData",
            partition_index=0,
            leader_id=request.leader_id,
            leader_epoch=request.leader_epoch,
            preferred_successors=request.preferred_successors,
        )
    else:
        partition = codec.entity(
            module, "PartitionData", partition_index=0, leader_id=request.leader_id, leader_epoch=request.leader_epoch
        )
    topic = codec.entity(module, "TopicData", topic_name=METADATA_TOPIC, partitions=(partition,))
    return codec.make(codec.request_class(key, VERSIONS[key]), cluster_id=cluster_id, topics=(topic,))


def _snapshot_request(module: Any, request: FetchSnapshotRequest, cluster_id: str) -> Any:
    snapshot_id = codec.entity(module, "SnapshotId", end_offset=request.end_offset, epoch=request.epoch)
    partition = codec.entity(
        module,
        "PartitionSnapshot",
        partition=0,
        current_leader_epoch=request.current_leader_epoch,
        snapshot_id=snapshot_id,
        position=0,
    )
    topic = codec.entity(module, "TopicSnapshot", name=METADATA_TOPIC, partitions=(partition,))
    return codec.make(
        codec.request_class(FETCH_SNAPSHOT, VERSIONS[FETCH_SNAPSHOT]),
        cluster_id=cluster_id,
        replica_id=request.replica_id,
        max_bytes=2**31 - 1,
        topics=(topic,),
    )


class NotMetadataPartition(ValueError):
    """The request names a partition other than __cluster_metadata-0."""


def from_wire(key: int, body: Any) -> tuple[str | None, Request]:
    """The cluster id and the core's request for a decoded kio request."""
    topics = body.topics
    if len(topics) != 1 or len(topics[0].partitions) != 1:
        raise NotMetadataPartition("a quorum request names exactly one partition, __cluster_metadata-0")
    topic, p = topics[0], topics[0].partitions[0]
    if key == FETCH_SNAPSHOT:
        if topic.name != METADATA_TOPIC or p.partition != 0:
            raise NotMetadataPartition(f"a controller serves only {METADATA_TOPIC}-0")
        return body.cluster_id, FetchSnapshotRequest(
            body.replica_id, p.current_leader_epoch, p.snapshot_id.end_offset, p.snapshot_id.epoch
        )
    if key == FETCH:
        if topic.topic_id != METADATA_TOPIC_ID or p.partition != 0:
            raise NotMetadataPartition(f"a controller serves only {METADATA_TOPIC}-0 (topic id {METADATA_TOPIC_ID})")
        return body.cluster_id, FetchRequest(
            body.replica_state.replica_id, p.current_leader_epoch, p.fetch_offset, p.last_fetched_epoch
        )
    if topic.topic_name != METADATA_TOPIC or p.partition_index != 0:
        raise NotMetadataPartition(f"a controller serves only {METADATA_TOPIC}-0")
    if key == VOTE:
        return body.cluster_id, VoteRequest(p.replica_id, p.replica_epoch, p.last_offset_epoch, p.last_offset)
    if key == END_QUORUM_EPOCH:
        return body.cluster_id, EndQuorumEpochRequest(p.leader_id, p.leader_epoch, tuple(p.preferred_successors))
    return body.cluster_id, BeginQuorumEpochRequest(p.leader_id, p.leader_epoch)


def answer(key: int, version: int, response: Response) -> Any:
    """The kio response entity of ``version`` for one of the core's answers."""
    module, cls = _response_module(key, version), codec.response_class(key, version)
    if isinstance(response, FetchSnapshotResponse):
        partition = codec.entity(
            module,
            "PartitionSnapshot",
            index=0,
            error_code=response.error,
            snapshot_id=codec.entity(module, "SnapshotId", end_offset=response.end_offset, epoch=response.epoch),
            current_leader=codec.entity(
                module, "LeaderIdAndEpoch", leader_id=response.leader_id, leader_epoch=response.leader_epoch
            ),
            size=len(response.data),
            position=0,
            unaligned_records=response.data,
        )
        topic = codec.entity(module, "TopicSnapshot", name=METADATA_TOPIC, partitions=(partition,))
        return codec.downgrade(cls, error_code=ErrorCode.none, topics=(topic,))
    if isinstance(response, FetchResponse):
        partition = codec.entity(
            module,
            "PartitionData",
            partition_index=0,
            error_code=response.error,
            high_watermark=response.high_watermark,
            last_stable_offset=response.high_watermark,
            log_start_offset=0,
            diverging_epoch=codec.entity(
                module, "EpochEndOffset", epoch=response.diverging_epoch, end_offset=response.diverging_end_offset
            ),
            current_leader=codec.entity(
                module, "LeaderIdAndEpoch", leader_id=response.leader_id, leader_epoch=response.leader_epoch
            ),
            aborted_transactions=(),
            records=response.records or None,
            snapshot_id=codec.entity(
                module, "SnapshotId", end_offset=response.snapshot_end_offset, epoch=response.snapshot_epoch
            ),
        )
        topic = codec.entity(module, "FetchableTopicResponse", topic_id=METADATA_TOPIC_ID, partitions=(partition,))
        return codec.downgrade(cls, error_code=ErrorCode.none, responses=(topic,))
    fields: dict[str, Any] = {
        "partition_index": 0,
        "error_code": response.error,
        "leader_id": response.leader_id,
        "leader_epoch": response.leader_epoch,
    }
    if isinstance(response, VoteResponse):
        fields["vote_granted"] = response.vote_granted
    topic = codec.entity(
        module, "TopicData", topic_name=METADATA_TOPIC, partitions=(codec.entity(module, "PartitionData", **fields),)
    )
    return codec.downgrade(cls, error_code=ErrorCode.none, topics=(topic,))


def error_answer(key: int, version: int, code: ErrorCode) -> Any:
    """A top-level error (INCONSISTENT_CLUSTER_ID, a request for another partition)."""
    return codec.error_answer(codec.response_class(key, version), code)


class BadAnswer(ValueError):
    """An answer with a top-level error or without the metadata partition."""


def read_answer(key: int, body: Any) -> Response:
    """The core's answer for a decoded kio response."""
    if body.error_code != ErrorCode.none:
        raise BadAnswer(f"top-level error {ErrorCode(body.error_code).name}")
    topics = body.responses if key == FETCH else body.topics
    if len(topics) != 1 or len(topics[0].partitions) != 1:
        raise BadAnswer("the answer does not name __cluster_metadata-0 alone")
    p = topics[0].partitions[0]
    if key == FETCH_SNAPSHOT:
        if p.size != len(p.unaligned_records or b""):
            raise BadAnswer("a snapshot in more than one piece: minikafka asks for it whole")
        return FetchSnapshotResponse(
            p.error_code,
            p.current_leader.leader_id,
            p.current_leader.leader_epoch,
            p.snapshot_id.end_offset,
            p.snapshot_id.epoch,
            bytes(p.unaligned_records or b""),
        )
    if key == FETCH:
        return FetchResponse(
            p.error_code,
            p.current_leader.leader_id,
            p.current_leader.leader_epoch,
            p.high_watermark,
            p.diverging_epoch.epoch,
            p.diverging_epoch.end_offset,
            bytes(p.records or b""),
            p.snapshot_id.end_offset,
            p.snapshot_id.epoch,
        )
    if key == VOTE:
        return VoteResponse(p.error_code, p.leader_id, p.leader_epoch, p.vote_granted)
    return EpochAnswer(p.error_code, p.leader_id, p.leader_epoch)
