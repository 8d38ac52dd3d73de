"""DescribeCluster (KIP-700): cluster id, controller and live brokers, for admin clients.

v2 may ask for fenced brokers too (KIP-1073); minikafka lists the live ones, none fenced."""

from __future__ import annotations

from ..errors import ErrorCode


async def handle(ctx, request):
    meta = ctx.broker.metadata
    brokers = tuple(ctx.make("DescribeClusterBroker", broker_id=i, host=h, port=p, rack=None, is_fenced=False)
                    for i, (h, p) in sorted(meta.brokers.items()))
    return ctx.respond(error_code=ErrorCode.none, error_message=None, endpoint_type=1,
                       cluster_id=meta.cluster_id, controller_id=meta.controller_id, brokers=brokers,
                       cluster_authorized_operations=-2147483648)
