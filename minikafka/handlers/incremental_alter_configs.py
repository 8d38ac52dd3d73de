"""IncrementalAlterConfigs (KIP-339): set, delete, append to or subtract from settings
one at a time, leaving the others as they are (what ``kafka-configs.sh --alter`` uses).

Topics, brokers (dynamic settings, KIP-226), groups and broker loggers (KIP-412: a logger's
level, SET or DELETE) can be changed this way."""

from __future__ import annotations

from kio.schema.incremental_alter_configs.v1.request import AlterConfigsResource, IncrementalAlterConfigsRequest

from . import _configs
from ..errors import ErrorCode
from .ports import Caller, Response


def error_response(caller: Caller, request: IncrementalAlterConfigsRequest, code: ErrorCode) -> Response:
    """Every resource refused with ``code``, nothing altered (the fault API, or an unforwarded request)."""
    return caller.respond(responses=tuple(
        caller.make("AlterConfigsResourceResponse", error_code=code, error_message=code.name,
                    resource_type=r.resource_type, resource_name=r.resource_name) for r in request.resources))


class IncrementalAlterConfigs(_configs.ConfigsHandler):
    async def handle(self, caller: Caller, request: IncrementalAlterConfigsRequest) -> Response:
        def result(res: AlterConfigsResource) -> object:
            changes = [(int(c.config_operation), c.name, c.value) for c in res.configs]
            return _configs.altered(caller, res.resource_type, res.resource_name, lambda: self.configs
                                    .alter_resource_configs(res.resource_type, res.resource_name, changes,
                                                            request.validate_only))
        return caller.respond(responses=tuple(result(r) for r in request.resources))
