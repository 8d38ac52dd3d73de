"""Admin clients that are closed when the test ends (an open kafka-python client keeps
threads and sockets alive, and delays the end of the test run)."""

from __future__ import annotations

import pytest
from kafka.admin import KafkaAdminClient


@pytest.fixture
def kafka_admin():
    """Factory: ``kafka_admin(cluster)`` -> a kafka-python KafkaAdminClient on that cluster."""
    made: list[KafkaAdminClient] = []

    def factory(cluster) -> KafkaAdminClient:
        made.append(KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=10000))
        return made[-1]

    yield factory
    for client in made:
        client.close()
