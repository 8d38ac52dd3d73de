"""Brokers and controllers as separate processes (``minikafka.processes``), driven by the real clients over TCP."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from minikafka.processes import ProcessCluster, wait_for


def consume_all(bootstrap: str, topic: str, count: int, timeout: float = 30) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{uuid.uuid4().hex[:6]}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while len(got) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                got.append(message.value())
    finally:
        consumer.close()
    return got


def create_topic(bootstrap: str, name: str, partitions: int, replication_factor: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, replication_factor)])[name].result(30)


@pytest.fixture
def single(tmp_path):
    with ProcessCluster(brokers=1, controllers=1, data_dir=tmp_path) as pc:
        yield pc


def test_one_broker_and_one_controller_serve_a_topic_to_the_real_clients(single):
    create_topic(single.bootstrap_servers, "orders", 2, 1)
    producer = Producer({"bootstrap.servers": single.bootstrap_servers, "enable.idempotence": True, "acks": "all"})
    for i in range(20):
        producer.produce("orders", key=str(i), value=f"v{i}")
    assert producer.flush(20) == 0
    got = consume_all(single.bootstrap_servers, "orders", 20)
    assert sorted(got) == sorted(f"v{i}".encode() for i in range(20))


def test_the_broker_registers_follows_the_metadata_log_as_an_observer_and_stops_cleanly(single):
    controller = single.controller_ids[0]

    def observed():
        answer = single.describe_quorum(controller)
        return answer if any(o.replica_id == 1 and o.log_end_offset > 0 for o in answer.observers) else None

    quorum = wait_for("broker 1 among the observers", observed, 20)
    assert [v.replica_id for v in quorum.current_voters] == [controller]
    assert "broker 1 registered" in single.output(1)
    assert single.terminate(1) == 0
    assert (single.log_dir(1) / ".kafka_cleanshutdown").exists()
    assert "stopped cleanly" in single.output(1)


def test_a_killed_broker_registers_again_with_a_new_incarnation(single):
    single.kill(1)
    assert not (single.log_dir(1) / ".kafka_cleanshutdown").exists()
    single.restart(1)

    def registrations():
        found = [line for line in single.output(1).splitlines() if "broker 1 registered" in line]
        return found if len(found) == 2 else None

    registrations = wait_for("broker 1 to register again", registrations, 30)
    assert registrations[0].split("incarnation ")[1] != registrations[1].split("incarnation ")[1]
    assert single.live_brokers(1) == {1}


@pytest.mark.slow
def test_killing_the_active_controller_elects_another_and_create_topics_still_works(tmp_path):
    with ProcessCluster(brokers=3, controllers=3, data_dir=tmp_path) as pc:
        first = pc.active_controller()
        assert first in pc.controller_ids
        pc.kill(first)
        second = wait_for("a new active controller", lambda: pc.active_controller(), 20)
        assert second != first
        create_topic(pc.bootstrap_servers, "after-failover", 1, 1)
        # the brokers follow the new leader: their heartbeats keep them unfenced past the session timeout
        time.sleep(10)
        assert pc.live_brokers(1) == {1, 2, 3}
        observers = {o.replica_id for o in pc.describe_quorum(second).observers}
        assert observers == {1, 2, 3}
