"""Protobuf for the registry: a small .proto reader and the wire-compatibility rules it can check.

Protobuf data carries field *numbers*, not names, so compatibility is about what each
number means on both sides. Checked here, with the names Confluent's checker uses:

* PACKAGE_CHANGED, MESSAGE_REMOVED (a message the writer used is gone from the reader);
* FIELD_KIND_CHANGED: the same number now scalar / message / enum, or singular / repeated;
* FIELD_SCALAR_KIND_CHANGED: a scalar type outside its wire-compatible group
  (int32 uint32 int64 uint64 bool enum | sint32 sint64 | fixed32 sfixed32 | fixed64 sfixed64
  | string bytes);
* FIELD_NAMED_TYPE_CHANGED: a message-typed field now names another message;
* REQUIRED_FIELD_ADDED / REQUIRED_FIELD_REMOVED (proto2 ``required``);
* FIELD_MOVED_TO_EXISTING_ONEOF.

Renaming a field, adding one, or removing an optional one is compatible. Not checked:
options, services, extensions, default values, reserved ranges, and the contents of
imported files (an import must name a reference or a google/protobuf file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import InvalidSchema, ParsedSchema

SCALARS = {"double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64",
           "sfixed32", "sfixed64", "bool", "string", "bytes"}
WIRE_GROUPS = [{"int32", "uint32", "int64", "uint64", "bool", "enum"}, {"sint32", "sint64"},
               {"fixed32", "sfixed32"}, {"fixed64", "sfixed64"}, {"string", "bytes"}, {"double"}, {"float"}]
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[A-Za-z_][\w.]*|\.[A-Za-z_][\w.]*|-?\d+|\S')


@dataclass
class Field:
    name: str
    type: str
    label: str  # "", "optional", "required", "repeated"
    oneof: str | None = None


@dataclass
class Proto:
    package: str = ""
    messages: dict[str, dict[int, Field]] = field(default_factory=dict)  # full name -> number -> field
    enums: set[str] = field(default_factory=set)


def parse(text: str, references: dict[str, str]) -> ParsedSchema:
    tokens = _TOKEN.findall(re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S))
    try:
        proto = _Reader(tokens, set(references)).read()
    except (IndexError, ValueError) as e:
        raise InvalidSchema(f"Invalid schema {text[:200]}, details: {e or 'unexpected end of file'}") from e
    return ParsedSchema("PROTOBUF", text.strip(), " ".join(tokens), proto)


class _Reader:
    def __init__(self, tokens: list[str], imports: set[str]):
        self.tokens, self.at, self.imports, self.proto = tokens, 0, imports, Proto()

    def take(self, expected: str | None = None) -> str:
        token = self.tokens[self.at]
        if expected is not None and token != expected:
            raise ValueError(f"expected {expected!r} but found {token!r}")
        self.at += 1
        return token

    def skip_statement(self) -> None:
        depth = 0
        while True:
            token = self.take()
            depth += {"{": 1, "}": -1}.get(token, 0)
            if depth == 0 and token in (";", "}"):
                return

    def read(self) -> Proto:
        while self.at < len(self.tokens):
            word = self.take()
            if word == "package":
                self.proto.package = self.take()
                self.take(";")
            elif word == "import":
                name = self.take()
                name = self.take() if name in ("public", "weak") else name
                if name.strip("\"'") not in self.imports and not name.strip("\"'").startswith("google/protobuf/"):
                    raise ValueError(f"import {name} is not among the schema's references")
                self.take(";")
            elif word in ("message", "enum"):
                self.block(word, self.proto.package)
            elif word in ("syntax", "edition", "option", "service", "extend"):
                self.at -= 1
                self.skip_statement()
            elif word != ";":
                raise ValueError(f"unexpected {word!r}")
        return self.proto

    def block(self, kind: str, scope: str) -> None:
        simple = self.take()
        name = f"{scope}.{simple}" if scope else simple
        self.take("{")
        if kind == "enum":
            self.proto.enums.add(name)
            while self.tokens[self.at] != "}":
                self.skip_statement()
            self.take("}")
            return
        fields = self.proto.messages.setdefault(name, {})
        self.body(name, fields, None)

    def body(self, name: str, fields: dict[int, Field], oneof: str | None) -> None:
        while (word := self.take()) != "}":
            if word in ("message", "enum"):
                self.block(word, name)
            elif word == "oneof":
                group = self.take()
                self.take("{")
                self.body(name, fields, group)
            elif word in ("option", "reserved", "extensions", "extend") or word == ";":
                if word != ";":
                    self.at -= 1
                    self.skip_statement()
            else:
                self.at -= 1
                number, f = self.field(oneof)
                if number in fields:
                    raise ValueError(f"field number {number} is used twice in {name}")
                fields[number] = f

    def field(self, oneof: str | None) -> tuple[int, Field]:
        label = self.take() if self.tokens[self.at] in ("optional", "required", "repeated") else ""
        kind = self.take()
        if kind == "map":
            self.take("<")
            key = self.take()
            self.take(",")
            kind, label = f"map<{key},{self.take()}>", "repeated"
            self.take(">")
        name = self.take()
        self.take("=")
        number = int(self.take())
        while self.take() != ";":  # [options]
            pass
        return number, Field(name, kind, label, oneof)


def _kind(proto: Proto, scope: str, type_name: str) -> tuple[str, str]:
    """('scalar'|'message'|'enum', resolved name) for a field type seen from message ``scope``."""
    if type_name in SCALARS or type_name.startswith("map<"):
        return ("scalar" if type_name in SCALARS else "map", type_name)
    if type_name.startswith("."):
        full = type_name[1:]
        return ("enum" if full in proto.enums else "message", full)
    parts = scope.split(".")
    for i in range(len(parts), -1, -1):  # protobuf's scoping: innermost first
        full = ".".join([*parts[:i], type_name])
        if full in proto.enums:
            return ("enum", full)
        if full in proto.messages:
            return ("message", full)
    return ("message", type_name)  # defined in an imported file


def problems(reader: ParsedSchema, writer: ParsedSchema, reader_role: str, writer_role: str) -> list[str]:
    r, w = reader.parsed, writer.parsed
    out = []
    if r.package != w.package:
        out.append(("PACKAGE_CHANGED", f"the package changed from {w.package!r} to {r.package!r}"))
    r_messages = {_relative(r, name): name for name in r.messages}  # a changed package is reported once
    for message, w_fields in w.messages.items():
        found = r_messages.get(_relative(w, message))
        if found is None:
            out.append(("MESSAGE_REMOVED", f"message {message} is missing from the {reader_role} schema"))
            continue
        out += _field_problems(r, w, (found, message), r.messages[found], w_fields)
    return [f"{{errorType:'{kind}', description:'{text}'}}" for kind, text in out]


def _field_problems(r: Proto, w: Proto, scopes: tuple[str, str], r_fields: dict[int, Field],
                    w_fields: dict[int, Field]) -> list[tuple[str, str]]:
    (r_scope, message), out = scopes, []
    for number, wf in w_fields.items():
        rf = r_fields.get(number)
        where = f"field {number} of {message}"
        if rf is None:
            if wf.label == "required":
                out.append(("REQUIRED_FIELD_REMOVED", f"required {where} ({wf.name}) was removed"))
            continue
        (rk, rt), (wk, wt) = _kind(r, r_scope, rf.type), _kind(w, message, wf.type)
        if (rf.label == "repeated") != (wf.label == "repeated") or ({rk, wk} - {"scalar", "enum"} and rk != wk):
            before, after = f"{wf.label} {wt}".strip(), f"{rf.label} {rt}".strip()
            out.append(("FIELD_KIND_CHANGED", f"{where} changed from {before} to {after}"))
        elif rk == "message" and _short(rt) != _short(wt):
            out.append(("FIELD_NAMED_TYPE_CHANGED", f"{where} changed from message {wt} to {rt}"))
        elif rk != "message" and rt != wt and not any({rk if rk == "enum" else rt, wk if wk == "enum" else wt} <= g
                                                      for g in WIRE_GROUPS):
            out.append(("FIELD_SCALAR_KIND_CHANGED", f"{where} changed from {wt} to {rt}, which the wire cannot carry"))
        if rf.oneof and not wf.oneof and any(f.oneof == rf.oneof for n, f in w_fields.items() if n != number):
            out.append(("FIELD_MOVED_TO_EXISTING_ONEOF", f"{where} moved into the existing oneof {rf.oneof}"))
    for number, rf in r_fields.items():
        if number not in w_fields and rf.label == "required":
            out.append(("REQUIRED_FIELD_ADDED", f"required field {number} of {message} ({rf.name}) was added"))
    return out


def _relative(proto: Proto, name: str) -> str:
    return name[len(proto.package) + 1:] if proto.package and name.startswith(proto.package + ".") else name


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]
