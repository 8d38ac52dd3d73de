"""Connect's converters and single message transforms, record by record, without a worker."""

from __future__ import annotations

import json
import re

import pytest

from kafka_course.ecosystem.connect import converters, transforms
from kafka_course.ecosystem.connect.data import ConnectRecord, Schema, java_string

JSON = "org.apache.kafka.connect.json.JsonConverter"
SALE = {"schema": {"type": "struct", "name": "Sale", "optional": False, "fields": [
    {"field": "id", "type": "int32", "optional": False}, {"field": "card", "type": "string", "optional": True},
    {"field": "amount", "type": "double", "optional": False}]}, "payload": {"id": 7, "card": "4000", "amount": 2.5}}


def sale_record():
    schema, value = converters.make(JSON, {}, False).to_connect("sales", json.dumps(SALE).encode())
    return ConnectRecord("sales", None, value, None, schema, partition=0, offset=41, timestamp=86_400_000)


def chain(**config):
    return transforms.chain({"transforms": "t", **{f"transforms.t.{k.replace('_', '.')}": v
                                                   for k, v in config.items()}})[0]


def test_json_converter_envelopes_round_trip_and_plain_json_is_refused():
    record = sale_record()
    assert [f.name for f in record.value_schema.fields] == ["id", "card", "amount"]
    assert record.value_schema.field("amount").schema.type == "float64"  # JSON's "double"
    again = converters.make(JSON, {}, False).from_connect("sales", record.value_schema, record.value)
    assert json.loads(again) == SALE
    with pytest.raises(converters.DataException, match=re.escape("schemas.enable=false")):
        converters.make(JSON, {}, False).to_connect("sales", b'{"id": 7}')
    assert converters.make(JSON, {"schemas.enable": "false"}, False).to_connect("sales", b'{"id": 7}') == (
        None, {"id": 7})


def test_insert_replace_and_mask_rewrite_schema_and_value():
    record = sale_record()
    inserted = chain(type=transforms.PREFIX + "InsertField$Value", **{"offset.field": "kafka_offset",
                                                                      "static.field": "shop", "static.value": "eu"})
    out = inserted.apply(record)
    assert out.value == {"id": 7, "card": "4000", "amount": 2.5, "kafka_offset": 41, "shop": "eu"}
    assert [f.name for f in out.value_schema.fields][-2:] == ["kafka_offset", "shop"]
    replaced = chain(type=transforms.PREFIX + "ReplaceField$Value", exclude="card", renames="amount:total")
    out = replaced.apply(record)
    assert out.value == {"id": 7, "total": 2.5} and [f.name for f in out.value_schema.fields] == ["id", "total"]
    masked = chain(type=transforms.PREFIX + "MaskField$Value", fields="card,amount").apply(record)
    assert masked.value == {"id": 7, "card": "", "amount": 0.0}
    with pytest.raises(converters.DataException, match="Only Struct objects supported"):
        inserted.apply(record.but(value="a line", value_schema=Schema("string")))


def test_routers_change_the_topic():
    record = sale_record()
    regex = chain(type=transforms.PREFIX + "RegexRouter", regex="(.*)s", replacement="$1-archive")
    assert regex.apply(record).topic == "sale-archive"
    assert chain(type=transforms.PREFIX + "TimestampRouter").apply(record).topic == "sales-19700102"


def test_transform_configurations_are_checked_with_kafkas_sentences():
    problems = transforms.problems({"transforms": "a,b,c", "transforms.b.type": "com.acme.Nope",
                                    "transforms.c.type": transforms.PREFIX + "MaskField$Value"})
    assert problems == {
        "transforms.a.type": ['Missing required configuration "transforms.a.type" which has no default value.'],
        "transforms.b.type": ["Invalid value com.acme.Nope for configuration transforms.b.type: "
                              "Class com.acme.Nope could not be found."],
        "transforms.c.fields": ['Missing required configuration "transforms.c.fields" which has no default value.']}


def test_file_sink_lines_are_what_java_prints():
    record = sale_record()
    assert java_string(record.value, record.value_schema) == "Struct{id=7,card=4000,amount=2.5}"
    assert java_string({"id": 7, "ok": True}) == "{id=7, ok=true}"
    assert java_string(None) == "null"
