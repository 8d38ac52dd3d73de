"""Shared fixtures: real minikafka clusters on loopback for real Kafka clients."""

from __future__ import annotations

import os
import shutil
import uuid

import pytest
from kafka.admin import KafkaAdminClient

from minikafka import Cluster


@pytest.fixture
def make_cluster(tmp_path):
    """Factory: ``make_cluster(brokers=1, config={...}, data_dir=None, in_memory=False)``.

    Every cluster it starts is stopped at the end of the test. With no ``data_dir`` the
    cluster uses a fresh directory under the test's tmp_path (kept for restarts).
    """
    started = []

    def factory(**kwargs):
        # Kafka waits 3 s for more members before a new group's first rebalance; tests that
        # are not about that delay skip it (tests/groups/test_states.py sets it explicitly).
        kwargs["config"] = {"group.initial.rebalance.delay.ms": 0, **(kwargs.get("config") or {})}
        kwargs.setdefault("data_dir", None if kwargs.get("in_memory") else tmp_path / f"data-{len(started)}")
        cluster = Cluster(**kwargs).start()
        started.append(cluster)
        return cluster

    yield factory
    for cluster in started:
        cluster.stop()


@pytest.fixture
def cluster(make_cluster):
    """One started single-broker cluster with Kafka's defaults."""
    return make_cluster()


@pytest.fixture
def bootstrap(cluster) -> str:
    return cluster.bootstrap_servers


@pytest.fixture
def topic_name() -> str:
    return "t-" + uuid.uuid4().hex[:8]


def has_kcat() -> bool:
    return shutil.which("kcat") is not None


# Spark's JVM in this test run, and in every process it starts (nbval, papermill, JupyterLab's
# kernels, the deck build): the client JIT only (C1) and the serial collector. A notebook's Spark
# lives a minute or two, too short for the optimising JIT to pay back the CPU it spends compiling:
# notebook 11 under papermill took 30 s of CPU instead of 47 s, with the same outputs. Nothing the
# notebooks print changes (spark-submit puts these on the JVM's command line; it says nothing).
SPARK_TEST_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
if SPARK_TEST_JVM not in os.environ.get("SPARK_SUBMIT_OPTS", ""):
    os.environ["SPARK_SUBMIT_OPTS"] = f"{os.environ.get('SPARK_SUBMIT_OPTS', '')} {SPARK_TEST_JVM}".strip()

# The longest single test is the deck build (every lesson, English and Spanish, executed once
# for the slide tests). Started last, it alone would stretch the end of a parallel run by ten
# minutes; started first, it runs while the other workers get through everything else.
FIRST = ("tests/slides/",)


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: 0 if item.nodeid.startswith(FIRST) else 1)  # stable: same order otherwise


@pytest.fixture
def kafka_admin():  # shared by tests/admin and tests/replication
    """Factory: ``kafka_admin(cluster)`` -> a kafka-python KafkaAdminClient on that cluster."""
    made: list[KafkaAdminClient] = []

    def factory(cluster) -> KafkaAdminClient:
        made.append(KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=10000))
        return made[-1]

    yield factory
    for client in made:
        client.close()


def pytest_terminal_summary(terminalreporter, exitstatus):
    """An empty selection is a mistake worth one clear sentence, not only exit code 5 (which
    `./course test` passes on, so CI still fails on a selection that matches nothing)."""
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        terminalreporter.write_line(
            "No test ran: nothing matched the selection (check the -k expression, the -m marker or the "
            "paths given); exit code 5.", red=True, bold=True)
