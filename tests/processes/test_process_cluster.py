"""Brokers and controllers as separate processes (``minikafka.processes``), driven by the real clients over TCP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from minikafka.processes import ProcessCluster, _alive_pid, ask, wait_for
from minikafka.protocol import codec


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


def partition_leader(bootstrap: str, topic: str, partition: int = 0) -> int:
    """The partition's leader as a broker's Metadata says (-1: none, or not known yet)."""
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10)
    found = metadata.topics[topic].partitions.get(partition)
    return -1 if found is None else found.leader


def in_sync(bootstrap: str, topic: str, partition: int = 0) -> list[int]:
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10)
    found = metadata.topics[topic].partitions.get(partition)
    return [] if found is None else list(found.isrs)


@pytest.mark.slow
def test_kill_9_of_the_leader_broker_loses_nothing_acknowledged_and_the_restarted_broker_catches_up(tmp_path):
    options = ("--broker-session-timeout-ms", "4000")
    with ProcessCluster(brokers=3, controllers=3, data_dir=tmp_path, controller_options=options) as pc:
        create_topic(pc.bootstrap_servers, "safe", 1, 3)
        wait_for("a leader for safe-0", lambda: partition_leader(pc.bootstrap_servers, "safe") in pc.broker_ids, 20)
        acked: list[bytes] = []
        producer = Producer({"bootstrap.servers": pc.bootstrap_servers, "acks": "all", "enable.idempotence": True,
                             "message.timeout.ms": 60_000})

        def delivered(err, message):
            if err is None:
                acked.append(message.value())

        def write(first: int, count: int) -> None:
            for i in range(first, first + count):
                producer.produce("safe", value=f"r{i}".encode(), on_delivery=delivered)
                producer.poll(0)
            producer.flush(60)

        write(0, 200)
        leader = partition_leader(pc.bootstrap_servers, "safe")
        pc.kill(leader)
        others = [b for b in pc.broker_ids if b != leader]
        via = pc.bootstrap(others)
        new_leader = wait_for("a new leader", lambda: (n := partition_leader(via, "safe")) not in (leader, -1) and n,
                              30)
        assert new_leader in others
        write(200, 200)
        assert len(acked) == 400
        got = consume_all(via, "safe", 400, timeout=60)
        assert sorted(set(got)) == sorted(acked) and len(got) == len(set(got))

        pc.restart(leader)
        wait_for(f"broker {leader} back in the ISR", lambda: leader in in_sync(via, "safe"), 60)


def test_serve_with_controllers_runs_the_processes_and_stops_them_on_sigterm(tmp_path):
    serve = subprocess.Popen([sys.executable, "-m", "minikafka", "serve", "--brokers", "1", "--controllers", "1",
                              "--port", "0", "--data-dir", str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        line = serve.stdout.readline()
        assert "1 broker process(es)" in line and "1 controller process(es) 2@127.0.0.1:" in line
        bootstrap = line.split(" on ")[1].split(";")[0]
        create_topic(bootstrap, "served", 1, 1)
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(60) == 0
        assert "stopped cleanly" in serve.stdout.read()
        assert (tmp_path / "b1" / ".kafka_cleanshutdown").exists()
        assert "broker 1 stopped cleanly" in (tmp_path / "b1.out").read_text()
    finally:
        if serve.poll() is None:
            serve.kill()


def test_a_broker_cut_off_from_the_controllers_is_fenced_and_comes_back_when_the_link_heals(tmp_path):
    options = ("--broker-session-timeout-ms", "3000")
    with ProcessCluster(brokers=2, controllers=1, data_dir=tmp_path, links=True, controller_options=options) as pc:
        assert pc.network is not None
        controller = pc.controller_ids[0]
        assert pc.live_brokers(2) == {1, 2}
        pc.network.partition("b1", pc.name(controller))
        wait_for("broker 1 fenced", lambda: pc.live_brokers(2) == {2}, 30)
        assert pc.alive(1)  # alive, serving, but cut off: the controller fenced it
        pc.network.heal()
        wait_for("broker 1 unfenced", lambda: pc.live_brokers(2) == {1, 2}, 30)


def test_describe_quorum_at_a_broker_is_the_quorums_own_answer(single):
    controller = single.controller_ids[0]
    direct = single.describe_quorum(controller)
    module = codec.request_module(55, 2)
    partition = codec.entity(module, "PartitionData", partition_index=0)
    topic = codec.entity(module, "TopicData", topic_name="__cluster_metadata", partitions=(partition,))
    answer = ask(("127.0.0.1", single.ports[1]), codec.make(codec.request_class(55, 2), topics=(topic,)))
    got = answer.topics[0].partitions[0]
    assert got.leader_id == direct.leader_id == controller
    assert [v.replica_id for v in got.current_voters] == [controller]
    assert {o.replica_id for o in got.observers} == {1}


def test_a_paused_active_controller_is_replaced_and_follows_the_new_one_when_resumed(tmp_path):
    with ProcessCluster(brokers=1, controllers=3, data_dir=tmp_path) as pc:
        first = pc.active_controller()
        pc.pause(first)  # SIGSTOP: alive, silent
        second = wait_for("another active controller",
                          lambda: (n := pc.active_controller()) not in (None, first) and n, 20)
        create_topic(pc.bootstrap_servers, "while-paused", 1, 1)  # the broker forwards to the new leader
        pc.resume(first)
        wait_for(f"controller {first} following {second}",
                 lambda: (q := pc.describe_quorum(first)).leader_id == second and q.error_code != 0, 20)
        assert pc.active_controller() == second


def test_a_metadata_change_is_never_made_on_one_brokers_copy_alone(single):
    """ACLs are kept in no metadata log of the quorum yet: the broker refuses CreateAcls rather than keep
    it in its own copy (the brokers would disagree); with no controller answering, CreateTopics times out
    (REQUEST_TIMED_OUT, as a Kafka broker's forwarding answers) instead of being made on the broker. As
    on Kafka, a timed-out request may still be carried out once the controller resumes."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType

    admin = AdminClient({"bootstrap.servers": single.bootstrap_servers})
    acl = AclBinding(ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL, "User:alice", "*",
                     AclOperation.READ, AclPermissionType.ALLOW)
    with pytest.raises(KafkaException, match=r"INVALID_REQUEST|nvalid request"):
        admin.create_acls([acl])[acl].result(30)
    single.pause(single.controller_ids[0])
    try:
        future = admin.create_topics([NewTopic("lonely", 1, 1)], request_timeout=40)["lonely"]
        with pytest.raises(KafkaException, match=r"REQUEST_TIMED_OUT|timed out|Timed out"):
            future.result(60)
    finally:
        single.resume(single.controller_ids[0])


def test_the_course_stops_crashes_and_starts_a_process_clusters_brokers_as_it_does_compose_services(tmp_path,
                                                                                                   monkeypatch):
    """The notebooks' broker-control cells, one code path: with ``MINIKAFKA_PROCESS_CLUSTER`` naming a running
    process cluster's data directory, ``course.cluster()`` stops (SIGTERM), crashes (SIGKILL) and starts its
    broker processes from another process, and the cluster that started them still stops them all."""
    script = """
import os, time
from kafka_course import handle
cluster = handle.cluster()
assert cluster.can_control_brokers and not cluster.is_minikafka
def listed():
    return set(cluster.brokers())
cluster.crash_broker(2)
deadline = time.monotonic() + 40
while 2 in listed() and time.monotonic() < deadline:
    time.sleep(0.5)
print("after crash", sorted(listed()))
cluster.start_broker(2)
deadline = time.monotonic() + 40
while 2 not in listed() and time.monotonic() < deadline:
    time.sleep(0.5)
print("after start", sorted(listed()))
cluster.stop_broker(2)
print("after stop", sorted(listed()))
cluster.start_broker(2)
"""
    with pytest.raises(RuntimeError, match=r"unknown broker setting 'broker\.session\.timeout\.ms'"):
        ProcessCluster(brokers=1, controllers=1, data_dir=tmp_path / "wrong",
                       config={"broker.session.timeout.ms": 3000}).start()  # a controller's setting, not a broker's
    with ProcessCluster(brokers=2, controllers=1, data_dir=tmp_path) as pc:
        env = {**os.environ, "KAFKA_BOOTSTRAP_SERVERS": pc.bootstrap_servers,
               "MINIKAFKA_PROCESS_CLUSTER": str(tmp_path), "KAFKA_COMPOSE_FILE": str(tmp_path / "none.yml")}
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=180)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "after crash [1]" in done.stdout and "after start [1, 2]" in done.stdout, done.stdout
        assert "after stop [1]" in done.stdout, done.stdout
        restarted = json.loads((tmp_path / "cluster.json").read_text())["nodes"]["2"]["pid"]
        assert restarted != pc.procs[2].pid
    assert not _alive_pid(restarted)  # the cluster's stop() stopped the broker another process started


