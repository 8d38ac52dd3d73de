"""A broker's side of the config APIs (DescribeConfigs, AlterConfigs, IncrementalAlterConfigs):
the ``ConfigsPort`` of ``handlers.ports``, which ``Broker`` implements by inheriting this class.

A resource is a topic, a broker (dynamic settings, KIP-226: one broker's id, or "" for the
cluster-wide defaults), a broker's loggers (KIP-412) or a group (KIP-848/KIP-932). Answers come
from the settings table in ``minikafka.config``: each entry has a value, where it comes from, and
its synonyms (every place it has a value, most specific first). Topic changes take effect at
once (the topic's settings object is shared by its partitions); every change is saved with the
cluster metadata. The ACL checks are the handlers'; everything here raises ``KafkaError``.
"""

from __future__ import annotations

from . import loggers
from .config import (BROKER_SETTINGS, SOURCE_CODES, TOPIC_SETTINGS, TYPE_CODES, BrokerConfig, ConfigEntry, ConfigError,
                     Setting, describe_broker, describe_topic, render)
from .errors import ErrorCode, KafkaError
from .metadata import ClusterMetadata
from .share import configs as group_configs

TOPIC, BROKER, BROKER_LOGGER, GROUP = 2, 4, 8, 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
OPERATIONS = {SET: "SET", DELETE: "DELETE", APPEND: "APPEND", SUBTRACT: "SUBTRACT"}
# One described setting: (name, value, source code, type code, read-only, documentation,
# synonyms as (name, value, source code)), the codes as DescribeConfigs carries them.
Described = tuple[str, str | None, int, int, bool, str, tuple[tuple[str, str | None, int], ...]]

_LOGGER = Setting("logger", "string", "INFO", "A logger of this broker and its level.")
_LISTENERS = Setting("listeners", "string", None, "The addresses this broker listens on, NAME://host:port, "
                     "comma-separated.")
_ADVERTISED = Setting("advertised.listeners", "string", None, "The addresses Metadata gives clients for this "
                      "broker's listeners; unset: the listeners' own.")
_BROKER_LISTS = {s.name for s in BROKER_SETTINGS if s.kind == "list"}


def _described(e: ConfigEntry) -> Described:
    return (e.name, e.value, SOURCE_CODES[e.source], TYPE_CODES[e.setting.kind], e.read_only, e.setting.doc,
            tuple((n, v, SOURCE_CODES[s]) for n, v, s in e.synonyms))


def is_list(name: str) -> bool:
    setting = TOPIC_SETTINGS.get(name)
    return (setting is not None and setting.kind == "list") or name in _BROKER_LISTS


def merge(current: dict, op: int, name: str, value: str | None, now: str = "") -> None:
    """Apply one incremental change to the overrides; ``now`` is the value when there is no override."""
    if op == SET:
        current[name] = value
    elif op == DELETE:
        current.pop(name, None)
    elif op in (APPEND, SUBTRACT) and is_list(name):
        items = [x.strip() for x in current.get(name, now).split(",") if x.strip()]
        given = [x for x in (value or "").split(",") if x]
        items = items + [x for x in given if x not in items] if op == APPEND else [x for x in items if x not in given]
        current[name] = ",".join(items)
    else:
        raise KafkaError(ErrorCode.invalid_config, f"Operation {op} does not apply to {name!r}.")


