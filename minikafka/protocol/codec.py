"""Kafka request/response framing on top of the ``kio`` codec.

Every Kafka message on the wire is ``int32 size`` followed by a header and a body.
The request header is parsed by hand (it is tiny, and must be readable even for an
API version kio has no class for, so that ApiVersions can answer "unsupported"); the
body is decoded by kio's generated reader for the negotiated version. Responses are
encoded by kio's writer with header v0 or v1 (flexible versions), except that the
ApiVersions response header is always v0 (KIP-511).
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib
import io
import pkgutil
import re
import struct
import typing
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

from kio.index import load_payload_module
from kio.serial import entity_reader, entity_writer
from kio.static.constants import EntityType
from kio.schema.errors import ErrorCode

from . import bounds

API_VERSIONS_KEY = 18
_I16_I16_I32 = struct.Struct(">hhi")


class MalformedRequest(ValueError):
    """The bytes of a request cannot be decoded; the connection that sent them is closed."""


@dataclass(frozen=True, slots=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body_offset: int  # where the request body starts in the frame


def parse_header(frame: bytes, flexible: bool) -> RequestHeader:
    """Read header v1 (or v2 when ``flexible``) from a frame without its size prefix."""
    if len(frame) < 10:
        raise MalformedRequest(f"request of {len(frame)} bytes is shorter than a header")
    api_key, api_version, correlation_id = _I16_I16_I32.unpack_from(frame, 0)
    (n,) = struct.unpack_from(">h", frame, 8)
    pos = 10
    client_id = None
    if n >= 0:
        if pos + n > len(frame):
            raise MalformedRequest("client id runs past the end of the request")
        client_id = frame[pos : pos + n].decode("utf-8", "replace")
        pos += n
    if flexible:
        pos = _skip_tagged_fields(frame, pos)
    return RequestHeader(api_key, api_version, correlation_id, client_id, pos)


def peek_api(frame: bytes) -> tuple[int, int, int]:
    """api_key, api_version and correlation_id: the first 8 bytes of every request."""
    if len(frame) < 8:
        raise MalformedRequest(f"request of {len(frame)} bytes is shorter than a header")
    return _I16_I16_I32.unpack_from(frame, 0)


def _read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if pos >= len(buf) or shift > 28:
            raise MalformedRequest("bad unsigned varint in tagged fields")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def _skip_tagged_fields(buf: bytes, pos: int) -> int:
    count, pos = _read_uvarint(buf, pos)
    for _ in range(count):
        _tag, pos = _read_uvarint(buf, pos)
        size, pos = _read_uvarint(buf, pos)
        pos += size
    if pos > len(buf):
        raise MalformedRequest("tagged fields run past the end of the request")
    return pos


@cache
def request_module(api_key: int, version: int) -> ModuleType:
    return load_payload_module(api_key, version, EntityType.request)


@cache
def response_module(api_key: int, version: int) -> ModuleType:
    return load_payload_module(api_key, version, EntityType.response)


@cache
def request_class(api_key: int, version: int) -> type:
    return _payload_class(request_module(api_key, version), EntityType.request)


@cache
def response_class(api_key: int, version: int) -> type:
    return _payload_class(response_module(api_key, version), EntityType.response)


def _payload_class(module: ModuleType, kind: EntityType) -> type:
    for value in vars(module).values():
        if isinstance(value, type) and getattr(value, "__type__", None) == kind and value.__module__ == module.__name__:
            return value
    raise LookupError(f"no {kind.name} class in {module.__name__}")


def is_flexible(api_key: int, version: int) -> bool:
    cls: Any = request_class(api_key, version)  # a kio entity class: ``__flexible__`` is set by kio
    return bool(cls.__flexible__)


def decode_request(frame: bytes, api_key: int, version: int) -> tuple[RequestHeader, Any]:
    """Decode header and body of a supported request; MalformedRequest on bad bytes."""
    header = parse_header(frame, is_flexible(api_key, version))
    cls = request_class(api_key, version)
    try:
        bounds.check(frame, header.body_offset, cls)  # before kio allocates anything for it
    except bounds.TooLong as e:
        raise MalformedRequest(f"cannot decode {cls.__name__}: {e}") from None
    try:
        body: Any
        body, _size = entity_reader(cls)(frame, header.body_offset)
    except Exception as e:  # noqa: BLE001 - kio raises several types for bad input: all are a malformed request
        raise MalformedRequest(f"cannot decode {request_class(api_key, version).__name__}: {e}") from None
    return header, body


def encode_response(correlation_id: int, response: Any) -> bytes:
    """Size prefix + response header + body."""
    known = _constant_bodies.get(id(response))
    body = known[1] if known is not None and known[0] is response else _encode_body(response)
    return _I32_I32.pack(len(body) + 4, correlation_id) + body


def _encode_body(response: Any) -> bytes:
    """The response after its correlation id: header v1's tagged fields (flexible versions), the body."""
    buf = io.BytesIO()
    cls = type(response)
    if cls.__flexible__ and cls.__api_key__ != API_VERSIONS_KEY:
        buf.write(b"\0")  # response header v1: no tagged fields
    entity_writer(cls)(buf, response)
    return buf.getvalue()


