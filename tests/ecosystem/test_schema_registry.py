"""The course's schema registry, driven by confluent-kafka's own SchemaRegistryClient and serializers.

Every test goes through HTTP to the server, which keeps its state in the ``_schemas`` topic
of a real (minikafka) cluster: the wire format, the error codes and the records are the
ones Confluent Schema Registry uses.
"""

from __future__ import annotations

import json
import uuid

import pytest
import requests
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from kafka_course.ecosystem._kafka import read_to_end
from kafka_course.ecosystem.schema_registry import SchemaRegistryServer

CUSTOMER_V1 = {"type": "record", "name": "Customer", "namespace": "shop",
               "fields": [{"name": "id", "type": "int"}, {"name": "name", "type": "string"}]}
CUSTOMER_V2 = {**CUSTOMER_V1, "fields": CUSTOMER_V1["fields"] + [
    {"name": "email", "type": ["null", "string"], "default": None}]}
CUSTOMER_BAD = {**CUSTOMER_V1, "fields": [{"name": "id", "type": "string"}, {"name": "email", "type": "string"}]}


@pytest.fixture(scope="module")
def registry(shared_cluster):
    server = SchemaRegistryServer(shared_cluster.bootstrap_servers).start()
    yield server
    server.stop()


@pytest.fixture
def client(registry):
    return SchemaRegistryClient({"url": registry.url})


@pytest.fixture
def subject():
    return f"s-{uuid.uuid4().hex[:8]}-value"


def avro(schema: dict) -> Schema:
    return Schema(json.dumps(schema), "AVRO")


def refused(call) -> SchemaRegistryError:
    with pytest.raises(SchemaRegistryError) as caught:
        call()
    return caught.value


def test_avro_records_carry_magic_byte_and_schema_id_through_kafka(shared_cluster, client, subject):
    bootstrap, topic = shared_cluster.bootstrap_servers, subject.removesuffix("-value")
    serialize = AvroSerializer(client, json.dumps(CUSTOMER_V1))  # registers the schema on first use
    producer = Producer({"bootstrap.servers": bootstrap})
    for customer in [{"id": 1, "name": "Ana"}, {"id": 2, "name": "Bruno"}]:
        producer.produce(topic, serialize(customer, SerializationContext(topic, MessageField.VALUE)))
    assert producer.flush(10) == 0
    schema_id = client.get_latest_version(subject).schema_id
    values = [m.value() for m in read_to_end(bootstrap, topic)]
    assert [v[0] for v in values] == [0, 0] and {int.from_bytes(v[1:5], "big") for v in values} == {schema_id}
    deserialize = AvroDeserializer(client)
    assert [deserialize(v, SerializationContext(topic, MessageField.VALUE)) for v in values] == [
        {"id": 1, "name": "Ana"}, {"id": 2, "name": "Bruno"}]


def test_json_schema_serializer_round_trip_and_validation(client, subject):
    schema = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
    serialize = JSONSerializer(json.dumps(schema), client)
    ctx = SerializationContext(subject.removesuffix("-value"), MessageField.VALUE)
    data = serialize({"id": 7}, ctx)
    assert data[0] == 0 and json.loads(data[5:]) == {"id": 7}
    assert JSONDeserializer(None, schema_registry_client=client)(data, ctx) == {"id": 7}
    assert client.get_latest_version(subject).schema.schema_type == "JSON"
    with pytest.raises(Exception, match=r"is not of type .integer."):
        serialize({"id": "seven"}, ctx)


