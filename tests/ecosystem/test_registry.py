"""The schema registry's compatibility rules (JSON Schema) and its record framing."""

from __future__ import annotations

import jsonschema
import pytest

from kafka_course.ecosystem import registry

V1 = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
      "required": ["id", "name"], "additionalProperties": False}
V2 = {**V1, "properties": {**V1["properties"], "email": {"type": "string"}}}  # an optional field


def problems(new, old, level):
    return registry.compatibility_problems(new, [old], level)


def test_adding_an_optional_field_to_a_closed_model_is_backward_but_not_forward_compatible():
    assert problems(V2, V1, "BACKWARD") == []
    assert problems(V2, V1, "FORWARD") and problems(V2, V1, "FULL")


def test_adding_a_field_to_an_open_model_is_not_backward_compatible():
    open_v1 = {**V1, "additionalProperties": True}
    open_v2 = {**V2, "additionalProperties": True}
    assert any("email" in p for p in problems(open_v2, open_v1, "BACKWARD"))


def test_a_new_required_field_or_a_changed_type_breaks_old_data():
    required = {**V2, "required": ["id", "name", "email"]}
    retyped = {**V1, "properties": {**V1["properties"], "id": {"type": "string"}}}
    assert any("email" in p and "required" in p for p in problems(required, V1, "BACKWARD"))
    assert any("$.id" in p for p in problems(retyped, V1, "BACKWARD"))


def test_widening_is_fine_and_narrowing_is_not():
    ints = {"type": "integer"}
    numbers = {"type": "number"}
    assert registry.reader_problems(numbers, ints) == []  # every integer is a number
    assert registry.reader_problems(ints, numbers)
    assert registry.reader_problems({"type": "string", "maxLength": 5}, {"type": "string", "maxLength": 10})
    assert registry.reader_problems({"enum": ["a", "b", "c"]}, {"enum": ["a", "b"]}) == []
    assert registry.reader_problems({"enum": ["a"]}, {"enum": ["a", "b"]})
    assert registry.reader_problems({"type": "array", "items": {"type": "integer"}},
                                    {"type": "array", "items": {"type": "number"}})


def test_transitive_levels_check_every_earlier_version():
    nullable = {**V1, "properties": {**V1["properties"], "name": {"type": ["string", "null"]}}}
    # V1 made names non-null (accepted under NONE); a next version like V2 reads V1's data but not
    # the nulls the first version allowed.
    assert registry.compatibility_problems(V2, [nullable, V1], "BACKWARD") == []
    assert registry.compatibility_problems(V2, [nullable, V1], "BACKWARD_TRANSITIVE")
    assert registry.compatibility_problems({}, [V1, V2], "NONE") == []
    with pytest.raises(ValueError):
        registry.compatibility_problems(V2, [V1], "SIDEWAYS")


def test_registry_versions_ids_and_refusals():
    schemas = registry.SchemaRegistry()
    first = schemas.register("t-value", V1)
    assert schemas.register("t-value", V1) == first  # the same schema is not a new version
    second = schemas.register("t-value", V2)
    assert (first.version, second.version, second.id) == (1, 2, 2)
    with pytest.raises(registry.IncompatibleSchema) as refused:
        schemas.register("t-value", {**V2, "required": ["id", "name", "email"]})
    assert refused.value.problems and [v.version for v in schemas.versions("t-value")] == [1, 2]
    schemas.set_compatibility("t-value", "NONE")
    assert schemas.register("t-value", {"type": "string"}).version == 3


def test_serializer_validates_and_frames_with_magic_byte_and_schema_id():
    schemas = registry.SchemaRegistry()
    entry = schemas.register("t-value", V1)
    serialize = registry.JsonSchemaSerializer(schemas, "t-value")
    framed = serialize({"id": 7, "name": "Eve"})
    assert framed[0] == 0 and int.from_bytes(framed[1:5], "big") == entry.id
    written_with, value = registry.JsonSchemaDeserializer(schemas)(framed)
    assert written_with == entry and value == {"id": 7, "name": "Eve"}
    with pytest.raises(jsonschema.ValidationError):
        serialize({"id": "seven", "name": "Eve"})
    with pytest.raises(ValueError):
        registry.JsonSchemaDeserializer(schemas)(b"\x01" + framed[1:])
