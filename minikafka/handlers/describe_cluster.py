"""DescribeCluster (KIP-700): cluster id, controller and live brokers, for admin clients.

v2 may ask for fenced brokers too (KIP-1073); minikafka lists the live ones, none fenced."""

from __future__ import annotations

from kio.schema.describe_cluster.v2.request import DescribeClusterRequest

from ..errors import ErrorCode
from ..security.acl import CLUSTER_NAME, Operation, ResourceType
from .ports import NOT_REQUESTED, Caller, ClusterViewPort, Response


class DescribeCluster:
    """The DescribeCluster API over the broker's ``ClusterViewPort``."""

    def __init__(self, cluster: ClusterViewPort) -> None:
        self.cluster = cluster

    async def handle(self, caller: Caller, request: DescribeClusterRequest) -> Response:
        cluster = self.cluster
        brokers = tuple(caller.make("DescribeClusterBroker", broker_id=i, host=h, port=p, rack=cluster.rack_of(i),
                                    is_fenced=False)
                        for i, (h, p) in sorted(cluster.broker_endpoints(caller.listener).items()))
        wanted = request.include_cluster_authorized_operations
        # as Kafka: only a principal that may DESCRIBE the cluster learns what else it may do
        operations = caller.authorized_operations(ResourceType.CLUSTER) if wanted and caller.allowed(
            Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME) else NOT_REQUESTED
        return caller.respond(error_code=ErrorCode.none, error_message=None, endpoint_type=1,
                              cluster_id=cluster.cluster_id(), controller_id=cluster.controller_id(), brokers=brokers,
                              cluster_authorized_operations=operations)