_I32_I32 = struct.Struct(">ii")
_constant_bodies: dict[int, tuple[Any, bytes]] = {}  # id -> (the answer, kept alive so the id stays its, bytes)


def constant(response: Any) -> Any:
    """Mark an answer that is the same for every request of its version (ApiVersions', with its
    50-odd entries, which every new connection asks for first): ``encode_response`` then reuses
    the bytes encoded here instead of encoding it again."""
    _constant_bodies[id(response)] = (response, _encode_body(response))
    return response


@cache
def _fields(cls: type) -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(cls)}


_ZERO = datetime.timedelta(0)


class UnknownField(TypeError):
    """A message was built with a field name its class has in no version: a misspelling."""


def make(cls: type, /, **values: Any) -> Any:
    """Build a kio entity from exactly its fields (``throttle_time`` defaults to zero).

    A name the class lacks raises UnknownField, naming the field and the class, instead
    of being dropped: a misspelt field would otherwise go out as its default. A message
    written for the newest version and fitted to an older one is built by ``downgrade``.
    """
    fields = _fields(cls)
    for name in values:
        if name not in fields:
            raise UnknownField(f"{cls.__name__} (v{getattr(cls, '__version__', '?')}) has no field {name!r}")
    if "throttle_time" in fields and "throttle_time" not in values:
        values["throttle_time"] = _ZERO
    return cls(**values)


_VERSION_DIR = re.compile(r"^(?P<package>.+)\.v(?P<version>\d+)\.(?P<kind>[a-z_]+)$")


@cache
def known_fields(cls: type) -> frozenset[str]:
    """The field names ``cls``'s entity has in any version of its API (same class name, same kind)."""
    names = set(_fields(cls))
    match = _VERSION_DIR.match(cls.__module__)
    if match is None:
        return frozenset(names)
    package = importlib.import_module(match["package"])
    for info in pkgutil.iter_modules(package.__path__):
        if not re.fullmatch(r"v\d+", info.name):
            continue
        try:
            module = importlib.import_module(f"{match['package']}.{info.name}.{match['kind']}")
        except ModuleNotFoundError:
            continue
        other = getattr(module, cls.__name__, None)
        if isinstance(other, type) and dataclasses.is_dataclass(other):
            names.update(f.name for f in dataclasses.fields(other))
    return frozenset(names)


def downgrade(cls: type, /, **values: Any) -> Any:
    """``make`` for a message written once for every version, fitted to the version of ``cls``.

    Fields this version lacks but another version of the entity has are dropped (that
    is what keeps a handler free of per-version branches); a name no version has raises
    UnknownField, as in ``make``.
    """
    fields = _fields(cls)
    if values.keys() <= fields.keys():  # the usual case: nothing to drop, no other version to read
        return make(cls, **values)
    known = known_fields(cls)
    for name in values:
        if name not in known:
            raise UnknownField(f"{cls.__name__} has no field {name!r} in any version")
    return make(cls, **{k: v for k, v in values.items() if k in fields})


def entity(module: ModuleType, name: str, /, **values: Any) -> Any:
    """``downgrade`` for a nested class looked up by name in a versioned schema module."""
    return downgrade(getattr(module, name), **values)


