"""AlterConfigs (the older, replace-everything form): the given settings become the
resource's only overrides; anything not named returns to its default."""

from __future__ import annotations

from kio.schema.alter_configs.v2.request import AlterConfigsRequest

from ..errors import ErrorCode
from . import _configs
from .ports import Caller, Response


def error_response(caller: Caller, request: AlterConfigsRequest, code: ErrorCode) -> Response:
    """Every resource refused with ``code``, nothing altered (the fault API, or an unforwarded request)."""
    return caller.respond(responses=tuple(
        caller.make("AlterConfigsResourceResponse", error_code=code, error_message=code.name,
                    resource_type=r.resource_type, resource_name=r.resource_name) for r in request.resources))


class AlterConfigs(_configs.ConfigsHandler):
    async def handle(self, caller: Caller, request: AlterConfigsRequest) -> Response:
        def result(resource_type: int, name: str, wanted: dict[str, str]) -> object:
            return _configs.altered(caller, resource_type, name, lambda: self.configs.replace_resource_configs(
                resource_type, name, wanted, request.validate_only))
        return caller.respond(responses=tuple(
            result(r.resource_type, r.resource_name, {c.name: c.value for c in r.configs if c.value is not None})
            for r in request.resources))
