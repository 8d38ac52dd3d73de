"""The schema registry's compatibility rules for JSON Schema, Avro and Protobuf, without a network."""

from __future__ import annotations

import json

import pytest

from kafka_course.ecosystem import registry
from kafka_course.ecosystem.schema_registry import formats

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


# -- the same question for Avro and Protobuf, as the registry's formats module asks it --------------------
def avro(fields, name="Customer"):
    return formats.parse("AVRO", json.dumps({"type": "record", "name": name, "fields": fields}), {})


def kinds(problems):
    return [p.split("'")[1] for p in problems if p.startswith("{errorType:")]


def test_avro_promotions_defaults_unions_and_enums():
    ints = avro([{"name": "id", "type": "int"}])
    longs = avro([{"name": "id", "type": "long"}])
    assert formats.compatibility_problems(longs, [ints], "BACKWARD") == []  # int promotes to long
    assert kinds(formats.compatibility_problems(longs, [ints], "FORWARD")) == ["TYPE_MISMATCH"]
    added = avro([{"name": "id", "type": "int"}, {"name": "tag", "type": "string"}])
    defaulted = avro([{"name": "id", "type": "int"}, {"name": "tag", "type": "string", "default": ""}])
    assert kinds(formats.compatibility_problems(added, [ints], "BACKWARD")) == ["READER_FIELD_MISSING_DEFAULT_VALUE"]
    assert formats.compatibility_problems(defaulted, [ints], "FULL") == []
    optional = avro([{"name": "id", "type": ["null", "int"]}])
    assert formats.compatibility_problems(optional, [ints], "BACKWARD") == []  # a reader union with the branch
    assert kinds(formats.compatibility_problems(optional, [ints], "FORWARD")) == ["TYPE_MISMATCH"]  # null: no
    colours = {"type": "enum", "name": "Colour", "symbols": ["RED", "GREEN"]}
    fewer = avro([{"name": "c", "type": {**colours, "symbols": ["RED"]}}])
    assert kinds(formats.compatibility_problems(fewer, [avro([{"name": "c", "type": colours}])], "BACKWARD")) == [
        "MISSING_ENUM_SYMBOLS"]
    assert kinds(formats.compatibility_problems(avro([{"name": "id", "type": "int"}], "Client"), [ints],
                                                "BACKWARD")) == ["NAME_MISMATCH"]


def test_avro_recursive_types_and_transitive_levels():
    node = {"type": "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"], "default": None}]}
    parsed = formats.parse("AVRO", json.dumps(node), {})
    assert formats.compatibility_problems(parsed, [parsed], "FULL_TRANSITIVE") == []
    v1 = avro([{"name": "id", "type": "int"}, {"name": "name", "type": "string"}])
    v2 = avro([{"name": "id", "type": "int"}])
    v3 = avro([{"name": "id", "type": "int"}, {"name": "name", "type": "int", "default": 0}])
    assert formats.compatibility_problems(v3, [v1, v2], "FORWARD") == []  # v2 readers ignore the new field
    assert kinds(formats.compatibility_problems(v3, [v1, v2], "FORWARD_TRANSITIVE")) == ["TYPE_MISMATCH"]  # v1's
    with pytest.raises(formats.InvalidSchema):
        formats.parse("AVRO", json.dumps({"type": "record", "name": "X", "fields": [{"name": "a", "type": "Nope"}]}),
                      {})


def test_protobuf_numbers_types_labels_and_messages():
    base = 'syntax = "proto3"; package shop; message Order { int32 id = 1; string note = 2; Item item = 3; }\n' \
           "message Item { string sku = 1; }"
    v1 = formats.parse("PROTOBUF", base, {})

    def changed(old, new):
        return kinds(formats.compatibility_problems(formats.parse("PROTOBUF", base.replace(old, new), {}), [v1],
                                                    "BACKWARD"))
    assert changed("int32 id = 1", "int64 id = 1") == []  # same wire type
    assert changed("string note = 2", "bytes note = 2") == []
    assert changed("string note = 2", "double note = 2") == ["FIELD_SCALAR_KIND_CHANGED"]
    assert changed("string note = 2", "repeated string note = 2") == ["FIELD_KIND_CHANGED"]
    assert changed("string note = 2", "string remark = 2") == []  # names are not on the wire
    assert changed("package shop", "package store") == ["PACKAGE_CHANGED"]
    assert "MESSAGE_REMOVED" in changed("message Item { string sku = 1; }", "")
    with pytest.raises(formats.InvalidSchema):
        formats.parse("PROTOBUF", "message A { int32 a = 1; int32 b = 1; }", {})
    with pytest.raises(formats.InvalidSchema):
        formats.parse("PROTOBUF", 'import "other.proto"; message A { int32 a = 1; }', {})