_EMPTY = {"bool": False, "bytes": b"", "records": None, "string": "", "int8": 0, "int16": 0, "int32": 0, "int64": 0,
          "uuid": uuid.UUID(int=0), "timedelta_i32": _ZERO, "datetime_i64": None}


def empty(cls: type, /, **values: Any) -> Any:
    """An entity whose every required field is empty (0, "", (), ...) except ``values``.

    The fault API answers a request with nothing but an error code this way, whatever
    the API, without running its handler.
    """
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name in values or f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            continue
        kwargs[f.name] = _empty_field(f, hints[f.name])
    return make(cls, **kwargs, **values)


def error_answer(cls: type, code: ErrorCode) -> Any:
    """An empty answer carrying ``code`` as its top-level error code, where ``cls`` has one.

    An answer with no top-level error code (Metadata's, for one) goes out empty.
    """
    return empty(cls, error_code=code) if "error_code" in _fields(cls) else empty(cls)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _entity_type(annotation: Any) -> type | None:
    """The entity class of a field typed ``Entity``, ``Entity | None`` or ``tuple[Entity, ...]``."""
    if dataclasses.is_dataclass(annotation):
        return annotation  # type: ignore[return-value]
    for arg in typing.get_args(annotation):  # tuple[E, ...], E | None, tuple[E, ...] | None
        found = _entity_type(arg)
        if found is not None:
            return found
    return None


def upgrade(value: Any, cls: type) -> Any:
    """``value`` (any version of an entity) as an instance of ``cls`` (usually the newest version).

    Fields the older version lacks take the default Kafka's schema gives them (kio keeps
    those defaults on the class), so a handler reads one typed request for every
    version instead of probing attributes. A field with no default that an old version
    lacks gets the empty value of its type.
    """
    if value is None or type(value) is cls:
        return value
    hints, present, kwargs = _hints(cls), {f.name for f in dataclasses.fields(value)}, {}
    for f in dataclasses.fields(cls):
        if f.name in present:
            old, nested = getattr(value, f.name), _entity_type(hints[f.name])
            if nested is None or old is None:
                kwargs[f.name] = old
            elif isinstance(old, tuple):
                kwargs[f.name] = tuple(upgrade(item, nested) for item in old)
            else:
                kwargs[f.name] = upgrade(old, nested)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            kwargs[f.name] = _empty_field(f, hints[f.name])
    return cls(**kwargs)


def _empty_field(f: dataclasses.Field, annotation: Any) -> Any:
    kind = f.metadata.get("kafka_type")
    if kind == "error_code":
        return ErrorCode.none
    if kind is not None:
        return _EMPTY[kind]
    nested = _entity_type(annotation)
    return empty(nested) if nested is not None and dataclasses.is_dataclass(annotation) else ()


def warm_up(stopping: Callable[[], bool] = lambda: False) -> int:
    """Build the schema classes of every API version the broker handles, ahead of the requests.

    kio defines a version's classes when its module is first imported, and ``downgrade`` reads
    every version of an entity the first time it fits an answer to an older one. Done on the
    first request of each version, that work (a few ms to tens of ms per API) holds up every
    connection, since all of them share one event loop: the first consumer group to join pays
    for JoinGroup's and SyncGroup's classes. ``minikafka serve`` calls this in a thread of its
    own once it listens, and stops it (``stopping``) when the broker stops first. Returns how
    many API versions it loaded.
    """
    from .apis import API_TABLE
    loaded = 0
    for api in API_TABLE:
        for version in range(api.min_version, api.max_version + 1):
            if stopping():
                return loaded
            request_class(api.key, version)
            module = response_module(api.key, version)
            for value in vars(module).values():  # the nested entities too: handlers build them by name
                if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == module.__name__:
                    known_fields(value)
            loaded += 1
        latest = request_module(api.key, api.max_version)  # what ``upgrade`` lifts every request to
        for value in vars(latest).values():
            if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == latest.__name__:
                _hints(value)
    return loaded


def latest_version(api_key: int) -> int:
    from .apis import BY_KEY
    return BY_KEY[api_key].max_version


def latest_request_class(api_key: int) -> type:
    return request_class(api_key, latest_version(api_key))
