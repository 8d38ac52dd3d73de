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
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..connection import current_bootstrap
from ..i18n import _

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
        print(_("Started a schema registry (Confluent's REST API) at {url}; it keeps its schemas in the topic "
                "_schemas. Set {variable} to use a real one instead.").format(url=server.url,
                                                                                 variable=SCHEMA_REGISTRY_ENV))
    return _started[key].url


CONNECT_ENV = "CONNECT_URL"
REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class ConnectCluster:
    """A Connect worker's REST API, and how that worker reaches what its connectors need.

    On the compose path the worker is a container: it reaches the registry, PostgreSQL and
    the shared folder by the names docker compose gives them, not by your laptop's addresses.
    """
    url: str  # POST {url}/connectors
    schema_registry_url: str  # value.converter.schema.registry.url, as the worker reaches the registry
    jdbc_url: str  # connection.url, as the worker reaches PostgreSQL
    files: Path  # a folder you write and read here ...
    worker_files: str  # ... and the same folder as the worker sees it ("file": ...)

    def file(self, name: str) -> tuple[Path, str]:
        """(the path to use here, the path to put in a connector's "file")."""
        return self.files / name, f"{self.worker_files.rstrip('/')}/{name}"


def kafka_connect(bootstrap: str | None = None, *, offset_flush_interval_ms: int = 1000) -> ConnectCluster:
    """A Kafka Connect worker: $CONNECT_URL, or one started in this kernel (once per cluster)."""
    if os.environ.get(CONNECT_ENV):
        files = Path(os.environ.get("CONNECT_FILES", REPO / "connect-files"))
        files.mkdir(parents=True, exist_ok=True)
        return ConnectCluster(os.environ[CONNECT_ENV].rstrip("/"),
                              os.environ.get("CONNECT_SCHEMA_REGISTRY_URL", "http://schema-registry:8081"),
                              os.environ.get("CONNECT_JDBC_URL", "jdbc:postgresql://postgres:5432/test?user=postgres"),
                              files, os.environ.get("CONNECT_WORKER_FILES", "/connect-files"))
    bootstrap = bootstrap or current_bootstrap()
    registry = schema_registry(bootstrap)
    key = ("connect", bootstrap)
    if key not in _started:
        from .connect import ConnectServer
        server = ConnectServer(bootstrap, config={"offset.flush.interval.ms": str(offset_flush_interval_ms)}).start()
        atexit.register(server.stop)
        _started[key] = (server, Path(tempfile.mkdtemp(prefix="connect-files-")))
        print(_("Started a Kafka Connect worker (Connect's REST API) at {url}; it keeps its state in "
                "connect-configs, connect-offsets and connect-status. Set {variable} to use a real one "
                "instead.").format(url=server.url, variable=CONNECT_ENV))
    server, files = _started[key]
    return ConnectCluster(server.url, registry, _jdbc_url(), files, str(files))


def _jdbc_url() -> str:
    from .servers import POSTGRES, POSTGRES_DSN
    settings = dict(item.split("=", 1) for item in POSTGRES_DSN.split() if "=" in item)
    user = settings.get("user", "postgres")
    return f"jdbc:postgresql://{POSTGRES.host}:{POSTGRES.port}/{settings.get('dbname', 'test')}?user={user}"
