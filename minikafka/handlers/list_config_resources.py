"""ListConfigResources (KIP-1142, API key 74): which resources have settings to describe.

``kafka-configs.sh --describe`` without an entity name asks it for the names to describe.
Version 0 was KIP-714's ListClientMetricsResources and lists only client-metrics
resources (type 16; minikafka keeps none, so the list is empty). Version 1 takes the
resource types wanted, all of them when the list is empty: TOPIC (every topic), BROKER and
BROKER_LOGGER (every broker's id), CLIENT_METRICS (none here) and GROUP (the groups this
broker knows and those with settings). An unknown type is INVALID_REQUEST. As on Kafka,
the principal needs DESCRIBE_CONFIGS on the cluster.
"""

from __future__ import annotations

from kio.schema.list_config_resources.v1.request import ListConfigResourcesRequest

from ..errors import ErrorCode
from ..security.acl import CLUSTER_NAME, Operation, ResourceType
from .ports import Caller, ConfigResourcesPort, Response

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
ALL_TYPES = (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP)


class ListConfigResources:
    """The ListConfigResources API over the broker's ``ConfigResourcesPort``."""

    def __init__(self, resources: ConfigResourcesPort) -> None:
        self.resources = resources

    async def handle(self, caller: Caller, request: ListConfigResourcesRequest) -> Response:
        if not caller.allowed(Operation.DESCRIBE_CONFIGS, ResourceType.CLUSTER, CLUSTER_NAME):
            return caller.respond(error_code=ErrorCode.cluster_authorization_failed, config_resources=())
        wanted = tuple(request.resource_types) if caller.api_version >= 1 else (CLIENT_METRICS,)
        if any(t not in ALL_TYPES for t in wanted):
            return caller.respond(error_code=ErrorCode.invalid_request, config_resources=())
        resources = tuple(caller.make("ConfigResource", resource_name=name, resource_type=kind)
                          for kind in (wanted or ALL_TYPES) for name in self._names(caller, kind))
        return caller.respond(error_code=ErrorCode.none, config_resources=resources)

    def _names(self, caller: Caller, kind: int) -> list[str]:
        if kind == TOPIC:
            return sorted(self.resources.topics())
        if kind in (BROKER, BROKER_LOGGER):
            return [str(i) for i in sorted(self.resources.broker_endpoints(caller.listener))]
        if kind == GROUP:
            return sorted(self.resources.known_group_ids())
        return []  # CLIENT_METRICS: minikafka keeps no client-metrics resources
