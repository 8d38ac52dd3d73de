"""Single message transforms (KIP-66), by Kafka's class names, configured as ``transforms.<alias>.*``.

    "transforms": "dropCard,addSource",
    "transforms.dropCard.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
    "transforms.dropCard.exclude": "card",
    "transforms.addSource.type": "org.apache.kafka.connect.transforms.InsertField$Value",
    "transforms.addSource.static.field": "source", "transforms.addSource.static.value": "shop-eu"

Each transform rewrites one record at a time (``$Key`` or ``$Value`` says which part), on
its schema and value alike: InsertField, ReplaceField, MaskField, ExtractField and
ValueToKey change the record; RegexRouter and TimestampRouter change its topic.
"""

from __future__ import annotations

import re
import time
from typing import Any, ClassVar

from .converters import DataException
from .data import ConnectRecord, Field, Schema

PREFIX = "org.apache.kafka.connect.transforms."


def _csv(text: str | None) -> list[str]:
    return [item.strip() for item in (text or "").split(",") if item.strip()]


class Transform:
    REQUIRED: tuple[str, ...] = ()

    def __init__(self, config: dict[str, str], part: str):
        self.config, self.part = config, part  # part: "key" or "value"

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        raise NotImplementedError

    # the part of the record this transform works on
    def get(self, record: ConnectRecord) -> tuple[Schema | None, Any]:
        return (record.key_schema, record.key) if self.part == "key" else (record.value_schema, record.value)

    def put(self, record: ConnectRecord, schema: Schema | None, value: Any) -> ConnectRecord:
        if self.part == "key":
            return record.but(key_schema=schema, key=value)
        return record.but(value_schema=schema, value=value)

    def require_struct_or_map(self, purpose: str, schema: Schema | None, value: Any) -> None:
        if schema is None and not isinstance(value, dict):
            raise DataException(f"Only Map objects supported in absence of schema for [{purpose}], found: "
                                f"{_java_type(value)}")
        if schema is not None and schema.type != "struct":
            raise DataException(f"Only Struct objects supported for [{purpose}], found: {_java_type(value)}")


def _masked(value: Any) -> Any:
    """MaskField's replacement when none is configured: the type's "empty" value."""
    return False if isinstance(value, bool) else type(value)() if isinstance(value, (str, int, float)) else None


def _java_type(value: Any) -> str:
    return {str: "java.lang.String", int: "java.lang.Long", float: "java.lang.Double", bool: "java.lang.Boolean",
            list: "java.util.ArrayList", type(None): "null"}.get(type(value), type(value).__name__)


class InsertField(Transform):
    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema, value = self.get(record)
        self.require_struct_or_map("field insertion", schema, value)
        extra: list[tuple[str, Schema, Any]] = []
        wanted = {"topic.field": ("string", record.topic), "partition.field": ("int32", record.partition),
                  "offset.field": ("int64", record.offset), "timestamp.field": ("int64", record.timestamp),
                  "static.field": ("string", self.config.get("static.value"))}
        for key, (kind, field_value) in wanted.items():
            name = self.config.get(key)
            if name:
                optional = not name.endswith("!")
                extra.append((name.rstrip("!?"), Schema(kind, optional), field_value))
        new_value = {**value, **{name: v for name, _, v in extra}}
        if schema is None:
            return self.put(record, None, new_value)
        fields = schema.fields + tuple(Field(name, s) for name, s, _ in extra)
        return self.put(record, Schema("struct", schema.optional, fields, schema.name), new_value)


class ReplaceField(Transform):
    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema, value = self.get(record)
        if value is None:
            return record
        self.require_struct_or_map("field replacement", schema, value)
        exclude = set(_csv(self.config.get("exclude") or self.config.get("blacklist")))
        include = set(_csv(self.config.get("include") or self.config.get("whitelist")))
        renames = dict(pair.split(":", 1) for pair in _csv(self.config.get("renames")))

        def keep(name: str) -> bool:
            return name not in exclude and (not include or name in include)

        new_value = {renames.get(k, k): v for k, v in value.items() if keep(k)}
        if schema is None:
            return self.put(record, None, new_value)
        fields = tuple(Field(renames.get(f.name, f.name), f.schema) for f in schema.fields if keep(f.name))
        return self.put(record, Schema("struct", schema.optional, fields, schema.name), new_value)


