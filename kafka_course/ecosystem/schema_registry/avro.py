"""Avro schemas for the registry: parsing, and Avro's schema resolution rules as compatibility.

Avro data is written with one schema (the *writer's*) and read with another (the
*reader's*); the Avro specification's "Schema Resolution" section says when that works:

* the same primitive, or a promotion: int -> long, float, double; long -> float, double;
  float -> double; string <-> bytes;
* records match by name (or a reader alias); every reader field needs a writer field of
  the same name (or alias), or a default; writer fields the reader lacks are skipped;
* an enum reader must know every writer symbol, unless it has a default symbol;
* fixed types match by name and size; arrays by items; maps by values;
* a writer union: every branch must be readable; a reader union: some branch must read
  the writer's type.

The registry asks this question in one direction or both: BACKWARD makes the new schema
the reader of data written with the old one, FORWARD the old schema the reader of new data.
Problems are named with Avro's own ``SchemaIncompatibilityType`` values (TYPE_MISMATCH,
READER_FIELD_MISSING_DEFAULT_VALUE, ...) and a JSON pointer into the reader's schema.
"""

from __future__ import annotations

import json
from typing import Any

import fastavro

from .base import InvalidSchema, ParsedSchema

PROMOTIONS = {"int": {"long", "float", "double"}, "long": {"float", "double"}, "float": {"double"},
              "string": {"bytes"}, "bytes": {"string"}}
NAMED = ("record", "error", "enum", "fixed")


def parse(text: str, references: dict[str, str]) -> ParsedSchema:
    """Parse ``text`` (with the referenced schemas' named types known) or raise InvalidSchema."""
    names: dict[str, Any] = {}
    try:
        for ref_text in references.values():
            fastavro.parse_schema(json.loads(ref_text), named_schemas=names, _write_hint=False)
        raw = json.loads(text)
        parsed = fastavro.parse_schema(raw, named_schemas=names, _write_hint=False)
    except (ValueError, TypeError, KeyError, fastavro.schema.SchemaParseException,
            fastavro.schema.UnknownType) as e:
        raise InvalidSchema(f"Invalid schema {text[:200]}, details: {type(e).__name__}: {e}") from e
    canonical = json.dumps(raw, separators=(",", ":"))
    return ParsedSchema("AVRO", canonical, json.dumps(raw, sort_keys=True), (parsed, names))


def problems(reader: ParsedSchema, writer: ParsedSchema, reader_role: str, writer_role: str) -> list[str]:
    """What stops ``reader`` from reading data written with ``writer``, one message each."""
    check = _Resolution(reader.parsed[1], writer.parsed[1], reader_role, writer_role)
    return check.compare(reader.parsed[0], writer.parsed[0], "")


def _kind(schema: Any) -> str:
    if isinstance(schema, list):
        return "union"
    if isinstance(schema, dict):
        return "record" if schema["type"] == "error" else schema["type"]
    return schema


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


class _Resolution:
    def __init__(self, reader_names: dict, writer_names: dict, reader_role: str, writer_role: str):
        self.rnames, self.wnames = reader_names, writer_names
        self.rrole, self.wrole = reader_role, writer_role
        self.seen: set[tuple[str, str]] = set()  # record pairs being compared: recursive types end here

    @staticmethod
    def _resolve(schema: Any, names: dict) -> Any:
        """Follow a named reference or a {"type": ...} wrapper to the schema it stands for."""
        while True:
            if isinstance(schema, str) and schema in names:
                schema = names[schema]
            elif isinstance(schema, dict) and schema["type"] not in (*NAMED, "array", "map"):
                schema = schema["type"]
            else:
                return schema

    def _problem(self, kind: str, description: str, info: str) -> str:
        return f"{{errorType:'{kind}', description:'{description}', additionalInfo:'{info}'}}"

    def compare(self, reader: Any, writer: Any, path: str) -> list[str]:
        reader, writer = self._resolve(reader, self.rnames), self._resolve(writer, self.wnames)
        rkind, wkind = _kind(reader), _kind(writer)
        if wkind == "union":
            return [p for branch in writer for p in self.compare(reader, branch, path)]
        if rkind == "union":
            if any(not self.compare(branch, writer, path) for branch in reader):
                return []
            return [self._problem("MISSING_UNION_BRANCH", f"The {self.rrole} schema has no union branch for "
                                  f"type {wkind} of the {self.wrole} schema at path '{path or '/'}'", wkind)]
        if rkind != wkind:
            if rkind in PROMOTIONS.get(wkind, ()):
                return []
            return [self._problem("TYPE_MISMATCH", f"The type (path '{path or '/'}') of a field in the "
                                  f"{self.rrole} schema is {rkind}, which does not match the type {wkind} in the "
                                  f"{self.wrole} schema", rkind)]
        return getattr(self, f"_{rkind}", lambda r, w, p: [])(reader, writer, path)

    def _names_match(self, reader: dict, writer: dict, path: str) -> list[str]:
        accepted = {_short(reader["name"])} | {_short(a) for a in reader.get("aliases", [])}
        if _short(writer["name"]) in accepted:
            return []
        return [self._problem("NAME_MISMATCH", f"The name of the {self.rrole} schema "
                              f"({_short(reader['name'])}) does not match the {self.wrole} schema's "
                              f"({_short(writer['name'])}) at path '{path}/name'", _short(reader["name"]))]

    def _record(self, reader: dict, writer: dict, path: str) -> list[str]:
        pair = (reader["name"], writer["name"])
        if pair in self.seen:
            return []
        self.seen.add(pair)
        try:
            return self._names_match(reader, writer, path) + self._fields(reader, writer, path)
        finally:
            self.seen.discard(pair)

    def _fields(self, reader: dict, writer: dict, path: str) -> list[str]:
        out = []
        by_name = {f["name"]: f for f in writer["fields"]}
        for i, field in enumerate(reader["fields"]):
            names = [field["name"], *field.get("aliases", [])]
            found = next((by_name[n] for n in names if n in by_name), None)
            if found is not None:
                out += self.compare(field["type"], found["type"], f"{path}/fields/{i}/type")
            elif "default" not in field:
                out.append(self._problem(
                    "READER_FIELD_MISSING_DEFAULT_VALUE",
                    f"The field '{field['name']}' at path '{path}/fields/{i}' in the {self.rrole} schema has no "
                    f"default value and is missing in the {self.wrole} schema", field["name"]))
        return out

    def _enum(self, reader: dict, writer: dict, path: str) -> list[str]:
        out = self._names_match(reader, writer, path)
        missing = [s for s in writer["symbols"] if s not in reader["symbols"]]
        if missing and "default" not in reader:
            out.append(self._problem("MISSING_ENUM_SYMBOLS",
                                     f"The {self.rrole} schema is missing enum symbols '{missing}' at path "
                                     f"'{path}/symbols' in the {self.wrole} schema", ", ".join(missing)))
        return out

    def _fixed(self, reader: dict, writer: dict, path: str) -> list[str]:
        out = self._names_match(reader, writer, path)
        if reader["size"] != writer["size"]:
            out.append(self._problem("FIXED_SIZE_MISMATCH",
                                     f"The size of FIXED type field at path '{path}/size' in the {self.rrole} schema "
                                     f"({reader['size']}) does not match the {self.wrole} schema's ({writer['size']})",
                                     str(reader["size"])))
        return out

    def _array(self, reader: dict, writer: dict, path: str) -> list[str]:
        return self.compare(reader["items"], writer["items"], f"{path}/items")

    def _map(self, reader: dict, writer: dict, path: str) -> list[str]:
        return self.compare(reader["values"], writer["values"], f"{path}/values")
