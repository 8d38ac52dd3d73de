"""The three schema types a registry stores (AVRO, JSON, PROTOBUF) behind one small interface.

Each type module offers ``parse(text, references) -> ParsedSchema`` (raising
``InvalidSchema``, the registry's error 42201) and ``problems(reader, writer, reader_role,
writer_role) -> list[str]``: why a consumer using ``reader`` could fail on data written with
``writer``. ``compatibility_problems`` turns a compatibility level into those questions,
as Confluent Schema Registry does: BACKWARD asks "can the new schema read the old data?",
FORWARD "can the old schema read the new data?", FULL both, and the ``_TRANSITIVE``
levels ask against every earlier version instead of the latest only.
"""

from __future__ import annotations

from types import ModuleType

from .base import InvalidSchema, ParsedSchema

__all__ = ["InvalidSchema", "ParsedSchema", "LEVELS", "TYPES", "parse", "compatibility_problems"]

LEVELS = ("NONE", "BACKWARD", "FORWARD", "FULL", "BACKWARD_TRANSITIVE", "FORWARD_TRANSITIVE", "FULL_TRANSITIVE")
TYPES = ("AVRO", "JSON", "PROTOBUF")


def parse(schema_type: str, text: str, references: dict[str, str]) -> ParsedSchema:
    return _module(schema_type).parse(text, references)


def compatibility_problems(new: ParsedSchema, earlier: list[ParsedSchema], level: str) -> list[str]:
    """Why ``new`` may not follow ``earlier`` (oldest first) under ``level``; empty if it may."""
    if level == "NONE" or not earlier:
        return []
    against = earlier if level.endswith("_TRANSITIVE") else earlier[-1:]
    check = _module(new.schema_type).problems
    out: list[str] = []
    for old in reversed(against):
        if old.schema_type != new.schema_type:
            out.append(f"{{errorType:'TYPE_MISMATCH', description:'The new schema is {new.schema_type} and an "
                       f"earlier one is {old.schema_type}'}}")
            continue
        if level.startswith(("BACKWARD", "FULL")):
            out += check(new, old, "new", "old")
        if level.startswith(("FORWARD", "FULL")):
            out += check(old, new, "old", "new")
    return list(dict.fromkeys(out))


def _module(schema_type: str) -> ModuleType:  # avro, json_schema or protobuf: each parses its format
    from . import avro, json_schema, protobuf
    return {"AVRO": avro, "JSON": json_schema, "PROTOBUF": protobuf}[schema_type]
