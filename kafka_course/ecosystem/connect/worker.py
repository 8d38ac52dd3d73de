"""A Kafka Connect worker: connectors, their tasks and states, kept in the three Connect topics.

The worker is the *herder* of distributed Connect with a group of one: every change a REST
call asks for is first written to ``connect-configs`` (the connector's properties, its task
configurations, the ``commit-<name>`` record that makes them current, its target state),
then carried out; every state change of a connector or task is written to
``connect-status``. A worker started on the same cluster later reads those topics and runs
the same connectors in the same states, and its source tasks resume from ``connect-offsets``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from . import plugins
from .runtime import TaskRunner, runner_for
from .storage import ConnectTopics

DEFAULTS = {"key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "offset.flush.interval.ms": "60000"}
TARGET = {"STARTED": "RUNNING", "PAUSED": "PAUSED", "STOPPED": "STOPPED"}


class ConnectError(Exception):
    """A REST error: ``{"error_code": status, "message": ...}``."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


@dataclass
class Connector:
    name: str
    config: dict[str, str]
    plugin: plugins.Plugin
    target: str = "STARTED"
    tasks: list[TaskRunner] = field(default_factory=list)


class Worker:
    def __init__(self, bootstrap: str, worker_id: str, config: dict[str, str] | None = None):
        self.bootstrap, self.worker_id = bootstrap, worker_id
        self.config = {**DEFAULTS, **(config or {})}
        self.flush_interval = int(self.config["offset.flush.interval.ms"]) / 1000
        self.topics = ConnectTopics(bootstrap)
        self.connectors: dict[str, Connector] = {}
        self.generation = 0
        self.lock = threading.RLock()

    # -- start and stop -----------------------------------------------------------------------
    def start(self) -> Worker:
        stored = {k.decode(): v for k, v in self.topics.read(self.topics.configs).items()}
        for key, value in stored.items():
            if key.startswith("connector-") and value is not None:
                name = key.removeprefix("connector-")
                target = (stored.get(f"target-state-{name}") or {}).get("state", "STARTED")
                plugin = plugins.find(value["properties"]["connector.class"])
                if plugin is not None:
                    self._run(Connector(name, value["properties"], plugin, target))
        return self

    def stop(self) -> None:
        with self.lock:
            for connector in self.connectors.values():
                self._stop_tasks(connector)
            self.topics.close()

    # -- what the REST API asks for -----------------------------------------------------------------
    def get(self, name: str) -> Connector:
        if name not in self.connectors:
            raise ConnectError(404, f"Connector {name} not found")
        return self.connectors[name]

    def check(self, config: dict[str, str]) -> plugins.Plugin:
        kind = config.get("connector.class")
        if not kind:
            raise ConnectError(400, f"Connector config {config} contains no connector type")
        plugin = plugins.find(kind)
        if plugin is None:
            names = ", ".join(p.class_name for p in plugins.PLUGINS)
            raise ConnectError(500, f"Failed to find any class that implements Connector and which name matches "
                                    f"{kind}, available connectors are: {names}")
        errors = [e for found in plugin.validate(config).values() for e in found]
        if errors:
            raise ConnectError(400, f"Connector configuration is invalid and contains the following {len(errors)} "
                                    "error(s):\n" + "\n".join(errors) + "\nYou can also find the above list of "
                                    "errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
        return plugin

    def create(self, name: str, config: dict[str, str], *, replace: bool = False) -> bool:
        """Create (or, with ``replace``, reconfigure) a connector; True if it is new."""
        config = {k: str(v) for k, v in {**config, "name": name}.items()}
        with self.lock:
            exists = name in self.connectors
            if exists and not replace:
                raise ConnectError(409, f"Connector {name} already exists")
            plugin = self.check(config)
            target = self.connectors[name].target if exists else "STARTED"
            if exists:
                self._stop_tasks(self.connectors.pop(name))
            self.topics.write(self.topics.configs, f"connector-{name}", {"properties": config})
            if not exists:
                self.topics.write(self.topics.configs, f"target-state-{name}", {"state": target})
            self._run(Connector(name, config, plugin, target))
            return not exists

    def delete(self, name: str) -> None:
        with self.lock:
            connector = self.get(name)
            self._stop_tasks(connector)
            del self.connectors[name]
            for key in (f"connector-{name}", f"target-state-{name}"):
                self.topics.write(self.topics.configs, key, None)
            for key in [f"status-connector-{name}"] + [f"status-task-{name}-{t.id}" for t in connector.tasks]:
                self.topics.write(self.topics.status, key, None)

    def set_target(self, name: str, target: str) -> None:
        """PAUSED, STARTED (resume) or STOPPED (KIP-875: no tasks at all)."""
        with self.lock:
            connector = self.get(name)
            previous, connector.target = connector.target, target
            self.topics.write(self.topics.configs, f"target-state-{name}", {"state": target})
            if target == "STOPPED" or previous == "STOPPED":
                self._stop_tasks(connector)
                self._run(connector)
                return
            for task in connector.tasks:
                task.pause() if target == "PAUSED" else task.resume()
            self._status(name, None, TARGET[target], None)

    def restart(self, name: str, *, tasks: bool = False, only_failed: bool = False) -> None:
        with self.lock:
            connector = self.get(name)
            if tasks:
                for task in list(connector.tasks):
                    if not only_failed or task.state == "FAILED":
                        self.restart_task(name, task.id)
            self._status(name, None, TARGET[connector.target], None)

    def restart_task(self, name: str, task_id: int) -> None:
        with self.lock:
            connector = self.get(name)
            if not 0 <= task_id < len(connector.tasks):
                raise ConnectError(404, f"Task {name}-{task_id} not found")
            connector.tasks[task_id].stop()
            connector.tasks[task_id] = self._task(connector, task_id, connector.tasks[task_id].config)

    # -- what the REST API shows --------------------------------------------------------------------
    def info(self, name: str) -> dict:
        c = self.get(name)
        return {"name": name, "config": c.config, "tasks": [{"connector": name, "task": t.id} for t in c.tasks],
                "type": c.plugin.type}

    def status(self, name: str) -> dict:
        c = self.get(name)
        tasks = [{"id": t.id, "state": t.state, "worker_id": self.worker_id, **({"trace": t.trace} if t.trace else {})}
                 for t in c.tasks]
        return {"name": name, "connector": {"state": TARGET[c.target], "worker_id": self.worker_id},
                "tasks": tasks, "type": c.plugin.type}

    def offsets(self, name: str) -> dict:
        c = self.get(name)
        if c.plugin.type == "source":
            return {"offsets": self.topics.source_offsets(name)}
        from confluent_kafka import ConsumerGroupTopicPartitions

        from .._kafka import admin
        client = admin(self.bootstrap)  # kept in a name: the answer needs the client alive
        group = client.list_consumer_group_offsets([ConsumerGroupTopicPartitions(f"connect-{name}")])
        group = group[f"connect-{name}"].result(10)
        return {"offsets": [{"partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition},
                             "offset": {"kafka_offset": tp.offset}} for tp in group.topic_partitions
                            if tp.offset >= 0]}

    # -- running ----------------------------------------------------------------------------------------
    def _run(self, connector: Connector) -> None:
        self.connectors[connector.name] = connector
        self.generation += 1
        configs = [] if connector.target == "STOPPED" else connector.plugin.task_configs(connector.config)
        for i, task_config in enumerate(configs):
            self.topics.write(self.topics.configs, f"task-{connector.name}-{i}", {"properties": task_config})
        self.topics.write(self.topics.configs, f"commit-{connector.name}", {"tasks": len(configs)})
        self._status(connector.name, None, TARGET[connector.target], None)
        connector.tasks = [self._task(connector, i, c) for i, c in enumerate(configs)]

    def _task(self, connector: Connector, task_id: int, config: dict[str, str]) -> TaskRunner:
        runner = runner_for(connector.plugin.type)(
            connector.name, task_id, config, self,
            lambda tid, state, trace: self._status(connector.name, tid, state, trace))
        runner.start(paused=connector.target == "PAUSED")
        return runner

    def _stop_tasks(self, connector: Connector) -> None:
        for task in connector.tasks:
            task.stop()

    def _status(self, name: str, task_id: int | None, state: str, trace: str | None) -> None:
        key = f"status-connector-{name}" if task_id is None else f"status-task-{name}-{task_id}"
        self.topics.write(self.topics.status, key, {"state": state, "trace": trace, "worker_id": self.worker_id,
                                                    "generation": self.generation})
