"""Confluent Schema Registry's REST API, one function per route, over a ``SchemaStore``.

Each handler takes the path's parts, the query and the JSON body and returns the JSON
answer; a ``RegistryError`` becomes ``{"error_code": ..., "message": ...}`` with its
status. Writes go through ``write(records)``, which the server makes durable in the
``_schemas`` topic before the answer is sent, as the real registry waits for its own
write to come back from Kafka.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from . import errors
from .formats import TYPES
from .store import Record, SchemaStore, Version

Write = Callable[[list[Record]], None]
Query = dict[str, str]
Handler = Callable[..., Any]
ROUTES: list[tuple[str, re.Pattern, Handler]] = []


def route(method: str, pattern: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        ROUTES.append((method, re.compile(f"^{pattern}/?$"), handler))
        return handler
    return register


def flag(query: dict[str, str], name: str) -> bool:
    return query.get(name, "false").lower() == "true"


def _compatibility_answer(problems: list[str], verbose: bool) -> dict:
    answer: dict[str, Any] = {"is_compatible": not problems}
    if verbose:
        answer["messages"] = problems
    return answer


class RegistryApi:
    def __init__(self, store: SchemaStore, write: Write):
        self.store, self.write = store, write

    def handle(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        allowed = False
        for verb, pattern, handler in ROUTES:
            found = pattern.match(path)
            if found:
                allowed = True
                if verb == method:
                    try:
                        return 200, handler(self, *map(unquote, found.groups()), query=query, body=body)
                    except errors.RegistryError as e:
                        return e.status, e.body()
        if allowed:
            return 405, {"error_code": 405, "message": "HTTP 405 Method Not Allowed"}
        return 404, {"error_code": 404, "message": "HTTP 404 Not Found"}

    # -- subjects and versions -------------------------------------------------------------------
    @route("GET", "/subjects")
    def list_subjects(self, query: Query, body: Any) -> list[str]:
        prefix = query.get("subjectPrefix", "")
        return [s for s in self.store.live_subjects(flag(query, "deleted")) if s.startswith(prefix)]

    @route("GET", "/subjects/([^/]+)/versions")
    def list_versions(self, subject: str, query: Query, body: Any) -> list[int]:
        versions = self.store.versions(subject, flag(query, "deleted"))
        if not versions:
            raise errors.subject_not_found(subject)
        return [v.version for v in versions]

    @route("POST", "/subjects/([^/]+)/versions")
    def register(self, subject: str, query: Query, body: Any) -> dict[str, int]:
        records, schema_id = self.store.plan_register(subject, body or {})
        self.write(records)
        return {"id": schema_id}

    @route("POST", "/subjects/([^/]+)")
    def lookup(self, subject: str, query: Query, body: Any) -> dict:
        parsed, _ = self.store.candidate(body or {})
        if not self.store.versions(subject, deleted=True):
            raise errors.subject_not_found(subject)
        found = self.store.find(subject, parsed, deleted=flag(query, "deleted"))
        if found is None:
            raise errors.schema_not_found()
        return found.body()

    @route("GET", "/subjects/([^/]+)/versions/([^/]+)")
    def get_version(self, subject: str, version: str, query: Query, body: Any) -> dict:
        return self.store.version(subject, version, flag(query, "deleted")).body()

    @route("GET", "/subjects/([^/]+)/versions/([^/]+)/schema")
    def get_version_schema(self, subject: str, version: str, query: Query, body: Any) -> RawText:
        return RawText(self.store.version(subject, version, flag(query, "deleted")).schema)

    @route("GET", "/subjects/([^/]+)/versions/([^/]+)/referencedby")
    def referenced_by(self, subject: str, version: str, query: Query, body: Any) -> list[int]:
        return self.store.referenced_by(subject, self.store.version(subject, version, True).version)

    @route("DELETE", "/subjects/([^/]+)")
    def delete_subject(self, subject: str, query: Query, body: Any) -> list[int]:
        records, versions = self.store.plan_delete_subject(subject, flag(query, "permanent"))
        self.write(records)
        return versions

    @route("DELETE", "/subjects/([^/]+)/versions/([^/]+)")
    def delete_version(self, subject: str, version: str, query: Query, body: Any) -> int:
        records, number = self.store.plan_delete_version(subject, version, flag(query, "permanent"))
        self.write(records)
        return number

    # -- schemas by id ------------------------------------------------------------------------------
    def _by_id(self, schema_id: str, query: Query) -> list[Version]:
        found = self.store.by_id(int(schema_id)) if schema_id.isdigit() else []
        if "subject" in query and any(v.subject == query["subject"] for v in found):
            found = [v for v in found if v.subject == query["subject"]]
        if not found:
            raise errors.schema_not_found(int(schema_id) if schema_id.isdigit() else None)
        return found

    @route("GET", "/schemas/ids/([^/]+)")
    def get_schema(self, schema_id: str, query: Query, body: Any) -> dict:
        v = self._by_id(schema_id, query)[0]
        return {k: val for k, val in v.body().items() if k in ("schemaType", "references", "schema")}

    @route("GET", "/schemas/ids/([^/]+)/schema")
    def get_schema_text(self, schema_id: str, query: Query, body: Any) -> RawText:
        return RawText(self._by_id(schema_id, query)[0].schema)

    @route("GET", "/schemas/ids/([^/]+)/versions")
    def get_schema_versions(self, schema_id: str, query: Query, body: Any) -> list[dict[str, Any]]:
        return [{"subject": v.subject, "version": v.version} for v in self._by_id(schema_id, {})
                if flag(query, "deleted") or not v.deleted]

    @route("GET", "/schemas/ids/([^/]+)/subjects")
    def get_schema_subjects(self, schema_id: str, query: Query, body: Any) -> list[str]:
        return sorted({v.subject for v in self._by_id(schema_id, {}) if flag(query, "deleted") or not v.deleted})

    @route("GET", "/schemas/types")
    def schema_types(self, query: Query, body: Any) -> list[str]:
        return list(TYPES)

    # -- compatibility and configuration ------------------------------------------------------------
    @route("POST", "/compatibility/subjects/([^/]+)/versions/([^/]+)")
    def test_against_version(self, subject: str, version: str, query: Query, body: Any) -> dict:
        parsed, _ = self.store.candidate(body or {})
        against = self.store.version(subject, version)
        return _compatibility_answer(self.store.problems(subject, parsed, [against]), flag(query, "verbose"))

    @route("POST", "/compatibility/subjects/([^/]+)/versions")
    def test_against_all(self, subject: str, query: Query, body: Any) -> dict:
        parsed, _ = self.store.candidate(body or {})
        return _compatibility_answer(self.store.problems(subject, parsed), flag(query, "verbose"))

    @route("GET", "/config")
    def get_global_config(self, query: Query, body: Any) -> dict[str, str]:
        return {"compatibilityLevel": self.store.compatibility(None)}

    @route("PUT", "/config")
    def set_global_config(self, query: Query, body: Any) -> dict[str, str]:
        level = (body or {}).get("compatibility") or ""  # plan_config refuses "" as an invalid level
        self.write(self.store.plan_config(None, level))
        return {"compatibility": level.upper()}

    @route("GET", "/config/([^/]+)")
    def get_subject_config(self, subject: str, query: Query, body: Any) -> dict[str, str]:
        if subject in self.store.configs:
            return {"compatibilityLevel": self.store.configs[subject]}
        if flag(query, "defaultToGlobal"):
            return {"compatibilityLevel": self.store.compatibility(None)}
        raise errors.no_subject_compatibility(subject)

    @route("PUT", "/config/([^/]+)")
    def set_subject_config(self, subject: str, query: Query, body: Any) -> dict[str, str]:
        level = (body or {}).get("compatibility") or ""  # plan_config refuses "" as an invalid level
        self.write(self.store.plan_config(subject, level))
        return {"compatibility": level.upper()}

    @route("DELETE", "/config/([^/]+)")
    def delete_subject_config(self, subject: str, query: Query, body: Any) -> dict[str, str]:
        if subject not in self.store.configs:
            raise errors.no_subject_compatibility(subject)
        previous = self.store.configs[subject]
        self.write(self.store.plan_config(subject, None))
        return {"compatibilityLevel": previous}

    # -- the rest of the surface clients probe ------------------------------------------------------
    @route("GET", "")
    def root(self, query: Query, body: Any) -> dict:
        return {}

    @route("GET", "/mode")
    def mode(self, query: Query, body: Any) -> dict[str, str]:
        return {"mode": "READWRITE"}

    @route("GET", "/contexts")
    def contexts(self, query: Query, body: Any) -> list[str]:
        return ["."]


class RawText(str):
    """An answer sent as the schema text itself (the ``/schema`` routes), not as JSON."""
