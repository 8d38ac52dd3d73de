"""Where the ecosystem's servers are: the real ones on the compose path, or small ones started here.

    registry_url = course.schema_registry()   # $SCHEMA_REGISTRY_URL, or a registry started in this kernel
    connect = course.kafka_connect()          # $CONNECT_URL, or a Connect worker started in this kernel

With the environment variable set (``docker compose --profile ecosystem up -d`` publishes
Confluent's Schema Registry on 8081 and a Kafka Connect worker on 8083), the notebooks talk
to those. Without it, the course starts the small servers of this package once per kernel,
on a free port of 127.0.0.1, storing their state in the same topics the real ones use
(``_schemas``; ``connect-configs``, ``connect-offsets``, ``connect-status``) on the cluster
``course.bootstrap()`` returned. The same client code runs against both.
"""

from __future__ import annotations

import atexit
import os
from typing import Any

from ..connection import current_bootstrap

SCHEMA_REGISTRY_ENV = "SCHEMA_REGISTRY_URL"
_started: dict[tuple[str, str], Any] = {}


def schema_registry(bootstrap: str | None = None) -> str:
    """The URL of a schema registry that speaks Confluent's REST API."""
    if os.environ.get(SCHEMA_REGISTRY_ENV):
        return os.environ[SCHEMA_REGISTRY_ENV].rstrip("/")
    bootstrap = bootstrap or current_bootstrap()
    key = ("schema-registry", bootstrap)
    if key not in _started:
        from .schema_registry import SchemaRegistryServer
        server = SchemaRegistryServer(bootstrap).start()
        atexit.register(server.stop)
        _started[key] = server
        print(f"Started a schema registry (Confluent's REST API) at {server.url}; it keeps its schemas in the "
              f"topic _schemas. Set {SCHEMA_REGISTRY_ENV} to use a real one instead.")
    return _started[key].url
