"""``metadata-quorum --bootstrap-controller``: DescribeQuorum straight to a KRaft controller.

Kafka's ``kafka-metadata-quorum.sh --bootstrap-controller host:port`` talks to the controllers
themselves (KIP-919), not to a broker: no admin client is needed, only two requests, sent here
over a plain socket (``wire``): DescribeQuorum (KIP-595, api key 55) and DescribeCluster with
the controller endpoint type (api key 60) for the cluster id. Only the quorum leader answers
DescribeQuorum; a follower answers NOT_LEADER_OR_FOLLOWER naming the leader, and the answer
lists every voter's endpoint, so the tool asks the leader next. The answers are turned into
the shape kafka-python's ``describe_metadata_quorum`` gives, so one printer serves both flags.
"""

from __future__ import annotations

from typing import Any

from minikafka.api import ErrorCode, codec

from .cluster_admin import CliError, error_text
from .wire import Connection, WireError

DESCRIBE_QUORUM, DESCRIBE_CLUSTER = 55, 60
CONTROLLER_ENDPOINTS = 2  # DescribeCluster's endpoint type for controllers (KIP-919)


def _addresses(bootstrap: str) -> list[tuple[str, int]]:
    out = []
    for item in filter(None, (part.strip() for part in bootstrap.split(","))):
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit():
            raise CliError(f"--bootstrap-controller {item!r} is not host:port.")
        out.append((host, int(port)))
    if not out:
        raise CliError("--bootstrap-controller names no controller (give host:port[,host:port...]).")
    return out


def _describe_quorum(conn: Connection) -> Any:
    module = codec.request_module(DESCRIBE_QUORUM, conn.version(DESCRIBE_QUORUM, 2) or 0)
    partition = codec.entity(module, "PartitionData", partition_index=0)
    topic = codec.entity(module, "TopicData", topic_name="__cluster_metadata", partitions=(partition,))
    return conn.request(DESCRIBE_QUORUM, 2, topics=(topic,))


def _cluster_id(conn: Connection) -> str:
    answer = conn.request(
        DESCRIBE_CLUSTER,
        2,
        include_cluster_authorized_operations=False,
        endpoint_type=CONTROLLER_ENDPOINTS,
        include_fenced_brokers=False,
    )
    if answer.error_code != ErrorCode.none:
        raise CliError(f"The controller would not describe the cluster: {error_text(int(answer.error_code))}")
    return answer.cluster_id


def _as_dicts(answer: Any) -> tuple[dict, dict]:
    """The DescribeQuorum answer's partition and nodes, as kafka-python gives them."""
    p = answer.topics[0].partitions[0]

    def replicas(states: Any) -> list[dict]:
        return [
            {
                "replica_id": s.replica_id,
                "replica_directory_id": getattr(s, "replica_directory_id", ""),
                "log_end_offset": s.log_end_offset,
                "last_fetch_timestamp": getattr(s, "last_fetch_timestamp", -1),
                "last_caught_up_timestamp": getattr(s, "last_caught_up_timestamp", -1),
            }
            for s in states
        ]

    partition = {
        "leader_id": p.leader_id,
        "leader_epoch": p.leader_epoch,
        "high_watermark": p.high_watermark,
        "current_voters": replicas(p.current_voters),
        "observers": replicas(p.observers),
    }
    nodes = {
        n.node_id: {
            "node_id": n.node_id,
            "listeners": [{"name": e.name, "host": e.host, "port": e.port} for e in n.listeners],
        }
        for n in getattr(answer, "nodes", ())
    }
    return partition, nodes


def _ask(host: str, port: int) -> tuple[Any, str]:
    try:
        with Connection(host, port) as conn:
            answer = _describe_quorum(conn)
            top = answer.error_code
            code = top if top != ErrorCode.none else answer.topics[0].partitions[0].error_code
            return answer, ("" if code != ErrorCode.none else _cluster_id(conn))
    except WireError as e:
        raise CliError(f"Cannot reach a controller at {host}:{port} ({e}). Is one running there?") from None


def describe(bootstrap: str) -> tuple[dict, dict, str]:
    """(partition, nodes, cluster id) from the quorum leader, found through the given controllers."""
    last = None
    for host, port in _addresses(bootstrap):
        answer, cluster_id = _ask(host, port)
        partition = answer.topics[0].partitions[0]
        if partition.error_code == ErrorCode.not_leader_or_follower:
            leader = next((n for n in getattr(answer, "nodes", ()) if n.node_id == partition.leader_id), None)
            if leader is not None and leader.listeners:
                answer, cluster_id = _ask(leader.listeners[0].host, leader.listeners[0].port)
                partition = answer.topics[0].partitions[0]
        last = answer.error_code if answer.error_code != ErrorCode.none else partition.error_code
        if last == ErrorCode.none:
            return (*_as_dicts(answer), cluster_id)
    raise CliError(
        f"The quorum could not be described: {error_text(int(last or 0))} (no leader among the "
        f"controllers at {bootstrap}; during an election, try again in a moment)."
    )
