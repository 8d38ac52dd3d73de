"""JSON Schema for the registry: parsing, and compatibility through the course's JSON rules.

The rules themselves live in ``kafka_course.ecosystem.registry`` (``reader_problems``): which
records valid under the writer's schema a reader's schema would reject, for ``type``,
``properties``, ``required``, ``additionalProperties``, ``enum``, ``items`` and the length and
range bounds. A ``$ref`` to a referenced schema (the registry's *references*, by name) is
inlined before checking; other ``$ref``s, ``oneOf``/``anyOf``/``allOf``, ``patternProperties``
and ``if``/``then``/``else`` are not compared (Confluent's checker covers more of them).
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from ..registry import reader_problems
from .base import InvalidSchema, ParsedSchema


def parse(text: str, references: dict[str, str]) -> ParsedSchema:
    try:
        raw = json.loads(text)
        jsonschema.validators.validator_for(raw).check_schema(raw)
        inlined = _inline(raw, {name: json.loads(ref) for name, ref in references.items()})
    except (ValueError, jsonschema.SchemaError) as e:
        raise InvalidSchema(f"Invalid schema {text[:200]}, details: {getattr(e, 'message', e)}") from e
    if not isinstance(raw, (dict, bool)):
        raise InvalidSchema(f"Invalid schema {text[:200]}, details: a JSON Schema is an object or a boolean")
    return ParsedSchema("JSON", json.dumps(raw, separators=(",", ":")), json.dumps(raw, sort_keys=True), inlined)


def _inline(schema: Any, refs: dict[str, Any]) -> Any:
    if isinstance(schema, dict):
        if set(schema) == {"$ref"} and schema["$ref"] in refs:
            return _inline(refs[schema["$ref"]], refs)
        return {k: _inline(v, refs) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_inline(v, refs) for v in schema]
    return schema


def problems(reader: ParsedSchema, writer: ParsedSchema, reader_role: str, writer_role: str) -> list[str]:
    r = reader.parsed if isinstance(reader.parsed, dict) else ({} if reader.parsed else {"not": {}})
    w = writer.parsed if isinstance(writer.parsed, dict) else ({} if writer.parsed else {"not": {}})
    return [f"{{description:'The {reader_role} schema rejects data the {writer_role} schema accepts: {p}'}}"
            for p in reader_problems(r, w)]
