"""The course's Kafka Connect worker, driven over its REST API with the JSON a real Connect cluster takes.

Data lands in real files and in the machine's PostgreSQL; configurations, source offsets
and states live in connect-configs, connect-offsets and connect-status, so a worker
started later on the same cluster carries on where the first one stopped.
"""

from __future__ import annotations

import json
import time
import uuid

import pytest
import requests
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from kafka_course.clients import committed
from kafka_course.ecosystem import servers
from kafka_course.ecosystem._kafka import read_to_end
from kafka_course.ecosystem.connect import ConnectServer
from kafka_course.ecosystem.schema_registry import SchemaRegistryServer

STRING = "org.apache.kafka.connect.storage.StringConverter"
SALE = {"type": "record", "name": "Sale", "fields": [
    {"name": "id", "type": "int"}, {"name": "customer", "type": "string"}, {"name": "amount", "type": "double"},
    {"name": "card", "type": "string"}]}


@pytest.fixture(scope="module")
def worker(shared_cluster):
    server = ConnectServer(shared_cluster.bootstrap_servers, config={"offset.flush.interval.ms": "300"}).start()
    yield server
    server.stop()


def wait_for(condition, timeout=20.0, what="the condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def post(url, name, config):
    answer = requests.post(f"{url}/connectors", json={"name": name, "config": config}, timeout=30)
    assert answer.status_code == 201, answer.text
    return answer.json()


def task_state(url, name):
    tasks = requests.get(f"{url}/connectors/{name}/status", timeout=10).json()["tasks"]
    return tasks[0]["state"] if tasks else None


def test_file_source_to_topic_to_file_sink_and_resume_after_a_worker_restart(shared_cluster, worker, tmp_path):
    bootstrap, name = shared_cluster.bootstrap_servers, uuid.uuid4().hex[:6]
    source_file, sink_file, topic = tmp_path / "in.txt", tmp_path / "out.txt", f"lines-{name}"
    source_file.write_text("first\nsecond\n")
    created = post(worker.url, f"src-{name}", {
        "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "tasks.max": "1",
        "file": str(source_file), "topic": topic, "value.converter": STRING})
    assert created["type"] == "source" and created["tasks"] == [{"connector": f"src-{name}", "task": 0}]
    post(worker.url, f"sink-{name}", {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": topic,
                                      "value.converter": STRING})
    wait_for(lambda: sink_file.exists() and sink_file.read_text() == "first\nsecond\n", what="the sink file")
    offsets = wait_for(lambda: requests.get(f"{worker.url}/connectors/src-{name}/offsets",
                                            timeout=10).json()["offsets"])
    assert offsets == [{"partition": {"filename": str(source_file)}, "offset": {"position": 13}}]
    stored = {m.key(): json.loads(m.value()) for m in read_to_end(bootstrap, "connect-offsets") if m.value()}
    assert stored[json.dumps([f"src-{name}", {"filename": str(source_file)}], separators=(",", ":")).encode()] == {
        "position": 13}
    wait_for(lambda: committed(f"connect-sink-{name}", topic, bootstrap=bootstrap) == {0: 2}, what="a sink commit")
    assert requests.put(f"{worker.url}/connectors/sink-{name}/pause", timeout=10).status_code == 202

    worker.stop()  # the worker goes away; its connectors, offsets and states stay in Kafka
    with source_file.open("a") as out:
        out.write("third\n")
    again = ConnectServer(bootstrap, config={"offset.flush.interval.ms": "300"}).start()
    try:
        status = requests.get(f"{again.url}/connectors?expand=status", timeout=10).json()
        assert status[f"sink-{name}"]["status"]["connector"]["state"] == "PAUSED"
        wait_for(lambda: len([m for m in read_to_end(bootstrap, topic)]) >= 3, what="the third line in the topic")
        assert [m.value() for m in read_to_end(bootstrap, topic)] == [b"first", b"second", b"third"]  # no repeat
        assert requests.put(f"{again.url}/connectors/sink-{name}/resume", timeout=10).status_code == 202
        wait_for(lambda: sink_file.read_text() == "first\nsecond\nthird\n", what="the third line")
        for connector in (f"src-{name}", f"sink-{name}"):
            assert requests.delete(f"{again.url}/connectors/{connector}", timeout=20).status_code == 204
        assert requests.get(f"{again.url}/connectors/src-{name}", timeout=10).json() == {
            "error_code": 404, "message": f"Connector src-{name} not found"}
    finally:
        again.stop()
        worker.__init__(bootstrap, config={"offset.flush.interval.ms": "300"})  # the module's worker, for the rest
        worker.start()


def test_configurations_are_judged_as_a_real_worker_judges_them(worker, tmp_path):
    url = worker.url
    missing = requests.post(f"{url}/connectors", json={"name": "x", "config": {"connector.class": "FileStreamSource"}},
                            timeout=10)
    assert missing.status_code == 400
    assert 'Missing required configuration "topic" which has no default value.' in missing.json()["message"]
    no_topics = requests.post(f"{url}/connectors", json={"name": "x", "config": {"connector.class": "FileStreamSink"}},
                              timeout=10).json()
    assert "Must configure one of topics or topics.regex" in no_topics["message"]
    unknown = requests.post(f"{url}/connectors", json={"name": "x", "config": {"connector.class": "com.acme.Nope"}},
                            timeout=10)
    assert unknown.status_code == 500 and "Failed to find any class" in unknown.json()["message"]
    check = requests.put(f"{url}/connector-plugins/FileStreamSinkConnector/config/validate", timeout=10, json={
        "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "name": "x", "topics": "t",
        "tasks.max": "two", "transforms": "mask", "transforms.mask.type": "org.apache.kafka.connect.transforms.Nope"})
    errors = {c["value"]["name"]: c["value"]["errors"] for c in check.json()["configs"] if c["value"]["errors"]}
    assert check.json()["error_count"] == 2 and set(errors) == {"tasks.max", "transforms.mask.type"}
    plugins = {p["class"] for p in requests.get(f"{url}/connector-plugins", timeout=10).json()}
    assert {"io.confluent.connect.jdbc.JdbcSinkConnector",
            "org.apache.kafka.connect.file.FileStreamSourceConnector"} <= plugins
    config = {"connector.class": "FileStreamSink", "topics": "t", "file": str(tmp_path / "o.txt")}
    post(url, "twice", config)
    again = requests.post(f"{url}/connectors", json={"name": "twice", "config": config}, timeout=10)
    assert again.status_code == 409 and again.json()["message"] == "Connector twice already exists"
    changed = requests.put(f"{url}/connectors/twice/config", json={**config, "tasks.max": "2"}, timeout=20)
    assert changed.status_code == 200
    assert len(requests.get(f"{url}/connectors/twice/tasks", timeout=10).json()) == 2
    assert requests.delete(f"{url}/connectors/twice", timeout=20).status_code == 204


postgres = pytest.mark.skipif(not servers.POSTGRES.up(), reason="PostgreSQL is not running on 127.0.0.1:5432")


@postgres
def test_jdbc_sink_upserts_avro_records_with_transforms_into_postgresql(shared_cluster, worker):
    import psycopg
    bootstrap, name = shared_cluster.bootstrap_servers, uuid.uuid4().hex[:6]
    topic = f"sales_{name}"
    registry = SchemaRegistryServer(bootstrap).start()
    try:
        serialize = AvroSerializer(SchemaRegistryClient({"url": registry.url}), json.dumps(SALE))
        producer = Producer({"bootstrap.servers": bootstrap})
        for i in [1, 2, 3, 2]:  # sale 2 twice: the second version wins
            sale = {"id": i, "customer": f"c{i}", "amount": 10.0 * i, "card": "4000 0000 0000 0002"}
            producer.produce(topic, serialize(sale, SerializationContext(topic, MessageField.VALUE)), str(i))
        producer.flush(10)
        config = {
            "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector", "topics": topic,
            "connection.url": "jdbc:postgresql://127.0.0.1:5432/test?user=postgres",
            "key.converter": STRING, "value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": registry.url,
            "insert.mode": "upsert", "pk.mode": "record_value", "pk.fields": "id", "auto.create": "true",
            "transforms": "dropCard,addShop",
            "transforms.dropCard.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
            "transforms.dropCard.exclude": "card",
            "transforms.addShop.type": "org.apache.kafka.connect.transforms.InsertField$Value",
            "transforms.addShop.static.field": "shop", "transforms.addShop.static.value": "eu"}
        post(worker.url, f"db-{name}", config)
        with psycopg.connect(servers.POSTGRES_DSN, autocommit=True) as db:
            def rows():
                try:
                    return db.execute(f'SELECT id, customer, amount, shop FROM "{topic}" ORDER BY id').fetchall()
                except psycopg.errors.UndefinedTable:
                    return []
            assert wait_for(lambda: len(rows()) == 3 and rows(), what="three rows") == [
                (1, "c1", 10.0, "eu"), (2, "c2", 20.0, "eu"), (3, "c3", 30.0, "eu")]
            columns = [r[0] for r in db.execute("SELECT column_name FROM information_schema.columns WHERE "
                                                "table_name = %s ORDER BY ordinal_position", [topic])]
            assert columns == ["id", "customer", "amount", "shop"]  # no card column ever existed
            requests.delete(f"{worker.url}/connectors/db-{name}", timeout=20)
            post(worker.url, f"db-{name}-replay", config)  # a new group: everything written again
            wait_for(lambda: committed(f"connect-db-{name}-replay", topic, bootstrap=bootstrap).get(0) == 4,
                     what="the replay's commit")
            assert len(rows()) == 3  # upsert by id: a replay changes nothing
            db.execute(f'DROP TABLE "{topic}"')
        requests.delete(f"{worker.url}/connectors/db-{name}-replay", timeout=20)
    finally:
        registry.stop()


@postgres
def test_a_sink_without_a_schema_fails_its_task_with_the_reason_then_restarts(shared_cluster, worker):
    bootstrap, name = shared_cluster.bootstrap_servers, uuid.uuid4().hex[:6]
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(f"plain-{name}", json.dumps({"id": 1}).encode())
    producer.flush(10)
    config = {"connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector", "topics": f"plain-{name}",
              "connection.url": "jdbc:postgresql://127.0.0.1:5432/test?user=postgres", "auto.create": "true",
              "value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "value.converter.schemas.enable": "false"}
    post(worker.url, f"plain-{name}", config)
    wait_for(lambda: task_state(worker.url, f"plain-{name}") == "FAILED", what="the task to fail")
    trace = requests.get(f"{worker.url}/connectors/plain-{name}/status", timeout=10).json()["tasks"][0]["trace"]
    assert "requires records with a non-null Struct value and non-null Struct schema" in trace
    restarted = requests.post(f"{worker.url}/connectors/plain-{name}/restart?includeTasks=true&onlyFailed=true",
                              timeout=20)
    assert restarted.status_code == 202
    wait_for(lambda: task_state(worker.url, f"plain-{name}") == "FAILED", what="the same failure again")
    requests.delete(f"{worker.url}/connectors/plain-{name}", timeout=20)
