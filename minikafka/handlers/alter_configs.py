"""AlterConfigs (the older, replace-everything form): the given settings become the
resource's only overrides; anything not named returns to its default."""

from __future__ import annotations

from collections.abc import Callable

from kio.schema.alter_configs.v2.request import AlterConfigsRequest, AlterConfigsResource

from . import _alter
from .context import RequestContext, Response


async def handle(ctx: RequestContext, request: AlterConfigsRequest) -> Response:
    def change(res: AlterConfigsResource) -> Callable[[], None]:
        wanted = {c.name: c.value for c in res.configs if c.value is not None}
        return lambda: _alter.apply(ctx, res.resource_type, res.resource_name, wanted, request.validate_only)
    return ctx.respond(responses=tuple(_alter.result(ctx, r, change(r)) for r in request.resources))
