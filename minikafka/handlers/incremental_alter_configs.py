"""IncrementalAlterConfigs (KIP-339): set, delete, append to or subtract from settings
one at a time, leaving the others as they are (what ``kafka-configs.sh --alter`` uses)."""

from __future__ import annotations

from . import _alter
from ..errors import ErrorCode, KafkaError

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def _merge(current: dict, op: int, name: str, value: str | None) -> None:
    if op == SET:
        current[name] = value
    elif op == DELETE:
        current.pop(name, None)
    elif op in (APPEND, SUBTRACT) and _alter.is_list(name):
        items = [x for x in current.get(name, "").split(",") if x]
        given = [x for x in (value or "").split(",") if x]
        items = items + [x for x in given if x not in items] if op == APPEND else [x for x in items if x not in given]
        current[name] = ",".join(items)
    else:
        raise KafkaError(ErrorCode.invalid_config, f"Operation {op} does not apply to {name!r}.")


async def handle(ctx, request):
    def change(res):
        def run():
            current = _alter.current_overrides(ctx, res.resource_type, res.resource_name)
            for c in res.configs:
                _merge(current, c.config_operation, c.name, c.value)
            _alter.apply(ctx, res.resource_type, res.resource_name, current, request.validate_only)
        return run
    return ctx.respond(responses=tuple(_alter.result(ctx, r, change(r)) for r in request.resources))
