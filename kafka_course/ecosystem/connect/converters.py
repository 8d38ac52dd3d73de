"""Converters: between Kafka's bytes and Connect's (schema, value), named by Kafka's class names.

* ``org.apache.kafka.connect.json.JsonConverter``: with ``schemas.enable=true`` (its default)
  every message is an envelope ``{"schema": {...}, "payload": ...}``; with ``false``, plain JSON
  and no schema.
* ``org.apache.kafka.connect.storage.StringConverter`` and
  ``org.apache.kafka.connect.converters.ByteArrayConverter``.
* ``io.confluent.connect.avro.AvroConverter`` (``schema.registry.url``): reads the 5-byte
  header, fetches the writer's schema from the registry, decodes the Avro body. Here it
  converts from Kafka only (sink connectors); a source needs a converter to Kafka.
"""

from __future__ import annotations

import io
import json
from typing import Any

from .data import PRIMITIVES, Field, Schema

JSON_TYPES = {"float": "float32", "double": "float64"}  # JsonConverter's names for Connect's float types
JSON_NAMES = {v: k for k, v in JSON_TYPES.items()}


class DataException(ValueError):
    """org.apache.kafka.connect.errors.DataException: a record the converter cannot handle."""


class Converter:
    def __init__(self, config: dict[str, str], is_key: bool):
        self.config, self.is_key = config, is_key

    def to_connect(self, topic: str, data: bytes | None) -> tuple[Schema | None, Any]:
        raise NotImplementedError

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        raise NotImplementedError


class StringConverter(Converter):
    def to_connect(self, topic: str, data: bytes | None) -> tuple[Schema | None, Any]:
        return (Schema("string", optional=True), None if data is None else data.decode())

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        return None if value is None else str(value).encode()


class ByteArrayConverter(Converter):
    def to_connect(self, topic: str, data: bytes | None) -> tuple[Schema | None, Any]:
        return Schema("bytes", optional=True), data

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if value is not None and not isinstance(value, bytes):
            raise DataException(f"ByteArrayConverter is not compatible with objects of type {type(value).__name__}")
        return value


class JsonConverter(Converter):
    @property
    def schemas(self) -> bool:
        return str(self.config.get("schemas.enable", "true")).lower() == "true"

    def to_connect(self, topic: str, data: bytes | None) -> tuple[Schema | None, Any]:
        if data is None:
            return None, None
        try:
            parsed = json.loads(data)
        except ValueError as e:
            raise DataException("Converting byte[] to Kafka Connect data failed due to serialization error: "
                                f"{e}") from e
        if not self.schemas:
            return None, parsed
        if not isinstance(parsed, dict) or set(parsed) != {"schema", "payload"}:
            raise DataException(
                "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain "
                "additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in "
                "your converter configuration.")
        return (None if parsed["schema"] is None else schema_from_json(parsed["schema"])), parsed["payload"]

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if schema is None and value is None:
            return None
        if not self.schemas:
            return json.dumps(value).encode()
        return json.dumps({"schema": None if schema is None else schema_to_json(schema), "payload": value}).encode()


def schema_from_json(spec: dict) -> Schema:
    kind = JSON_TYPES.get(spec["type"], spec["type"])
    optional = bool(spec.get("optional", False))
    if kind == "struct":
        fields = tuple(Field(f["field"], schema_from_json(f)) for f in spec.get("fields", []))
        return Schema("struct", optional, fields, spec.get("name"))
    if kind == "array":
        return Schema("array", optional, items=schema_from_json(spec["items"]))
    if kind == "map":
        return Schema("map", optional, keys=schema_from_json(spec["keys"]), items=schema_from_json(spec["values"]))
    if kind not in PRIMITIVES:
        raise DataException(f"Unknown schema type: {spec['type']}")
    return Schema(kind, optional, name=spec.get("name"))


def schema_to_json(schema: Schema) -> dict:
    out: dict[str, Any] = {"type": JSON_NAMES.get(schema.type, schema.type)}
    if schema.type == "struct":
        out["fields"] = [{**schema_to_json(f.schema), "field": f.name} for f in schema.fields]
    elif schema.type == "array" and schema.items is not None:
        out["items"] = schema_to_json(schema.items)
    out["optional"] = schema.optional
    if schema.name:
        out["name"] = schema.name
    return out


class AvroConverter(Converter):
    def __init__(self, config: dict[str, str], is_key: bool):
        super().__init__(config, is_key)
        url = config.get("schema.registry.url")
        if not url:
            raise DataException("Missing required configuration \"schema.registry.url\" which has no default value.")
        from confluent_kafka.schema_registry import SchemaRegistryClient
        self.registry = SchemaRegistryClient({"url": url})
        self._schemas: dict[int, tuple[Any, Schema]] = {}

    def to_connect(self, topic: str, data: bytes | None) -> tuple[Schema | None, Any]:
        import fastavro
        if data is None:
            return None, None
        if len(data) < 5 or data[0] != 0:
            raise DataException("Unknown magic byte!")
        schema_id = int.from_bytes(data[1:5], "big")
        if schema_id not in self._schemas:
            text = self.registry.get_schema(schema_id).schema_str
            assert text is not None  # a schema the registry returns by id has its text
            parsed = fastavro.parse_schema(json.loads(text))
            self._schemas[schema_id] = (parsed, schema_from_avro(json.loads(text)))
        parsed, connect_schema = self._schemas[schema_id]
        return connect_schema, fastavro.schemaless_reader(io.BytesIO(data[5:]), parsed)

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        raise DataException("this worker's AvroConverter converts from Kafka only (sink connectors)")


AVRO_TYPES = {"int": "int32", "long": "int64", "float": "float32", "double": "float64", "boolean": "boolean",
              "string": "string", "bytes": "bytes"}


def schema_from_avro(avro: Any, optional: bool = False) -> Schema:
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) != 1:
            raise DataException(f"Avro unions other than [null, X] are not supported here: {avro}")
        return schema_from_avro(branches[0], optional=True)
    if isinstance(avro, dict):
        kind = avro["type"]
        if kind == "record":
            fields = tuple(Field(f["name"], schema_from_avro(f["type"])) for f in avro["fields"])
            return Schema("struct", optional, fields, avro.get("name"))
        if kind == "array":
            return Schema("array", optional, items=schema_from_avro(avro["items"]))
        if kind == "map":
            return Schema("map", optional, keys=Schema("string"), items=schema_from_avro(avro["values"]))
        if kind == "enum":
            return Schema("string", optional, name=avro.get("name"))
        return schema_from_avro(kind, optional)
    if avro not in AVRO_TYPES:
        raise DataException(f"Avro type {avro} is not supported here")
    return Schema(AVRO_TYPES[avro], optional)


CONVERTERS = {
    "org.apache.kafka.connect.json.JsonConverter": JsonConverter,
    "org.apache.kafka.connect.storage.StringConverter": StringConverter,
    "org.apache.kafka.connect.converters.ByteArrayConverter": ByteArrayConverter,
    "io.confluent.connect.avro.AvroConverter": AvroConverter,
}


def make(class_name: str, config: dict[str, str], is_key: bool) -> Converter:
    return CONVERTERS[class_name](config, is_key)