def test_an_incompatible_change_is_refused_with_409_and_the_reason(registry, client, subject):
    first = client.register_schema(subject, avro(CUSTOMER_V1))
    assert client.register_schema(subject, avro(CUSTOMER_V1)) == first  # the same schema: no new version
    assert client.register_schema(subject, avro(CUSTOMER_V2)) != first
    error = refused(lambda: client.register_schema(subject, avro(CUSTOMER_BAD)))
    assert (error.http_status_code, error.error_code) == (409, 409)
    assert "TYPE_MISMATCH" in error.error_message and "'/fields/0/type'" in error.error_message
    assert client.get_versions(subject) == [1, 2]
    assert not client.test_compatibility(subject, avro(CUSTOMER_BAD))
    verbose = requests.post(f"{registry.url}/compatibility/subjects/{subject}/versions/latest?verbose=true",
                            json={"schema": json.dumps(CUSTOMER_BAD)}, timeout=5)
    assert verbose.headers["Content-Type"] == "application/vnd.schemaregistry.v1+json"
    assert verbose.json()["is_compatible"] is False and any("email" in m for m in verbose.json()["messages"])
    client.set_compatibility(subject, "NONE")
    assert client.get_compatibility(subject) == "NONE" and client.register_schema(subject, avro(CUSTOMER_BAD))


