"""Where the other servers of notebooks 12 and 13 live, and whether they are up.

The defaults are the addresses ``docker compose`` publishes (see docker-compose.yml:
RabbitMQ and NATS under the ``comparison`` profile, PostgreSQL under ``ecosystem``, the
Kafka UI always). An environment variable overrides each one. ``reachable()`` only opens
a TCP connection with a short timeout, so a notebook can skip a section with a sentence
instead of hanging when a server is absent.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from urllib.parse import urlparse

RABBITMQ_URL = os.environ.get("RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672/%2F")
NATS_URL = os.environ.get("NATS_URL", "nats://127.0.0.1:4222")
POSTGRES_DSN = os.environ.get("POSTGRES_DSN", "host=127.0.0.1 port=5432 dbname=test user=postgres")
KAFKA_UI_URL = os.environ.get("KAFKA_UI_URL", "http://localhost:8080")


@dataclass(frozen=True)
class Server:
    name: str
    host: str
    port: int
    start_hint: str

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def up(self, timeout: float = 1.0) -> bool:
        return reachable(self.host, self.port, timeout)

    def skip_message(self, what: str) -> str:
        return (f"{self.name} is not reachable at {self.address}, so {what} is skipped. "
                f"To run it: {self.start_hint}")


def reachable(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _from_url(name: str, url: str, default_port: int, hint: str) -> Server:
    parsed = urlparse(url)
    return Server(name, parsed.hostname or "127.0.0.1", parsed.port or default_port, hint)


def _from_dsn(dsn: str) -> Server:
    parts = dict(item.split("=", 1) for item in dsn.split() if "=" in item)
    return Server("PostgreSQL", parts.get("host", "127.0.0.1"), int(parts.get("port", 5432)),
                  "docker compose --profile ecosystem up -d (or set POSTGRES_DSN)")


RABBITMQ = _from_url("RabbitMQ", RABBITMQ_URL, 5672, "docker compose --profile comparison up -d (or set RABBITMQ_URL)")
NATS = _from_url("NATS", NATS_URL, 4222, "docker compose --profile comparison up -d (or set NATS_URL)")
POSTGRES = _from_dsn(POSTGRES_DSN)
KAFKA_UI = _from_url("Kafka UI", KAFKA_UI_URL, 80, "docker compose up -d (the kafka-ui service)")