class ResourceConfigs:
    """The config APIs' port, mixed into ``Broker`` (which sets these attributes)."""

    node_id: int
    config: BrokerConfig
    metadata: ClusterMetadata
    listeners_setting: tuple[str, bool]
    advertised_listeners_setting: tuple[str | None, bool]

    def describe_resource_configs(self, resource_type: int, name: str) -> list[Described]:
        """DescribeConfigs: every setting of the resource, set or not (clients break on an empty list)."""
        return [_described(e) for e in self._entries(resource_type, name)]

    def replace_resource_configs(self, resource_type: int, name: str, overrides: dict[str, str],
                                 validate_only: bool) -> None:
        """AlterConfigs: ``overrides`` become the resource's only ones; the others return to their defaults."""
        self._apply(resource_type, name, overrides, validate_only)

    def alter_resource_configs(self, resource_type: int, name: str, changes: list[tuple[int, str, str | None]],
                               validate_only: bool) -> None:
        """IncrementalAlterConfigs (KIP-339): (operation, setting, value) changes, the others kept."""
        if resource_type == BROKER_LOGGER:
            self._alter_loggers(name, [(n, OPERATIONS.get(op, "?"), v) for op, n, v in changes], validate_only)
            return
        current = self._current_overrides(resource_type, name)
        for op, setting, value in changes:
            merge(current, op, setting, value, self._effective(resource_type, name, setting))
        self._apply(resource_type, name, current, validate_only)

    def _entries(self, resource_type: int, name: str) -> list[ConfigEntry]:
        if resource_type == TOPIC:
            if name not in self.metadata.topics:
                raise KafkaError(ErrorCode.unknown_topic_or_partition, f"Topic {name!r} does not exist.")
            return describe_topic(self.metadata.topic_config(name))
        if resource_type == BROKER:
            if name not in ("", str(self.node_id)):
                raise KafkaError(ErrorCode.invalid_request, f"This is broker {self.node_id}, not {name}.")
            if not name:  # the cluster-wide dynamic defaults, and nothing else
                return [e for e in describe_broker(self.metadata.config) if e.source == "DYNAMIC_DEFAULT_BROKER_CONFIG"]
            return describe_broker(self.config) + self._listeners()
        if resource_type == BROKER_LOGGER:
            if name != str(self.node_id):
                raise KafkaError(ErrorCode.invalid_request, f"This is broker {self.node_id}, not {name!r}.")
            return [ConfigEntry(n, level, "DYNAMIC_BROKER_LOGGER_CONFIG", _LOGGER)
                    for n, level in loggers.levels().items()]
        if resource_type == GROUP:  # a group's settings (KIP-932's share.*), set or not
            return group_configs.GroupConfig(self.config, self.metadata.group_configs.get(name)).describe()
        raise KafkaError(ErrorCode.invalid_request, f"Resource type {resource_type} has no settings here.")

    def _listeners(self) -> list[ConfigEntry]:
        """listeners and advertised.listeners as this broker opened them (read-only: minikafka cannot
        move a listener while it runs). Unset in the file, advertised.listeners is null."""
        out = []
        for setting, (value, explicit) in ((_LISTENERS, self.listeners_setting),
                                           (_ADVERTISED, self.advertised_listeners_setting)):
            source = "STATIC_BROKER_CONFIG" if explicit else "DEFAULT_CONFIG"
            out.append(ConfigEntry(setting.name, value, source, setting, ((setting.name, value, source),),
                                   read_only=True))
        return out

    def _apply(self, resource_type: int, name: str, new_overrides: dict, validate_only: bool) -> None:
        """Replace a resource's overrides with ``new_overrides`` after checking them."""
        try:
            if resource_type == TOPIC:
                self.metadata.replace_topic_overrides(name, new_overrides, validate_only)
            elif resource_type == GROUP:
                parsed = group_configs.validate(new_overrides, self.config)
                if not validate_only:
                    self.metadata.set_group_configs(name, parsed)
            elif resource_type == BROKER:
                self._check_broker_name(name)
                self.metadata.broker_configs.replace(name, new_overrides, validate_only)
            elif resource_type == BROKER_LOGGER:
                raise KafkaError(ErrorCode.invalid_request,
                                 "AlterConfigs cannot change BROKER_LOGGER resources; use IncrementalAlterConfigs.")
            else:
                raise KafkaError(ErrorCode.invalid_request, f"Resource type {resource_type} cannot be altered here.")
        except ConfigError as e:
            raise KafkaError(ErrorCode.invalid_config, str(e)) from None

    def _current_overrides(self, resource_type: int, name: str) -> dict:
        if resource_type == TOPIC:
            topic = self.metadata.topics.get(name)
            if topic is None:
                raise KafkaError(ErrorCode.unknown_topic_or_partition, f"Topic {name!r} does not exist.")
            return {k: str(v) for k, v in topic.overrides.items()}
        if resource_type == BROKER:
            return self.metadata.broker_configs.strings(name)
        if resource_type == GROUP:
            return dict(self.metadata.group_configs.get(name, {}))
        return {}

    def _effective(self, resource_type: int, name: str, setting: str) -> str:
        """The value a setting has now, override or default: what APPEND and SUBTRACT start from
        (APPEND compact to a topic's default cleanup.policy gives delete,compact, as in Kafka)."""
        try:
            if resource_type == TOPIC and name in self.metadata.topics:
                return render(self.metadata.topic_config(name)[setting])
            if resource_type == BROKER:
                return render(self.config[setting])
        except KeyError:
            pass
        return ""

    def _check_broker_name(self, name: str) -> None:
        """A broker resource changed through a broker is that broker ("1") or all brokers ("")."""
        if name not in ("", str(self.node_id)):
            raise KafkaError(ErrorCode.invalid_request,
                             f"Unexpected broker id: this is broker {self.node_id}, not {name!r}.")

    def _alter_loggers(self, name: str, changes: list[tuple[str, str, str | None]], validate_only: bool) -> None:
        self._check_broker_name(name)
        if not name:
            raise KafkaError(ErrorCode.invalid_request, "A BROKER_LOGGER resource is a broker id.")
        for change in changes:
            loggers.check(*change)
        for change in changes if not validate_only else ():
            loggers.apply(*change)
