"""Kafka Connect's data model: schemas, records, and how Java prints them.

Connectors never see bytes. A *converter* turns the bytes of a Kafka record into a value
and an optional *schema* (``org.apache.kafka.connect.data.Schema``): a primitive type
(int8 ... int64, float32, float64, boolean, string, bytes), an array, a map, or a struct
with named fields. A struct value is a dict here, in the order of its schema's fields; a
schemaless JSON object is a dict too, and the two are told apart by the schema.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

PRIMITIVES = ("int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string", "bytes")


@dataclass(frozen=True)
class Schema:
    type: str
    optional: bool = False
    fields: tuple[Field, ...] = ()
    name: str | None = None
    items: Schema | None = None  # an array's items, a map's values
    keys: Schema | None = None  # a map's keys

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)


@dataclass(frozen=True)
class Field:
    name: str
    schema: Schema


STRING = Schema("string")
OPTIONAL_STRING = Schema("string", optional=True)


@dataclass(frozen=True)
class ConnectRecord:
    """A SinkRecord (from Kafka, with partition and offset) or a SourceRecord (with source offsets)."""
    topic: str
    key: Any
    value: Any
    key_schema: Schema | None = None
    value_schema: Schema | None = None
    partition: int | None = None
    offset: int | None = None  # sink records only
    timestamp: int = field(default_factory=lambda: int(time.time() * 1000))
    headers: tuple[tuple[str, bytes], ...] = ()
    source_partition: dict | None = None  # source records only
    source_offset: dict | None = None

    def but(self, **changes: Any) -> ConnectRecord:
        return replace(self, **changes)

    def where(self) -> str:
        return f"(topic='{self.topic}',partition={self.partition},offset={self.offset},timestamp={self.timestamp})"


def java_string(value: Any, schema: Schema | None = None) -> str:
    """``String.valueOf(value)`` as the JVM would print it: what FileStreamSink writes per line."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict) and schema is not None and schema.type == "struct":
        inner = ",".join(f"{f.name}={java_string(value.get(f.name), f.schema)}"
                         for f in schema.fields if value.get(f.name) is not None)
        return f"Struct{{{inner}}}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={java_string(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(java_string(v) for v in value) + "]"
    if isinstance(value, bytes):
        return f"[B@{id(value) & 0xFFFFFFF:x}"  # Java prints an array's identity, not its contents
    return str(value)
