"""What a controller answers besides Raft: ApiVersions, DescribeQuorum, DescribeCluster,
BrokerRegistration and BrokerHeartbeat (KIP-595's DescribeQuorum, KIP-919's DescribeCluster
for ``--bootstrap-controller`` tools, KIP-631's broker lifecycle). The admin requests are in ``admin``.

DescribeQuorum tells what this controller knows: the leader answers with every voter's and
observer's log end offset and the times of their last fetch and last catch-up (KIP-836); a
follower answers NOT_LEADER_OR_FOLLOWER, as Kafka's does, naming no one, and the tool asks
the leader. A broker that registers or heartbeats at a follower gets NOT_CONTROLLER and looks
for the active controller.
"""

from __future__ import annotations

import uuid
from typing import Any

from ..errors import ErrorCode
from ..protocol import codec
from .leader import ReplicaProgress
from .raft import RaftNode
from .wire import BEGIN_QUORUM_EPOCH, END_QUORUM_EPOCH, FETCH, METADATA_TOPIC, VOTE

API_VERSIONS, DESCRIBE_QUORUM, FETCH_SNAPSHOT, DESCRIBE_CLUSTER, BROKER_REGISTRATION, BROKER_HEARTBEAT = (
    18,
    55,
    59,
    60,
    62,
    63,
)
CREATE_TOPICS, DELETE_TOPICS, CREATE_PARTITIONS, ELECT_LEADERS, ALTER_PARTITION, ALLOCATE_PRODUCER_IDS = (
    19,
    20,
    37,
    43,
    56,
    67,
)
INCREMENTAL_ALTER_CONFIGS = 44
CONTROLLER_ENDPOINTS = 2  # DescribeCluster's endpoint type for controllers (KIP-919); 1 is brokers
# api key -> (lowest, highest version) this controller answers
SUPPORTED: dict[int, tuple[int, int]] = {
    FETCH: (13, 17),
    API_VERSIONS: (0, 3),
    VOTE: (0, 0),
    BEGIN_QUORUM_EPOCH: (0, 0),
    END_QUORUM_EPOCH: (0, 0),
    DESCRIBE_QUORUM: (0, 2),
    FETCH_SNAPSHOT: (0, 1),
    DESCRIBE_CLUSTER: (1, 2),
    BROKER_REGISTRATION: (0, 4),
    BROKER_HEARTBEAT: (0, 1),
    CREATE_TOPICS: (2, 7),
    DELETE_TOPICS: (1, 6),
    CREATE_PARTITIONS: (0, 3),
    ELECT_LEADERS: (1, 2),
    ALTER_PARTITION: (2, 3),
    ALLOCATE_PRODUCER_IDS: (0, 0),
    INCREMENTAL_ALTER_CONFIGS: (0, 1),
}


def api_versions(version: int) -> Any:
    module, cls = codec.response_module(API_VERSIONS, version), codec.response_class(API_VERSIONS, version)
    keys = tuple(
        codec.entity(module, "ApiVersion", api_key=k, min_version=lo, max_version=hi)
        for k, (lo, hi) in sorted(SUPPORTED.items())
    )
    return codec.downgrade(cls, error_code=ErrorCode.none, api_keys=keys)


def directory_id(node_id: int) -> uuid.UUID:
    """A stable metadata directory id per voter (KIP-853); minikafka does not change voters."""
    return uuid.uuid5(uuid.NAMESPACE_OID, f"kraft/{node_id}")


