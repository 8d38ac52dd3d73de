"""What AlterConfigs and IncrementalAlterConfigs share: applying changes to a resource.

Topic changes take effect at once (the topic's settings object is shared by its
partitions) and are saved with the cluster metadata. Broker changes are dynamic broker
settings (KIP-226): for one broker (its id) or for all (""), only those Kafka lets change
at run time, saved with the cluster metadata (``minikafka.dynamic_config``). Group
settings (a GROUP resource, KIP-848/KIP-932) are saved with the cluster metadata and read
by the group's coordinator and share-partition leaders.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kio.schema.alter_configs.v2.request import AlterConfigsResource
from kio.schema.incremental_alter_configs.v1.request import AlterConfigsResource as IncrementalResource

from ..config import BROKER_SETTINGS, TOPIC_SETTINGS, ConfigError, render, validate_topic_configs
from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation
from ..share import configs as group_configs
from ._authorize import check_config_access
from .context import RequestContext

TOPIC, BROKER, GROUP = 2, 4, 32
BROKER_LOGGER = 8


def apply(ctx: RequestContext, resource_type: int, name: str, new_overrides: dict, validate_only: bool) -> None:
    """Replace a resource's overrides with ``new_overrides`` after checking them."""
    broker = ctx.broker
    try:
        if resource_type == TOPIC:
            topic = broker.metadata.topics.get(name)
            if topic is None:
                raise KafkaError(ErrorCode.unknown_topic_or_partition, f"Topic {name!r} does not exist.")
            parsed = validate_topic_configs(new_overrides)
            if not validate_only:
                topic.overrides.clear()
                topic.overrides.update(parsed)
                broker.metadata.topic_changed(topic)
        elif resource_type == GROUP:
            parsed = group_configs.validate(new_overrides, broker.config)
            if not validate_only:
                broker.metadata.set_group_configs(name, parsed)
        elif resource_type == BROKER:
            check_broker_name(ctx, name)
            broker.metadata.broker_configs.replace(name, new_overrides, validate_only)
        elif resource_type == BROKER_LOGGER:
            raise KafkaError(ErrorCode.invalid_request,
                             "AlterConfigs cannot change BROKER_LOGGER resources; use IncrementalAlterConfigs.")
        else:
            raise KafkaError(ErrorCode.invalid_request, f"Resource type {resource_type} cannot be altered here.")
    except ConfigError as e:
        raise KafkaError(ErrorCode.invalid_config, str(e)) from None


def current_overrides(ctx: RequestContext, resource_type: int, name: str) -> dict:
    if resource_type == TOPIC:
        topic = ctx.broker.metadata.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"Topic {name!r} does not exist.")
        return {k: str(v) for k, v in topic.overrides.items()}
    if resource_type == BROKER:
        return ctx.broker.metadata.broker_configs.strings(name)
    if resource_type == GROUP:
        return dict(ctx.broker.metadata.group_configs.get(name, {}))
    return {}


def effective(ctx: RequestContext, resource_type: int, name: str, setting: str) -> str:
    """The value a setting has now, override or default: what APPEND and SUBTRACT start from
    (APPEND compact to a topic's default cleanup.policy gives delete,compact, as in Kafka)."""
    try:
        if resource_type == TOPIC and name in ctx.broker.metadata.topics:
            return render(ctx.broker.metadata.topic_config(name)[setting])
        if resource_type == BROKER:
            return render(ctx.broker.config[setting])
    except KeyError:
        pass
    return ""


def check_broker_name(ctx: RequestContext, name: str) -> None:
    """A broker resource changed through a broker is that broker ("1") or all brokers ("")."""
    if name not in ("", str(ctx.broker.node_id)):
        raise KafkaError(ErrorCode.invalid_request,
                         f"Unexpected broker id: this is broker {ctx.broker.node_id}, not {name!r}.")


def result(ctx: RequestContext, res: AlterConfigsResource | IncrementalResource, fn: Callable[[], None]) -> Any:
    try:
        check_config_access(ctx, res.resource_type, res.resource_name, Operation.ALTER_CONFIGS)
        fn()
        code, message = ErrorCode.none, None
    except KafkaError as e:
        code, message = e.code, e.message
    return ctx.make("AlterConfigsResourceResponse", error_code=code, error_message=message,
                    resource_type=res.resource_type, resource_name=res.resource_name)


_BROKER_LISTS = {s.name for s in BROKER_SETTINGS if s.kind == "list"}


def is_list(name: str) -> bool:
    setting = TOPIC_SETTINGS.get(name)
    return (setting is not None and setting.kind == "list") or name in _BROKER_LISTS
