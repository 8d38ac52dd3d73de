"""One minikafka per test module for the ecosystem servers: they keep their state in its topics."""

from __future__ import annotations

import pytest

from minikafka import Cluster


@pytest.fixture(scope="module")
def shared_cluster(tmp_path_factory):
    cluster = Cluster(data_dir=tmp_path_factory.mktemp("kafka"),
                      config={"group.initial.rebalance.delay.ms": 0}).start()
    yield cluster
    cluster.stop()