def test_serve_with_controllers_refuses_security_settings_with_a_sentence(tmp_path):
    done = subprocess.run([sys.executable, "-m", "minikafka", "serve", "--brokers", "1", "--controllers", "1",
                           "--data-dir", str(tmp_path), "--config", "authorizer.class.name=StandardAuthorizer"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "authorizer.class.name: broker processes (serve --controllers) take no security settings" in done.stderr


def test_a_malformed_admin_frame_is_refused_at_the_broker_and_never_forwarded(single):
    """A CreateTopics frame whose topic count is 2^30 with nothing behind it: the broker closes that
    connection at once, as for any malformed request, answers the next client, and the controller
    logs nothing about it (it never saw it)."""
    import socket
    import struct

    host, port = single.bootstrap_servers.split(",")[0].rsplit(":", 1)
    header = struct.pack(">hhih", 19, 7, 1, 4) + b"evil" + b"\0"  # CreateTopics v7 (flexible), client "evil"
    frame = header + bytes([0x80, 0x80, 0x80, 0x80, 0x04])  # compact array length 2^30, no topics behind it
    started = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(struct.pack(">i", len(frame)) + frame)
        assert sock.recv(4) == b""  # closed, no answer
    assert time.monotonic() - started < 5
    admin = AdminClient({"bootstrap.servers": single.bootstrap_servers})
    assert admin.list_topics(timeout=20).brokers  # the broker answers the next client
    assert "evil" not in single.output(single.controller_ids[0])
