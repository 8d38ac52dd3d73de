"""Kafka Connect's REST API (port 8083 on a real worker), one function per route.

    POST /connectors                       {"name": "...", "config": {...}}      -> 201
    GET  /connectors[?expand=status]       GET/PUT /connectors/{name}/config
    GET  /connectors/{name}[/status|/tasks|/offsets]
    PUT  /connectors/{name}/pause|resume|stop                                     -> 202
    POST /connectors/{name}/restart[?includeTasks=true&onlyFailed=true]           -> 204 / 202
    POST /connectors/{name}/tasks/{id}/restart                                    -> 204
    DELETE /connectors/{name}                                                     -> 204
    GET  /connector-plugins          PUT /connector-plugins/{class}/config/validate

Errors come back as ``{"error_code": 404, "message": "Connector sales not found"}``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from . import plugins, transforms
from .worker import ConnectError, Worker

Handler = Callable[..., "tuple[int, Any]"]
Query = dict[str, list[str]]  # a query parameter may repeat
Answer = tuple[int, Any]  # the HTTP status and the JSON body
ROUTES: list[tuple[str, re.Pattern, Handler]] = []


def route(method: str, pattern: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        ROUTES.append((method, re.compile(f"^{pattern}$"), handler))
        return handler
    return register


def _flag(query: dict[str, list[str]], name: str) -> bool:
    return query.get(name, ["false"])[-1].lower() == "true"


class ConnectApi:
    def __init__(self, worker: Worker, cluster_id: str):
        self.worker, self.cluster_id = worker, cluster_id

    def answer(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
        allowed = False
        for verb, pattern, handler in ROUTES:
            found = pattern.match(path)
            if found:
                allowed = True
                if verb == method:
                    try:
                        return handler(self, *map(unquote, found.groups()), query=query, body=body)
                    except ConnectError as e:
                        return e.status, {"error_code": e.status, "message": e.message}
        if allowed:
            return 405, {"error_code": 405, "message": "HTTP 405 Method Not Allowed"}
        return 404, {"error_code": 404, "message": "HTTP 404 Not Found"}

    @route("GET", "")
    def root(self, query: Query, body: Any) -> Answer:
        return 200, {"version": plugins.KAFKA_VERSION, "commit": "kafka-hands-on", "kafka_cluster_id": self.cluster_id}

    @route("GET", "/connectors")
    def list_connectors(self, query: Query, body: Any) -> Answer:
        names = sorted(self.worker.connectors)
        expand = query.get("expand", [])
        if not expand:
            return 200, names
        views = {"status": self.worker.status, "info": self.worker.info}
        return 200, {n: {what: views[what](n) for what in expand if what in views} for n in names}

    @route("POST", "/connectors")
    def create(self, query: Query, body: Any) -> Answer:
        if not isinstance(body, dict) or not isinstance(body.get("config"), dict):
            raise ConnectError(400, "Request body must be {\"name\": ..., \"config\": {...}}")
        name = body.get("name") or body["config"].get("name")
        if not name:
            raise ConnectError(400, "Connector name must be specified")
        self.worker.create(name, body["config"])
        return 201, self.worker.info(name)

    @route("GET", "/connectors/([^/]+)")
    def info(self, name: str, query: Query, body: Any) -> Answer:
        return 200, self.worker.info(name)

    @route("GET", "/connectors/([^/]+)/config")
    def get_config(self, name: str, query: Query, body: Any) -> Answer:
        return 200, self.worker.get(name).config

    @route("PUT", "/connectors/([^/]+)/config")
    def put_config(self, name: str, query: Query, body: Any) -> Answer:
        if not isinstance(body, dict):
            raise ConnectError(400, "Request body must be the connector's configuration, a JSON object")
        if body.get("name", name) != name:
            raise ConnectError(400, f"Connector name configuration ({body['name']}) doesn't match connector name "
                                    f"in the URL ({name})")
        created = self.worker.create(name, body, replace=True)
        return (201 if created else 200), self.worker.info(name)

    @route("GET", "/connectors/([^/]+)/status")
    def status(self, name: str, query: Query, body: Any) -> Answer:
        return 200, self.worker.status(name)

    @route("GET", "/connectors/([^/]+)/tasks")
    def tasks(self, name: str, query: Query, body: Any) -> Answer:
        return 200, [{"id": {"connector": name, "task": t.id}, "config": t.config}
                     for t in self.worker.get(name).tasks]

    @route("GET", "/connectors/([^/]+)/tasks/(\\d+)/status")
    def task_status(self, name: str, task: str, query: Query, body: Any) -> Answer:
        found = [t for t in self.worker.status(name)["tasks"] if t["id"] == int(task)]
        if not found:
            raise ConnectError(404, f"No status found for task {name}-{task}")
        return 200, found[0]

    @route("POST", "/connectors/([^/]+)/tasks/(\\d+)/restart")
    def restart_task(self, name: str, task: str, query: Query, body: Any) -> Answer:
        self.worker.restart_task(name, int(task))
        return 204, None

    @route("GET", "/connectors/([^/]+)/offsets")
    def offsets(self, name: str, query: Query, body: Any) -> Answer:
        return 200, self.worker.offsets(name)

    @route("PUT", "/connectors/([^/]+)/pause")
    def pause(self, name: str, query: Query, body: Any) -> Answer:
        self.worker.set_target(name, "PAUSED")
        return 202, None

    @route("PUT", "/connectors/([^/]+)/resume")
    def resume(self, name: str, query: Query, body: Any) -> Answer:
        self.worker.set_target(name, "STARTED")
        return 202, None

    @route("PUT", "/connectors/([^/]+)/stop")
    def stop(self, name: str, query: Query, body: Any) -> Answer:
        self.worker.set_target(name, "STOPPED")
        return 202, None

    @route("POST", "/connectors/([^/]+)/restart")
    def restart(self, name: str, query: Query, body: Any) -> Answer:
        tasks, only_failed = _flag(query, "includeTasks"), _flag(query, "onlyFailed")
        self.worker.restart(name, tasks=tasks, only_failed=only_failed)
        if not tasks and not only_failed:
            return 204, None
        return 202, self.worker.status(name)

    @route("DELETE", "/connectors/([^/]+)")
    def delete(self, name: str, query: Query, body: Any) -> Answer:
        self.worker.delete(name)
        return 204, None

    @route("GET", "/connector-plugins")
    def list_plugins(self, query: Query, body: Any) -> Answer:
        found = [p.describe() for p in sorted(plugins.PLUGINS, key=lambda p: p.class_name)]
        if query.get("connectorsOnly", ["true"])[-1].lower() == "false":
            found += [{"class": name, "type": "transformation", "version": plugins.KAFKA_VERSION}
                      for name in sorted(transforms.CLASSES)]
        return 200, found

    def _plugin(self, name: str) -> plugins.Plugin:
        plugin = plugins.find(name)
        if plugin is None:
            raise ConnectError(404, f"Unknown plugin {name}.")
        return plugin

    @route("GET", "/connector-plugins/([^/]+)/config")
    def plugin_config(self, name: str, query: Query, body: Any) -> Answer:
        return 200, [k.definition(i) for i, k in enumerate(self._plugin(name).keys)]

    @route("PUT", "/connector-plugins/([^/]+)/config/validate")
    def validate(self, name: str, query: Query, body: Any) -> Answer:
        config = {k: str(v) for k, v in (body or {}).items()}
        plugin = self._plugin(name)
        if config.get("connector.class") and plugins.find(config["connector.class"]) is not plugin:
            raise ConnectError(400, f"Included connector type {config['connector.class']} does not match request "
                                    f"type {name}")
        return 200, plugins.validation_answer(plugin, {"connector.class": plugin.class_name, **config})
