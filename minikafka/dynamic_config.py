"""Dynamic broker settings (KIP-226): changed at run time, kept in the metadata log.

Kafka lets some broker settings change without a restart, through IncrementalAlterConfigs
(or AlterConfigs) on a BROKER resource: for one broker (resource name ``"1"``) or as the
cluster-wide default (resource name ``""``). In KRaft they are ConfigRecords in the
metadata log; here they are records of minikafka's metadata log (``minikafka.metadata``).
A broker reads a setting from its own dynamic value, else the cluster-wide dynamic
default, else its static configuration (``BrokerConfig.layered``), and DescribeConfigs
names that source (DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .config import BROKER_SETTINGS, DYNAMIC_BROKER_SETTINGS, BrokerConfig, ConfigError, render

RECORD_TYPES = frozenset({"broker_config"})
_BY_NAME = {s.name: s for s in BROKER_SETTINGS}


def parse(values: Mapping[str, Any]) -> dict[str, Any]:
    """Check dynamic values as Kafka does: known settings that may change at run time."""
    unknown = sorted(k for k in values if k not in _BY_NAME)
    if unknown:
        raise ConfigError(f"Unknown broker setting(s): {', '.join(unknown)}.")
    static = sorted(k for k in values if k not in DYNAMIC_BROKER_SETTINGS)
    if static:
        raise ConfigError(f"Cannot update these configs dynamically: {', '.join(static)} "
                          "(set them in server.properties and restart the broker).")
    return {k: _BY_NAME[k].parse(v) for k, v in values.items()}


def check_resource_name(name: str) -> None:
    """A BROKER resource is named by a broker id, or "" for the cluster-wide default."""
    if name and not name.isdigit():
        raise ConfigError(f"A broker resource is a broker id or '' (the cluster default), not {name!r}.")


class DynamicBrokerConfigs:
    """The dynamic layers by resource name ("" = cluster default, "1" = broker 1)."""

    def __init__(self, append: Callable[[dict], None]):
        self._append = append  # writes one record to the metadata log
        self._layers: dict[str, dict[str, Any]] = {}
        self.elr = False  # eligible leader replicas on: the cluster-level min.insync.replicas must stay

    def keep_cluster_min_isr(self, static: BrokerConfig) -> None:
        """KIP-966: with eligible leader replicas on, the cluster keeps a cluster-level
        min.insync.replicas (a DYNAMIC_DEFAULT_BROKER_CONFIG); if there is none, it is written
        with the static value, and it cannot be removed."""
        self.elr = static["eligible.leader.replicas.version"] == 1
        if self.elr and "min.insync.replicas" not in self.layer(""):
            self.replace("", {**self.strings(""), "min.insync.replicas": static["min.insync.replicas"]})

    def layer(self, resource: str) -> dict[str, Any]:
        """The live mapping of one resource's dynamic values (the same object for good)."""
        return self._layers.setdefault(resource, {})

    def view(self, static: BrokerConfig, node_id: int | None = None) -> BrokerConfig:
        """What broker ``node_id`` (or, with None, the cluster as a whole) reads."""
        layers = [("DYNAMIC_BROKER_CONFIG", self.layer(str(node_id)))] if node_id is not None else []
        return static.layered(*layers, ("DYNAMIC_DEFAULT_BROKER_CONFIG", self.layer("")))

    def strings(self, resource: str) -> dict[str, str]:
        return {k: render(v) for k, v in self._layers.get(resource, {}).items()}

    def replace(self, resource: str, values: Mapping[str, Any], validate_only: bool = False) -> None:
        """Make ``values`` the whole dynamic configuration of ``resource``."""
        check_resource_name(resource)
        parsed = parse(values)
        if self.elr and resource == "" and "min.insync.replicas" not in parsed:
            raise ConfigError("Cannot remove the cluster-level min.insync.replicas while eligible leader "
                              "replicas are enabled (eligible.leader.replicas.version=1).")
        if validate_only:
            return
        self._set(resource, parsed)
        self._append({"type": "broker_config", "resource": resource, "configs": self.strings(resource)})

    def _set(self, resource: str, parsed: Mapping[str, Any]) -> None:
        layer = self.layer(resource)
        layer.clear()
        layer.update(parsed)

    # -- the metadata log ----------------------------------------------------------------
    def replay(self, rec: dict) -> None:
        self._set(rec["resource"], parse(rec["configs"]))

    def snapshot(self) -> dict:
        return {"broker_configs": {r: self.strings(r) for r, layer in self._layers.items() if layer}}

    def load_snapshot(self, data: dict) -> None:
        for resource, values in data.get("broker_configs", {}).items():
            self._set(resource, parse(values))
