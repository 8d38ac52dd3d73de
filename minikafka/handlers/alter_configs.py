"""AlterConfigs (the older, replace-everything form): the given settings become the
resource's only overrides; anything not named returns to its default."""

from __future__ import annotations

from kio.schema.alter_configs.v2.request import AlterConfigsRequest

from . import _configs
from .ports import Caller, Response


class AlterConfigs(_configs.ConfigsHandler):
    async def handle(self, caller: Caller, request: AlterConfigsRequest) -> Response:
        def result(resource_type: int, name: str, wanted: dict[str, str]) -> object:
            return _configs.altered(caller, resource_type, name, lambda: self.configs.replace_resource_configs(
                resource_type, name, wanted, request.validate_only))
        return caller.respond(responses=tuple(
            result(r.resource_type, r.resource_name, {c.name: c.value for c in r.configs if c.value is not None})
            for r in request.resources))
