"""The registry's state, rebuilt from the records of the compacted ``_schemas`` topic.

Confluent Schema Registry keeps nothing but this topic: every registration, soft delete
and configuration change is a record, and each instance rebuilds its state by reading the
topic from the beginning. The records look like the real ones:

    key   {"keytype": "SCHEMA", "subject": "orders-value", "version": 1, "magic": 1}
    value {"subject": "orders-value", "version": 1, "id": 1, "schema": "...", "deleted": false}
          (+ "schemaType": "JSON" | "PROTOBUF", and "references", when there are any)
    key   {"keytype": "CONFIG", "subject": null, "magic": 0}      value {"compatibilityLevel": "FULL"}
    key   {"keytype": "DELETE_SUBJECT", "subject": "s", "magic": 0} value {"subject": "s", "version": 3}

A hard delete is a tombstone (a null value) for the version's key, which compaction then
removes for good. ``SchemaStore.apply`` is the only way state changes; the ``plan_*``
methods check a request against the state and return the records that would carry it out,
so the same rules run whether a record comes from this instance or from the topic.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from . import errors
from .formats import LEVELS, ParsedSchema, compatibility_problems, parse

Record = tuple[dict, "dict | None"]


@dataclass(frozen=True)
class Version:
    subject: str
    version: int
    id: int
    schema_type: str
    schema: str
    references: tuple[tuple[str, str, int], ...]  # (name, subject, version)
    deleted: bool = False

    def body(self) -> dict:
        """The JSON the REST API returns for a version: AVRO is the type when none is named."""
        out: dict[str, Any] = {"subject": self.subject, "version": self.version, "id": self.id}
        if self.schema_type != "AVRO":
            out["schemaType"] = self.schema_type
        if self.references:
            out["references"] = [{"name": n, "subject": s, "version": v} for n, s, v in self.references]
        return {**out, "schema": self.schema}


def schema_key(subject: str, version: int) -> dict:
    return {"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}


def config_key(subject: str | None) -> dict:
    return {"keytype": "CONFIG", "subject": subject, "magic": 0}


class SchemaStore:
    def __init__(self, default_compatibility: str = "BACKWARD"):
        self.default_compatibility = default_compatibility
        self.subjects: dict[str, dict[int, Version]] = {}
        self.configs: dict[str | None, str] = {}  # None: the global level

    # -- state from records ------------------------------------------------------------------
    def apply(self, key: dict, value: dict | None) -> None:
        kind, subject = key.get("keytype"), key.get("subject")
        if kind == "SCHEMA":
            assert subject is not None, key  # the registry writes a subject into every schema record's key
            versions = self.subjects.setdefault(subject, {})
            if value is None:
                versions.pop(key["version"], None)
            else:
                refs = tuple((r["name"], r["subject"], r["version"]) for r in value.get("references") or [])
                versions[value["version"]] = Version(subject, value["version"], value["id"],
                                                     value.get("schemaType") or "AVRO", value["schema"], refs,
                                                     bool(value.get("deleted")))
        elif kind == "CONFIG":
            if value is None:
                self.configs.pop(subject, None)
            else:
                self.configs[subject] = value["compatibilityLevel"]
        elif kind == "DELETE_SUBJECT" and value is not None:
            assert subject is not None, key  # and into every subject deletion's
            versions = self.subjects.get(subject, {})
            for v in [v for v in versions.values() if v.version <= value["version"]]:
                versions[v.version] = replace(v, deleted=True)

    # -- queries -------------------------------------------------------------------------------
    def compatibility(self, subject: str | None) -> str:
        return self.configs.get(subject) or self.configs.get(None) or self.default_compatibility

    def versions(self, subject: str, deleted: bool = False) -> list[Version]:
        return sorted((v for v in self.subjects.get(subject, {}).values() if deleted or not v.deleted),
                      key=lambda v: v.version)

    def live_subjects(self, deleted: bool = False) -> list[str]:
        return sorted(s for s in self.subjects if self.versions(s, deleted))

    def by_id(self, schema_id: int) -> list[Version]:
        return [v for s in self.subjects.values() for v in s.values() if v.id == schema_id]

    def version(self, subject: str, version: str | int, deleted: bool = False) -> Version:
        """One version of a subject: a number, "latest" or -1; the registry's 404s otherwise."""
        number = _version_number(version)
        every = self.versions(subject, deleted=True)
        if not every:
            raise errors.subject_not_found(subject)
        visible = [v for v in every if deleted or not v.deleted]
        if number == -1:
            if not visible:
                raise errors.subject_not_found(subject)
            return visible[-1]
        found = next((v for v in visible if v.version == number), None)
        if found is None:
            raise errors.version_not_found(number)
        return found

    def parsed(self, v: Version) -> ParsedSchema:
        return parse(v.schema_type, v.schema, self.reference_texts(v.references))

    def reference_texts(self, references: tuple[tuple[str, str, int], ...]) -> dict[str, str]:
        """Name -> schema text of every referenced schema, the references' own references first."""
        out: dict[str, str] = {}
        for name, subject, number in references:
            try:
                ref = self.version(subject, number, deleted=True)
            except errors.RegistryError as e:
                raise errors.invalid_schema(f"Invalid schema: reference {name} to {subject} version {number}: "
                                            f"{e.message}") from e
            out.update(self.reference_texts(ref.references))
            out[name] = ref.schema
        return out

    def referenced_by(self, subject: str, version: int) -> list[int]:
        return sorted({v.id for vs in self.subjects.values() for v in vs.values()
                       if not v.deleted and any(s == subject and n == version for _, s, n in v.references)})

    # -- requests turned into records --------------------------------------------------------------
    def candidate(self, body: dict) -> tuple[ParsedSchema, tuple[tuple[str, str, int], ...]]:
        """The schema a request body names, parsed, or the registry's 422."""
        schema_type = (body.get("schemaType") or "AVRO").upper()
        if not body.get("schema"):
            raise errors.invalid_schema("Empty schema")
        if schema_type not in ("AVRO", "JSON", "PROTOBUF"):
            raise errors.invalid_schema(f"Invalid schema type {schema_type}")
        refs = tuple((r["name"], r["subject"], int(r["version"])) for r in body.get("references") or [])
        try:
            return parse(schema_type, body["schema"], self.reference_texts(refs)), refs
        except ValueError as e:
            raise errors.invalid_schema(str(e)) from e

    def find(self, subject: str, parsed: ParsedSchema, deleted: bool = False) -> Version | None:
        for v in self.versions(subject, deleted):
            if v.schema_type == parsed.schema_type and self.parsed(v).identity == parsed.identity:
                return v
        return None

    def problems(self, subject: str, parsed: ParsedSchema, against: list[Version] | None = None) -> list[str]:
        level = self.compatibility(subject)
        earlier = self.versions(subject) if against is None else against
        found = compatibility_problems(parsed, [self.parsed(v) for v in earlier], level)
        if found and earlier:
            latest = earlier[-1]
            found += [f"{{oldSchemaVersion: {latest.version}}}", f"{{oldSchema: '{latest.schema}'}}",
                      f"{{compatibility: '{level}'}}"]
        return found

    def plan_register(self, subject: str, body: dict) -> tuple[list[Record], int]:
        parsed, refs = self.candidate(body)
        known = self.find(subject, parsed)
        if known is not None:
            return [], known.id
        problems = self.problems(subject, parsed)
        if problems:
            raise errors.incompatible(subject, problems)
        same = next((v.id for s in self.subjects.values() for v in s.values()
                     if v.schema_type == parsed.schema_type and v.references == refs
                     and self.parsed(v).identity == parsed.identity), None)
        schema_id = same or 1 + max((v.id for s in self.subjects.values() for v in s.values()), default=0)
        number = 1 + max((v.version for v in self.versions(subject, deleted=True)), default=0)
        value: dict[str, Any] = {"subject": subject, "version": number, "id": schema_id}
        if parsed.schema_type != "AVRO":
            value["schemaType"] = parsed.schema_type
        if refs:
            value["references"] = [{"name": n, "subject": s, "version": v} for n, s, v in refs]
        value.update(schema=parsed.canonical, deleted=False)
        return [(schema_key(subject, number), value)], schema_id

    def plan_delete_subject(self, subject: str, permanent: bool) -> tuple[list[Record], list[int]]:
        every = self.versions(subject, deleted=True)
        if not every:
            raise errors.subject_not_found(subject)
        live = [v for v in every if not v.deleted]
        for v in live:
            if self.referenced_by(subject, v.version):
                raise errors.reference_exists(subject, v.version)
        if permanent:
            if live:
                raise errors.subject_not_soft_deleted(subject)
            records = [(schema_key(subject, v.version), None) for v in every]
            return [*records, ({"keytype": "DELETE_SUBJECT", "subject": subject, "magic": 0}, None),
                    (config_key(subject), None)], [v.version for v in every]
        if not live:
            raise errors.subject_soft_deleted(subject)
        key = {"keytype": "DELETE_SUBJECT", "subject": subject, "magic": 0}
        return [(key, {"subject": subject, "version": live[-1].version})], [v.version for v in live]

    def plan_delete_version(self, subject: str, version: str, permanent: bool) -> tuple[list[Record], int]:
        v = self.version(subject, version, deleted=True)
        if v.deleted and not permanent:
            raise errors.version_soft_deleted(subject, v.version)
        if self.referenced_by(subject, v.version):
            raise errors.reference_exists(subject, v.version)
        if permanent:
            if not v.deleted:
                raise errors.version_not_soft_deleted(subject, v.version)
            return [(schema_key(subject, v.version), None)], v.version
        value = {**self._value(v), "deleted": True}
        return [(schema_key(subject, v.version), value)], v.version

    def plan_config(self, subject: str | None, level: str | None) -> list[Record]:
        if level is None:
            return [(config_key(subject), None)]
        if str(level).upper() not in LEVELS:
            raise errors.invalid_compatibility()
        return [(config_key(subject), {"compatibilityLevel": str(level).upper()})]

    @staticmethod
    def _value(v: Version) -> dict:
        body = v.body()
        return {**body, "deleted": v.deleted}


def _version_number(version: str | int) -> int:
    text = str(version)
    if text == "latest":
        return -1
    try:
        number = int(text)
    except ValueError:
        raise errors.invalid_version(text) from None
    if number == -1 or 1 <= number <= 2**31 - 1:
        return number
    raise errors.invalid_version(text)