def describe_quorum(version: int, node: RaftNode, voters: dict[int, tuple[str, int]]) -> Any:
    module, cls = codec.response_module(DESCRIBE_QUORUM, version), codec.response_class(DESCRIBE_QUORUM, version)
    leader = node.leader_state

    def replica(p: ReplicaProgress) -> Any:
        return codec.entity(
            module,
            "ReplicaState",
            replica_id=p.replica_id,
            replica_directory_id=directory_id(p.replica_id),
            log_end_offset=p.log_end_offset,
            last_fetch_timestamp=p.last_fetch_ms,
            last_caught_up_timestamp=p.last_caught_up_ms,
        )

    if leader is None:
        partition = codec.entity(
            module,
            "PartitionData",
            partition_index=0,
            error_code=ErrorCode.not_leader_or_follower,
            error_message="this controller is not the quorum leader; ask the leader",
            leader_id=node.leader_id,
            leader_epoch=node.epoch,
            high_watermark=-1,
            current_voters=(),
            observers=(),
        )
    else:
        partition = codec.entity(
            module,
            "PartitionData",
            partition_index=0,
            error_code=ErrorCode.none,
            error_message=None,
            leader_id=node.node_id,
            leader_epoch=node.epoch,
            high_watermark=leader.high_watermark,
            current_voters=tuple(replica(p) for p in leader.voters.values()),
            observers=tuple(replica(p) for p in leader.observers.values()),
        )
    topic = codec.entity(module, "TopicData", topic_name=METADATA_TOPIC, partitions=(partition,))
    nodes = tuple(
        codec.entity(
            module,
            "Node",
            node_id=n,
            listeners=(codec.entity(module, "Listener", name="CONTROLLER", host=host, port=port),),
        )
        for n, (host, port) in voters.items()
    )
    return codec.downgrade(cls, error_code=ErrorCode.none, error_message=None, topics=(topic,), nodes=nodes)


def describe_cluster(version: int, request: Any, cluster_id: str, node: RaftNode, voters: dict) -> Any:
    """DescribeCluster at a controller (KIP-919): the cluster id, the active controller and every
    controller's endpoint. A request for the brokers' endpoints gets MISMATCHED_ENDPOINT_TYPE."""
    module, cls = codec.response_module(DESCRIBE_CLUSTER, version), codec.response_class(DESCRIBE_CLUSTER, version)
    if request.endpoint_type != CONTROLLER_ENDPOINTS:
        return codec.downgrade(
            cls,
            error_code=ErrorCode.mismatched_endpoint_type,
            error_message="this is a controller: ask it for controller endpoints (endpoint type 2)",
            endpoint_type=CONTROLLER_ENDPOINTS,
            cluster_id=cluster_id,
            controller_id=-1,
            brokers=(),
            cluster_authorized_operations=-(2**31),
        )
    controllers = tuple(
        codec.downgrade(module.DescribeClusterBroker, broker_id=n, host=host, port=port, rack=None, is_fenced=False)
        for n, (host, port) in sorted(voters.items())
    )
    return codec.downgrade(
        cls,
        error_code=ErrorCode.none,
        error_message=None,
        endpoint_type=CONTROLLER_ENDPOINTS,
        cluster_id=cluster_id,
        controller_id=node.leader_id,
        brokers=controllers,
        cluster_authorized_operations=-(2**31),
    )


def valid_describe(request: Any) -> bool:
    topics = request.topics
    return (
        len(topics) == 1
        and topics[0].topic_name == METADATA_TOPIC
        and len(topics[0].partitions) == 1
        and topics[0].partitions[0].partition_index == 0
    )


def listeners_of(request: Any) -> list[dict]:
    return [
        {"name": item.name, "host": item.host, "port": item.port, "securityProtocol": item.security_protocol}
        for item in request.listeners
    ]


def broker_registration(version: int, error: ErrorCode, broker_epoch: int) -> Any:
    return codec.downgrade(
        codec.response_class(BROKER_REGISTRATION, version), error_code=error, broker_epoch=broker_epoch
    )


def broker_heartbeat(version: int, error: ErrorCode, caught_up: bool, fenced: bool, shut_down: bool) -> Any:
    return codec.downgrade(
        codec.response_class(BROKER_HEARTBEAT, version),
        error_code=error,
        is_caught_up=caught_up,
        is_fenced=fenced,
        should_shut_down=shut_down,
    )