def test_compatibility_levels_per_subject_and_global(registry, client, subject):
    assert client.get_compatibility() == "BACKWARD"
    assert refused(lambda: client.get_compatibility(subject)).error_code == 40408
    client.register_schema(subject, avro(CUSTOMER_V1))
    client.set_compatibility(subject, "FORWARD")
    widened = {**CUSTOMER_V1, "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "string"}]}
    assert refused(lambda: client.register_schema(subject, avro(widened))).error_code == 409  # old readers: int
    client.set_compatibility(subject, "BACKWARD")
    assert client.register_schema(subject, avro(widened))  # new readers promote int to long
    assert refused(lambda: client.set_compatibility(subject, "SIDEWAYS")).error_code == 42203
    answer = requests.get(f"{registry.url}/config/{subject}", timeout=5).json()
    assert answer == {"compatibilityLevel": "BACKWARD"}


def test_soft_then_hard_delete_with_the_registrys_error_codes(client, subject):
    client.register_schema(subject, avro(CUSTOMER_V1))
    second = client.register_schema(subject, avro(CUSTOMER_V2))
    assert refused(lambda: client.delete_version(subject, 2, permanent=True)).error_code == 40407
    assert client.delete_version(subject, 2) == 2
    assert refused(lambda: client.delete_version(subject, 2)).error_code == 40406
    assert refused(lambda: client.get_version(subject, 2)).error_code == 40402
    assert client.get_schema(second).schema_str  # soft-deleted schemas still decode old records
    assert client.delete_version(subject, 2, permanent=True) == 2
    assert refused(lambda: client.delete_subject(subject, permanent=True)).error_code == 40405
    assert client.delete_subject(subject) == [1] and subject not in client.get_subjects()
    assert refused(lambda: client.delete_subject(subject)).error_code == 40404
    assert client.delete_subject(subject, permanent=True) == [1]
    assert refused(lambda: client.get_versions(subject)).error_code == 40401


def test_lookup_ids_and_not_found_errors(registry, client, subject):
    mine = {**CUSTOMER_V1, "namespace": subject.replace("-", "_")}
    schema_id = client.register_schema(subject, avro(mine))
    found = client.lookup_schema(subject, avro(mine))
    assert (found.schema_id, found.version) == (schema_id, 1)
    assert refused(lambda: client.lookup_schema(subject, avro(CUSTOMER_V2))).error_code == 40403
    other = subject.replace("-value", "-key")
    assert client.register_schema(other, avro(mine)) == schema_id  # ids are per schema, not per subject
    assert sorted(client.get_subjects_by_schema_id(schema_id)) == sorted([subject, other])
    assert refused(lambda: client.get_schema(99999)).error_code == 40403
    assert refused(lambda: client.get_version(subject, 0)).error_code == 42202
    assert refused(lambda: client.register_schema(subject, Schema("{not json", "AVRO"))).error_code == 42201
    assert refused(lambda: client.get_latest_version("no-such-subject")).error_code == 40401
    assert set(client.get_schema_types()) == {"AVRO", "JSON", "PROTOBUF"}
    assert requests.get(f"{registry.url}/nowhere", timeout=5).json()["error_code"] == 404


def test_references_resolve_and_protect_the_referenced_version(client, subject):
    address = {"type": "record", "name": "Address", "namespace": "shop", "fields": [{"name": "city", "type": "string"}]}
    client.register_schema(f"{subject}-address", avro(address))
    customer = {**CUSTOMER_V1, "fields": CUSTOMER_V1["fields"] + [{"name": "address", "type": "shop.Address"}]}
    ref = SchemaReference("shop.Address", f"{subject}-address", 1)
    schema_id = client.register_schema(subject, Schema(json.dumps(customer), "AVRO", [ref]))
    assert client.get_referenced_by(f"{subject}-address", 1) == [schema_id]
    assert client.get_schema(schema_id).references[0].name == "shop.Address"
    assert refused(lambda: client.delete_subject(f"{subject}-address")).error_code == 42206
    missing = SchemaReference("shop.Address", "no-such-subject", 1)
    assert refused(lambda: client.register_schema(f"{subject}-2", Schema(json.dumps(customer), "AVRO",
                                                                           [missing]))).error_code == 42201


def test_protobuf_field_numbers_keep_their_wire_type(client, subject):
    v1 = 'syntax = "proto3";\npackage shop;\nmessage Customer { int32 id = 1; string name = 2; }\n'
    renamed = v1.replace("string name = 2", "string full_name = 2; int64 visits = 3")  # rename + add: fine
    retyped = v1.replace("string name = 2", "double name = 2")
    client.register_schema(subject, Schema(v1, "PROTOBUF"))
    assert client.register_schema(subject, Schema(renamed, "PROTOBUF"))
    error = refused(lambda: client.register_schema(subject, Schema(retyped, "PROTOBUF")))
    assert error.error_code == 409 and "FIELD_SCALAR_KIND_CHANGED" in error.error_message


def test_a_restarted_registry_rebuilds_its_state_from_the_schemas_topic(shared_cluster, registry, client, subject):
    first = client.register_schema(subject, avro(CUSTOMER_V1))
    client.register_schema(subject, avro(CUSTOMER_V2))
    client.delete_version(subject, 2)
    client.set_compatibility(subject, "FULL")
    keys = [json.loads(m.key()) for m in read_to_end(shared_cluster.bootstrap_servers, "_schemas")]
    assert {"keytype": "SCHEMA", "subject": subject, "version": 1, "magic": 1} in keys
    assert {"keytype": "CONFIG", "subject": subject, "magic": 0} in keys
    restarted = SchemaRegistryServer(shared_cluster.bootstrap_servers).start()
    try:
        again = SchemaRegistryClient({"url": restarted.url})
        assert restarted.url != registry.url and again.get_versions(subject) == [1]
        assert again.get_versions(subject, deleted=True) == [1, 2]
        assert again.get_schema(first).schema_str == json.dumps(CUSTOMER_V1, separators=(",", ":"))
        assert again.get_compatibility(subject) == "FULL"
        assert again.register_schema(f"{subject}-new", avro({**CUSTOMER_V1, "name": "Other"})) > first
    finally:
        restarted.stop()


def test_the_server_reads_from_kafka_not_only_from_memory(shared_cluster, client, subject):
    """A record read back by a plain consumer is what the registry wrote, value and all."""
    schema_id = client.register_schema(subject, avro(CUSTOMER_V1))
    consumer = Consumer({"bootstrap.servers": shared_cluster.bootstrap_servers, "group.id": subject,
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition("_schemas", 0, 0)])
    values = []
    for _ in range(20):
        values += [json.loads(m.value()) for m in consumer.consume(100, 0.5) if not m.error() and m.value()]
        if any(v.get("subject") == subject for v in values):
            break
    consumer.close()
    mine = next(v for v in values if v.get("subject") == subject)
    assert mine == {"subject": subject, "version": 1, "id": schema_id,
                    "schema": json.dumps(CUSTOMER_V1, separators=(",", ":")), "deleted": False}
