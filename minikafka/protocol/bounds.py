"""Every length in a request must fit in the bytes that are left, before kio decodes it.

kio's native decoder trusts array counts: given a count like 0xFFFFFFFE it reserves
room for that many elements before reading one, and the failed allocation aborts the
whole process (SIGABRT), which no ``except`` can catch. So the codec first walks the
request's schema here, in Python, reading only lengths and counts: every array count,
string, bytes and record-set length, and tagged-field size must be non-negative (or the
null marker) and no larger than the bytes remaining. A frame that breaks the rule is
refused with ``MalformedRequest`` (its connection closes, as Kafka closes it); nothing
is allocated for it. The walk follows the encoding rules kio's own writers use.
"""

from __future__ import annotations

import dataclasses
import struct
from functools import cache

from kio.serial._introspect import FieldClass, classify_field, get_field_tag, get_schema_field_type, is_optional

_FIXED = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "error_code": 2, "int32": 4, "uint32": 4,
          "timedelta_i32": 4, "int64": 8, "uint64": 8, "float64": 8, "timedelta_i64": 8, "datetime_i64": 8,
          "uuid": 16}


class TooLong(ValueError):
    """A length or count in the frame is larger than the bytes left (or impossible)."""


def check(buf: bytes, offset: int, entity_type: type) -> int:
    """Walk one request body from ``offset``; return where it ends. TooLong if any length lies."""
    return _entity(buf, offset, entity_type)


@cache
def _plan(entity_type: type) -> tuple[tuple[dataclasses.Field, FieldClass, bool], ...]:
    """The untagged fields in wire order, with their class and optionality."""
    return tuple((f, classify_field(f), is_optional(f)) for f in dataclasses.fields(entity_type)
                 if get_field_tag(f) is None)


def _entity(buf: bytes, pos: int, entity_type: type) -> int:
    flexible = entity_type.__flexible__  # type: ignore[attr-defined]
    for field, kind, optional in _plan(entity_type):
        pos = _field(buf, pos, field, kind, optional, flexible)
    return _tagged(buf, pos) if flexible else pos


def _field(buf: bytes, pos: int, field: dataclasses.Field, kind: FieldClass, optional: bool, flexible: bool) -> int:
    if kind.is_array:
        count, pos = _count(buf, pos, flexible)
        if count < 0:
            if not optional:  # kio would hand the handler None where the schema promises a list
                raise TooLong(f"{field.name} is null but the schema does not allow null")
            return pos
        element = kind.type_
        if dataclasses.is_dataclass(element):
            for _ in range(count):
                pos = _entity(buf, pos, element)  # type: ignore[arg-type]
            return pos
        schema_type = get_schema_field_type(field)
        for _ in range(count):
            pos = _primitive(buf, pos, schema_type, flexible, optional=False)
        return pos
    if dataclasses.is_dataclass(kind.type_):
        if optional:  # a nullable struct (KIP-893): one byte says whether it is there
            marker, pos = _fixed(buf, pos, ">b", 1)
            if marker < 0:
                return pos
        return _entity(buf, pos, kind.type_)
    return _primitive(buf, pos, get_schema_field_type(field), flexible, optional)


def _primitive(buf: bytes, pos: int, schema_type: str, flexible: bool, optional: bool) -> int:
    if schema_type in _FIXED:
        return _skip(buf, pos, _FIXED[schema_type])
    if schema_type == "string" and not flexible:
        size, pos = _fixed(buf, pos, ">h", 2)
    elif schema_type in ("bytes", "records") and not flexible:
        size, pos = _fixed(buf, pos, ">i", 4)
    elif schema_type in ("string", "bytes", "records"):
        size, pos = _uvarint(buf, pos)
        size -= 1  # compact: length + 1, 0 for null
    else:
        raise TooLong(f"unknown field type {schema_type!r}")
    if size < 0:
        if size != -1:
            raise TooLong(f"negative length {size}")
        if not optional:
            raise TooLong(f"a null {schema_type} where the schema does not allow null")
        return pos
    return _skip(buf, pos, size)


def _count(buf: bytes, pos: int, flexible: bool) -> tuple[int, int]:
    if flexible:
        count, pos = _uvarint(buf, pos)
        count -= 1
    else:
        count, pos = _fixed(buf, pos, ">i", 4)
    if count < -1:
        raise TooLong(f"negative array count {count}")
    if count > len(buf) - pos:
        raise TooLong(f"an array claims {count} elements with {len(buf) - pos} bytes left")
    return count, pos


def _tagged(buf: bytes, pos: int) -> int:
    count, pos = _uvarint(buf, pos)
    if count > len(buf) - pos:
        raise TooLong(f"{count} tagged fields with {len(buf) - pos} bytes left")
    for _ in range(count):
        _tag, pos = _uvarint(buf, pos)
        size, pos = _uvarint(buf, pos)
        pos = _skip(buf, pos, size)
    return pos


def _skip(buf: bytes, pos: int, size: int) -> int:
    if size > len(buf) - pos:
        raise TooLong(f"a field of {size} bytes with {len(buf) - pos} bytes left")
    return pos + size


def _fixed(buf: bytes, pos: int, fmt: str, size: int) -> tuple[int, int]:
    if size > len(buf) - pos:
        raise TooLong("the frame ends inside a field")
    return struct.unpack_from(fmt, buf, pos)[0], pos + size


def _uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    for i in range(5):
        if pos + i >= len(buf):
            raise TooLong("the frame ends inside a varint")
        byte = buf[pos + i]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos + i + 1
        shift += 7
    raise TooLong("a varint longer than five bytes")
