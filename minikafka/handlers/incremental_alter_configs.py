"""IncrementalAlterConfigs (KIP-339): set, delete, append to or subtract from settings
one at a time, leaving the others as they are (what ``kafka-configs.sh --alter`` uses).

Topics, brokers (dynamic settings, KIP-226) and broker loggers (KIP-412: a logger's
level, SET or DELETE) can be changed this way."""

from __future__ import annotations

from collections.abc import Callable

from kio.schema.incremental_alter_configs.v1.request import AlterConfigsResource, IncrementalAlterConfigsRequest

from .. import loggers
from ..errors import ErrorCode, KafkaError
from . import _alter
from .context import RequestContext, Response

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
OPERATIONS = {SET: "SET", DELETE: "DELETE", APPEND: "APPEND", SUBTRACT: "SUBTRACT"}


def _merge(current: dict, op: int, name: str, value: str | None, now: str = "") -> None:
    """Apply one change to the overrides; ``now`` is the setting's value when it has no override."""
    if op == SET:
        current[name] = value
    elif op == DELETE:
        current.pop(name, None)
    elif op in (APPEND, SUBTRACT) and _alter.is_list(name):
        items = [x.strip() for x in current.get(name, now).split(",") if x.strip()]
        given = [x for x in (value or "").split(",") if x]
        items = items + [x for x in given if x not in items] if op == APPEND else [x for x in items if x not in given]
        current[name] = ",".join(items)
    else:
        raise KafkaError(ErrorCode.invalid_config, f"Operation {op} does not apply to {name!r}.")


def _alter_loggers(ctx: RequestContext, res: AlterConfigsResource, validate_only: bool) -> None:
    _alter.check_broker_name(ctx, res.resource_name)
    if not res.resource_name:
        raise KafkaError(ErrorCode.invalid_request, "A BROKER_LOGGER resource is a broker id.")
    changes = [(c.name, OPERATIONS.get(c.config_operation, "?"), c.value) for c in res.configs]
    for change in changes:
        loggers.check(*change)
    for change in changes if not validate_only else ():
        loggers.apply(*change)


async def handle(ctx: RequestContext, request: IncrementalAlterConfigsRequest) -> Response:
    def change(res: AlterConfigsResource) -> Callable[[], None]:
        if res.resource_type == _alter.BROKER_LOGGER:
            return lambda: _alter_loggers(ctx, res, request.validate_only)

        def run() -> None:
            current = _alter.current_overrides(ctx, res.resource_type, res.resource_name)
            for c in res.configs:
                now = _alter.effective(ctx, res.resource_type, res.resource_name, c.name)
                _merge(current, c.config_operation, c.name, c.value, now)
            _alter.apply(ctx, res.resource_type, res.resource_name, current, request.validate_only)
        return run
    return ctx.respond(responses=tuple(_alter.result(ctx, r, change(r)) for r in request.resources))
