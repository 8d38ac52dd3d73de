"""DescribeConfigs: a topic's, broker's or group's settings with their source and synonyms.

Answers come from the settings table in ``minikafka.config``: every entry has a value,
where it comes from (topic override, a broker's dynamic setting, the cluster-wide dynamic
default, the broker's file, the default), and, when asked, its synonyms (every place it
has a value, most specific first) and a sentence of documentation. Clients and tools
break on an empty list, so every known setting is listed. Broker settings Kafka cannot
change at run time are read-only. The broker resource "" holds only the cluster-wide
dynamic defaults, as in Kafka. A BROKER_LOGGER resource lists the broker's loggers and
their levels (``minikafka.loggers``, KIP-412).
"""

from __future__ import annotations

from typing import Any

from kio.schema.describe_configs.v4.request import DescribeConfigsRequest, DescribeConfigsResource

from .. import loggers
from ..config import SOURCE_CODES, TYPE_CODES, ConfigEntry, Setting, describe_broker, describe_topic
from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation
from ..share.configs import GroupConfig
from ._authorize import check_config_access
from .context import RequestContext, Response

TOPIC, BROKER, BROKER_LOGGER, GROUP = 2, 4, 8, 32
_LOGGER = Setting("logger", "string", "INFO", "A logger of this broker and its level.")


_LISTENERS = Setting("listeners", "string", None, "The addresses this broker listens on, NAME://host:port, "
                     "comma-separated.")
_ADVERTISED = Setting("advertised.listeners", "string", None, "The addresses Metadata gives clients for this "
                      "broker's listeners; unset: the listeners' own.")


def _listeners(broker: Any) -> list[ConfigEntry]:
    """listeners and advertised.listeners as this broker opened them (read-only here: minikafka
    cannot move a listener while it runs). Unset in the file, advertised.listeners is null."""
    out = []
    for setting, (value, explicit) in ((_LISTENERS, broker.listeners_setting),
                                       (_ADVERTISED, broker.advertised_listeners_setting)):
        source = "STATIC_BROKER_CONFIG" if explicit else "DEFAULT_CONFIG"
        out.append(ConfigEntry(setting.name, value, source, setting, ((setting.name, value, source),), read_only=True))
    return out


def _entries(ctx: RequestContext, res: DescribeConfigsResource) -> list[ConfigEntry]:
    broker = ctx.broker
    check_config_access(ctx, res.resource_type, res.resource_name, Operation.DESCRIBE_CONFIGS)
    if res.resource_type == TOPIC:
        if res.resource_name not in broker.metadata.topics:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"Topic {res.resource_name!r} does not exist.")
        return describe_topic(broker.metadata.topic_config(res.resource_name))
    if res.resource_type == BROKER:
        if res.resource_name not in ("", str(broker.node_id)):
            raise KafkaError(ErrorCode.invalid_request, f"This is broker {broker.node_id}, not {res.resource_name}.")
        if not res.resource_name:  # the cluster-wide dynamic defaults, and nothing else
            return [e for e in describe_broker(broker.metadata.config) if e.source == "DYNAMIC_DEFAULT_BROKER_CONFIG"]
        return describe_broker(broker.config) + _listeners(broker)
    if res.resource_type == BROKER_LOGGER:
        if res.resource_name != str(broker.node_id):
            raise KafkaError(ErrorCode.invalid_request, f"This is broker {broker.node_id}, not {res.resource_name!r}.")
        return [ConfigEntry(name, level, "DYNAMIC_BROKER_LOGGER_CONFIG", _LOGGER)
                for name, level in loggers.levels().items()]
    if res.resource_type == GROUP:  # a group's settings (KIP-932's share.*), set or not
        return GroupConfig(broker.config, broker.metadata.group_configs.get(res.resource_name)).describe()
    raise KafkaError(ErrorCode.invalid_request, f"Resource type {res.resource_type} has no settings here.")


def _entry(ctx: RequestContext, e: ConfigEntry, synonyms: bool, docs: bool) -> Any:
    syn = tuple(ctx.make("DescribeConfigsSynonym", name=n, value=v, source=SOURCE_CODES[s])
                for n, v, s in e.synonyms) if synonyms else ()
    return ctx.make("DescribeConfigsResourceResult", name=e.name, value=e.value, read_only=e.read_only,
                    config_source=SOURCE_CODES[e.source],
                    is_sensitive=False, synonyms=syn, config_type=TYPE_CODES[e.setting.kind],
                    documentation=e.setting.doc if docs else None)


def _result(ctx: RequestContext, res: DescribeConfigsResource, synonyms: bool, docs: bool) -> Any:
    try:
        wanted = set(res.configuration_keys) if res.configuration_keys is not None else None
        entries = [e for e in _entries(ctx, res) if wanted is None or e.name in wanted]
        configs, code, message = tuple(_entry(ctx, e, synonyms, docs) for e in entries), ErrorCode.none, None
    except KafkaError as e:
        configs, code, message = (), e.code, e.message
    return ctx.make("DescribeConfigsResult", error_code=code, error_message=message,
                    resource_type=res.resource_type, resource_name=res.resource_name, configs=configs)


async def handle(ctx: RequestContext, request: DescribeConfigsRequest) -> Response:
    synonyms = request.include_synonyms
    docs = request.include_documentation
    return ctx.respond(results=tuple(_result(ctx, r, synonyms, docs) for r in request.resources))
