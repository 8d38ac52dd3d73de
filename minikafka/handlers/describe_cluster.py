"""DescribeCluster (KIP-700): cluster id, controller and live brokers, for admin clients."""

from __future__ import annotations

from ..errors import ErrorCode
from ..security.acl import ResourceType
from ._authorize import NOT_REQUESTED, authorized_operations


async def handle(ctx, request):
    meta = ctx.broker.metadata
    brokers = tuple(ctx.make("DescribeClusterBroker", broker_id=i, host=h, port=p, rack=None)
                    for i, (h, p) in sorted(ctx.broker_endpoints.items()))
    operations = authorized_operations(ctx, ResourceType.CLUSTER) if request.include_cluster_authorized_operations \
        else NOT_REQUESTED
    return ctx.respond(error_code=ErrorCode.none, error_message=None, endpoint_type=1,
                       cluster_id=meta.cluster_id, controller_id=meta.controller_id, brokers=brokers,
                       cluster_authorized_operations=operations)
