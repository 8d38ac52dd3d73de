"""DescribeCluster (KIP-700): cluster id, controller and live brokers, for admin clients.

v2 may ask for fenced brokers too (KIP-1073); minikafka lists the live ones, none fenced."""

from __future__ import annotations

from kio.schema.describe_cluster.v2.request import DescribeClusterRequest

from ..errors import ErrorCode
from ..security.acl import CLUSTER_NAME, Operation, ResourceType
from ._authorize import NOT_REQUESTED, authorized_operations
from .context import RequestContext, Response


async def handle(ctx: RequestContext, request: DescribeClusterRequest) -> Response:
    meta = ctx.broker.metadata
    brokers = tuple(ctx.make("DescribeClusterBroker", broker_id=i, host=h, port=p, rack=meta.racks.get(i),
                             is_fenced=False) for i, (h, p) in sorted(ctx.broker_endpoints.items()))
    wanted = request.include_cluster_authorized_operations
    # as Kafka: only a principal that may DESCRIBE the cluster learns what else it may do
    operations = authorized_operations(ctx, ResourceType.CLUSTER) if wanted and ctx.allowed(
        Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME) else NOT_REQUESTED
    return ctx.respond(error_code=ErrorCode.none, error_message=None, endpoint_type=1,
                       cluster_id=meta.cluster_id, controller_id=meta.controller_id, brokers=brokers,
                       cluster_authorized_operations=operations)