class MaskField(Transform):
    REQUIRED = ("fields",)

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema, value = self.get(record)
        self.require_struct_or_map("masking fields", schema, value)
        replacement = self.config.get("replacement")
        masked = dict(value)
        for name in _csv(self.config["fields"]):
            if name in masked and masked[name] is not None:
                masked[name] = replacement if replacement is not None else _masked(masked[name])
        return self.put(record, schema, masked)


class ExtractField(Transform):
    REQUIRED = ("field",)

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema, value = self.get(record)
        self.require_struct_or_map("field extraction", schema, value)
        name = self.config["field"]
        field = schema.field(name) if schema is not None else None
        inner = field.schema if field else None
        return self.put(record, inner, None if value is None else value.get(name))


class ValueToKey(Transform):
    REQUIRED = ("fields",)

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        self.require_struct_or_map("copying fields from value to key", record.value_schema, record.value)
        names = _csv(self.config["fields"])
        key = {n: record.value.get(n) for n in names}
        if record.value_schema is None:
            return record.but(key=key, key_schema=None)
        fields = tuple(f for f in record.value_schema.fields if f.name in names)
        return record.but(key=key, key_schema=Schema("struct", fields=fields))


class RegexRouter(Transform):
    REQUIRED = ("regex", "replacement")

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        pattern = re.compile(self.config["regex"])
        if not pattern.fullmatch(record.topic):
            return record
        replacement = re.sub(r"\$(\d+)", r"\\g<\1>", self.config["replacement"])
        return record.but(topic=pattern.sub(replacement, record.topic, count=1))


class TimestampRouter(Transform):
    JAVA_DATE: ClassVar[list[tuple[str, str]]] = [("yyyy", "%Y"), ("MM", "%m"), ("dd", "%d"), ("HH", "%H"),
                                                   ("mm", "%M"), ("ss", "%S")]

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        fmt = self.config.get("timestamp.format", "yyyyMMdd")
        for java, strftime in self.JAVA_DATE:
            fmt = fmt.replace(java, strftime)
        stamp = time.strftime(fmt, time.gmtime(record.timestamp / 1000))
        topic_format = self.config.get("topic.format", "${topic}-${timestamp}")
        return record.but(topic=topic_format.replace("${topic}", record.topic).replace("${timestamp}", stamp))


CLASSES: dict[str, tuple[type[Transform], str]] = {}
_cls: type[Transform]
for _cls in (InsertField, ReplaceField, MaskField, ExtractField):
    CLASSES[f"{PREFIX}{_cls.__name__}$Value"] = (_cls, "value")
    CLASSES[f"{PREFIX}{_cls.__name__}$Key"] = (_cls, "key")
for _cls in (ValueToKey, RegexRouter, TimestampRouter):
    CLASSES[f"{PREFIX}{_cls.__name__}"] = (_cls, "value")


def chain(config: dict[str, str]) -> list[Transform]:
    """The transforms a connector's configuration names, in order (already validated)."""
    out = []
    for alias in _csv(config.get("transforms")):
        cls, part = CLASSES[config[f"transforms.{alias}.type"]]
        prefix = f"transforms.{alias}."
        out.append(cls({k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)}, part))
    return out


def problems(config: dict[str, str]) -> dict[str, list[str]]:
    """Configuration key -> errors, for the transforms a configuration names."""
    out: dict[str, list[str]] = {}
    for alias in _csv(config.get("transforms")):
        key = f"transforms.{alias}.type"
        kind = config.get(key)
        if not kind:
            out[key] = [f"Missing required configuration \"{key}\" which has no default value."]
        elif kind not in CLASSES:
            out[key] = [f"Invalid value {kind} for configuration {key}: Class {kind} could not be found."]
        else:
            for name in CLASSES[kind][0].REQUIRED:
                if f"transforms.{alias}.{name}" not in config:
                    out[f"transforms.{alias}.{name}"] = [
                        f"Missing required configuration \"transforms.{alias}.{name}\" which has no default value."]
    return out
