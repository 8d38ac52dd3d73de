"""JSON Schema compatibility: when a reader's schema accepts every record a writer's schema allows.

Kafka stores bytes and never looks inside a record, so nothing stops a producer from
writing data its consumers cannot read. A schema registry (Confluent's, Apicurio,
Karapace; the course's own in ``schema_registry``) keeps the contract: each *subject*
(by default ``<topic>-value``) holds an ordered list of schema versions, and a new version
is accepted only if it is compatible with the earlier ones under the subject's rule:

* ``BACKWARD``: a consumer on the new schema can read data written with the last one
  (upgrade consumers first). The registry's default.
* ``FORWARD``: a consumer still on the last schema can read data written with the new one
  (upgrade producers first).
* ``FULL``: both. ``NONE``: anything goes. ``*_TRANSITIVE``: against every earlier
  version, not just the last.

The check below understands the part of JSON Schema that data contracts use
(``type``, ``properties``, ``required``, ``additionalProperties``, ``enum``, ``items`` and
length/range bounds) and answers in sentences.
"""

from __future__ import annotations

import json

LEVELS = ("NONE", "BACKWARD", "FORWARD", "FULL", "BACKWARD_TRANSITIVE", "FORWARD_TRANSITIVE", "FULL_TRANSITIVE")
_UPPER_BOUNDS = ("maxLength", "maximum", "maxItems")
_LOWER_BOUNDS = ("minLength", "minimum", "minItems")


# -- the compatibility rules ------------------------------------------------------------------
def _types(schema: dict) -> set[str] | None:
    t = schema.get("type")
    if t is None:
        return None  # any type
    return {t} if isinstance(t, str) else set(t)


def _type_problems(reader: dict, writer: dict, path: str) -> list[str]:
    rt, wt = _types(reader), _types(writer)
    if rt is None:
        return []
    if wt is None:
        return [f"{path} may be of any type in records, but the reader accepts only {'/'.join(sorted(rt))}"]
    lost = {t for t in wt if t not in rt and not (t == "integer" and "number" in rt)}
    if lost:
        return [f"{path} may be {'/'.join(sorted(wt))} in records, but the reader accepts only {'/'.join(sorted(rt))}"]
    return []


def _bound_problems(reader: dict, writer: dict, path: str) -> list[str]:
    out = []
    for key in _UPPER_BOUNDS:
        if key in reader and writer.get(key, float("inf")) > reader[key]:
            out.append(f"{path}: the reader's {key} ({reader[key]}) is tighter than the writer's")
    for key in _LOWER_BOUNDS:
        if key in reader and writer.get(key, float("-inf")) < reader[key]:
            out.append(f"{path}: the reader's {key} ({reader[key]}) is tighter than the writer's")
    if "enum" in reader:
        allowed = {json.dumps(v, sort_keys=True) for v in reader["enum"]}
        before = writer.get("enum")
        if before is None or not {json.dumps(v, sort_keys=True) for v in before} <= allowed:
            out.append(f"{path}: the reader accepts only the values {reader['enum']}")
    return out


def _object_problems(reader: dict, writer: dict, path: str) -> list[str]:
    out = []
    r_props, w_props = reader.get("properties", {}), writer.get("properties", {})
    r_open = reader.get("additionalProperties", True) is not False
    w_open = writer.get("additionalProperties", True) is not False
    w_required = set(writer.get("required", []))
    for name in reader.get("required", []):
        if name not in w_required:
            out.append(f"{path}.{name} is required by the reader but optional for the writer: records may lack it")
    for name, r_sub in r_props.items():
        if name in w_props:
            out += reader_problems(r_sub, w_props[name], f"{path}.{name}")
        elif w_open and r_sub not in ({}, True):
            out.append(f"{path}.{name} is constrained by the reader but not by the writer, whose schema allows "
                       f"extra properties: records may carry a {name!r} of any type")
    if not r_open:
        out += [f"{path}.{name} may appear in records, but the reader does not list it and forbids extra properties"
                for name in w_props if name not in r_props]
        if w_open:
            out.append(f"{path}: the reader forbids extra properties, which the writer's schema allows")
    return out


def reader_problems(reader: dict, writer: dict, path: str = "$") -> list[str]:
    """Why a reader on schema ``reader`` might reject a record valid under ``writer``.

    An empty list means every record the writer's schema accepts, the reader's accepts too.
    """
    out = _type_problems(reader, writer, path) + _bound_problems(reader, writer, path)
    both = (_types(reader) or {"object", "array"}) & (_types(writer) or {"object", "array"})
    if "object" in both:
        out += _object_problems(reader, writer, path)
    if "array" in both and isinstance(reader.get("items"), dict):
        out += reader_problems(reader["items"], writer.get("items", {}), f"{path}[]")
    return out


def compatibility_problems(new: dict, earlier: list[dict], level: str) -> list[str]:
    """What breaks if ``new`` follows the ``earlier`` versions (oldest first) under ``level``."""
    level = level.upper()
    if level not in LEVELS:
        raise ValueError(f"unknown compatibility level {level!r}; use one of {', '.join(LEVELS)}")
    if level == "NONE" or not earlier:
        return []
    against = earlier if level.endswith("_TRANSITIVE") else earlier[-1:]
    out = []
    for old in against:
        if level.startswith(("BACKWARD", "FULL")):
            out += [f"new readers, old data: {p}" for p in reader_problems(new, old)]
        if level.startswith(("FORWARD", "FULL")):
            out += [f"old readers, new data: {p}" for p in reader_problems(old, new)]
    return list(dict.fromkeys(out))
