"""Fixtures for the lab checks' tests: one embedded cluster per test module where a check allows it."""

from __future__ import annotations

import pytest

from minikafka import Cluster


@pytest.fixture(scope="module")
def module_cluster():
    """A single-broker minikafka shared by a module's tests (each check makes its own topics)."""
    cluster = Cluster(config={"group.initial.rebalance.delay.ms": 0}).start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def module_bootstrap(module_cluster) -> str:
    return module_cluster.bootstrap_servers
