"""Group-level settings of share groups (KIP-932; Kafka's ``GroupConfig``).

A share group reads its settings from the cluster metadata, set with
IncrementalAlterConfigs on a GROUP resource (``kafka-configs.sh --entity-type groups``);
a setting not set for the group falls back to the broker's ``group.share.*`` default.
``share.auto.offset.reset`` decides where a share-partition starts when the group first
reads it: ``latest`` (Kafka's default, only records written from now on) or
``earliest`` (the whole log). ``share.isolation.level`` ``read_committed`` keeps a share
group below the last stable offset and archives the records of aborted transactions
instead of delivering them; ``share.partition.max.record.locks`` bounds the in-flight
records of each of the group's share-partitions; ``share.renew.acknowledge.enable`` lets
members renew acquisition locks (KIP-1222, off by default as in Kafka). A group setting
must lie within the broker's bounds, as Kafka checks (e.g. ``group.share.min.record.lock.duration.ms``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..config import BrokerConfig, ConfigEntry, ConfigError, Setting, render


@dataclass(frozen=True)
class GroupSetting:
    setting: Setting
    broker_default: str | None = None  # the broker setting that supplies the default
    bounds: tuple[str, str] | None = None  # broker settings holding the smallest and largest value


GROUP_SETTINGS: dict[str, GroupSetting] = {g.setting.name: g for g in (
    GroupSetting(Setting("share.auto.offset.reset", "string", "latest",
                         "Where a share-partition starts when the group first reads it: latest or earliest.",
                         choices=("latest", "earliest"))),
    GroupSetting(Setting("share.record.lock.duration.ms", "int", 30_000,
                         "How long a consumer holds an acquired record before it is offered again."),
                 "group.share.record.lock.duration.ms",
                 ("group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms")),
    GroupSetting(Setting("share.partition.max.record.locks", "int", 2000,
                         "Most in-flight records of one share-partition for this group."),
                 "group.share.partition.max.record.locks",
                 ("group.share.min.partition.max.record.locks", "group.share.max.partition.max.record.locks")),
    GroupSetting(Setting("share.isolation.level", "string", "read_uncommitted",
                         "read_committed: records of open or aborted transactions are never delivered; "
                         "read_uncommitted: every record up to the high watermark.",
                         choices=("read_uncommitted", "read_committed"))),
    GroupSetting(Setting("share.renew.acknowledge.enable", "bool", False,
                         "Whether members may renew the acquisition locks of records they hold "
                         "(KIP-1222's Renew acknowledgement); refused with INVALID_RECORD_STATE when false.")),
    GroupSetting(Setting("share.session.timeout.ms", "int", 45_000,
                         "A member that sends no heartbeat for this long is removed from the group."),
                 "group.share.session.timeout.ms",
                 ("group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms")),
    GroupSetting(Setting("share.heartbeat.interval.ms", "int", 5_000, "How often members send a heartbeat."),
                 "group.share.heartbeat.interval.ms",
                 ("group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms")),
)}


def validate(overrides: Mapping[str, Any], broker: BrokerConfig) -> dict[str, str]:
    """Check a group's settings; ConfigError names the first bad one."""
    out = {}
    for name, value in overrides.items():
        group_setting = GROUP_SETTINGS.get(name)
        if group_setting is None:
            raise ConfigError(f"unknown group setting {name!r}")
        parsed = group_setting.setting.parse(value)
        if group_setting.bounds is not None:
            low, high = (broker[b] for b in group_setting.bounds)
            if not low <= parsed <= high:
                raise ConfigError(f"{name} must be between {low} ({group_setting.bounds[0]}) and "
                                  f"{high} ({group_setting.bounds[1]}), not {parsed}")
        out[name] = render(parsed)
    return out


class GroupConfig:
    """One group's effective settings: its overrides, else the broker's defaults."""

    def __init__(self, broker: BrokerConfig, overrides: Mapping[str, str] | None = None):
        self.broker, self.overrides = broker, dict(overrides or {})

    def __getitem__(self, name: str) -> Any:
        group_setting = GROUP_SETTINGS[name]
        if name in self.overrides:
            return group_setting.setting.parse(self.overrides[name])
        if group_setting.broker_default is not None:
            return self.broker[group_setting.broker_default]
        return group_setting.setting.default

    def describe(self) -> list[ConfigEntry]:
        """DescribeConfigs' entries: every group setting, with where its value comes from."""
        out = []
        for name, group_setting in GROUP_SETTINGS.items():
            source = "DYNAMIC_GROUP_CONFIG" if name in self.overrides else "DEFAULT_CONFIG"
            synonyms: tuple[tuple[str, str, str], ...] = ((name, self.overrides[name], source),) \
                if name in self.overrides else ()
            if group_setting.broker_default is not None:
                synonyms += ((group_setting.broker_default, render(self.broker[group_setting.broker_default]),
                              "STATIC_BROKER_CONFIG" if group_setting.broker_default in self.broker.explicit
                              else "DEFAULT_CONFIG"),)
            out.append(ConfigEntry(name, render(self[name]), source, group_setting.setting, synonyms))
        return out
