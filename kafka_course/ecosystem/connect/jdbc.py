"""Confluent's JDBC sink, for PostgreSQL: records with a struct schema become rows.

The sink needs a schema to know the columns, so its records come through a converter that
carries one (Avro with the schema registry, or JSON with ``schemas.enable=true``); a
schemaless JSON value fails the task with the JDBC sink's own sentence. With
``auto.create=true`` it creates the table from the schema (quoted names, as
``quote.sql.identifiers=ALWAYS``); ``insert.mode=upsert`` writes
``INSERT ... ON CONFLICT (pk) DO UPDATE``, so a record written twice is one row: at-least-once
delivery plus an idempotent write is *effectively once* for the table.

``pk.mode``: ``none``, ``kafka`` (``__connect_topic``, ``__connect_partition``,
``__connect_offset``), ``record_key`` or ``record_value`` with ``pk.fields``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

from .data import ConnectRecord, Field, Schema

PG_TYPES = {"int8": "SMALLINT", "int16": "SMALLINT", "int32": "INT", "int64": "BIGINT", "float32": "REAL",
            "float64": "DOUBLE PRECISION", "boolean": "BOOLEAN", "string": "TEXT", "bytes": "BYTEA"}
KAFKA_PK = [Field("__connect_topic", Schema("string")), Field("__connect_partition", Schema("int32")),
            Field("__connect_offset", Schema("int64"))]


class JdbcError(RuntimeError):
    pass


def conninfo(config: dict[str, str]) -> str:
    """``jdbc:postgresql://host:port/db?user=..`` -> a libpq connection string."""
    url = config["connection.url"]
    if not url.startswith("jdbc:postgresql://"):
        raise JdbcError(f"No suitable driver found for {url} (this worker writes to PostgreSQL only)")
    parts = urlsplit(url.removeprefix("jdbc:"))
    settings = {"host": parts.hostname or "127.0.0.1", "port": str(parts.port or 5432),
                "dbname": parts.path.lstrip("/") or "postgres", **dict(parse_qsl(parts.query))}
    if config.get("connection.user"):
        settings["user"] = config["connection.user"]
    if config.get("connection.password"):
        settings["password"] = config["connection.password"]
    return " ".join(f"{k}={v}" for k, v in settings.items())


class JdbcWriter:
    def __init__(self, config: dict[str, str]):
        import psycopg
        self.config = config
        self.mode, self.pk_mode = config.get("insert.mode", "insert"), config.get("pk.mode", "none")
        self.pk_fields = [f.strip() for f in config.get("pk.fields", "").split(",") if f.strip()]
        self.quote = config.get("quote.sql.identifiers", "ALWAYS").upper() == "ALWAYS"
        self.conn = psycopg.connect(conninfo(config), connect_timeout=5)

    def close(self) -> None:
        self.conn.close()

    def q(self, name: str) -> str:
        return '"' + name.replace('"', '""') + '"' if self.quote else name

    def write(self, records: list[ConnectRecord]) -> None:
        with self.conn.transaction():
            for record in records:
                self._write_one(record)

    def _columns(self, record: ConnectRecord) -> tuple[list[Field], list[str], dict[str, Any]]:
        """(all fields, primary key names, values by name) for one record."""
        schema = record.value_schema
        if schema is None or schema.type != "struct" or not isinstance(record.value, dict):
            kind = "HashMap" if isinstance(record.value, dict) else type(record.value).__name__
            raise JdbcError(
                f"Sink connector '{self.config.get('name')}' is configured with 'delete.enabled=false' and "
                f"'pk.mode={self.pk_mode}' and therefore requires records with a non-null Struct value and "
                f"non-null Struct schema, but found record at {record.where()} with a {kind} value and "
                f"{'null' if schema is None else schema.type} value schema.")
        wanted = [f.strip() for f in self.config.get("fields.whitelist", "").split(",") if f.strip()]
        fields = [f for f in schema.fields if not wanted or f.name in wanted]
        values = {f.name: record.value.get(f.name) for f in fields}
        if self.pk_mode == "kafka":
            names = self.pk_fields or [f.name for f in KAFKA_PK]
            pk = [Field(n, f.schema) for n, f in zip(names, KAFKA_PK)]
            values.update(zip(names, (record.topic, record.partition, record.offset)))
            return pk + fields, names, values
        if self.pk_mode == "record_key":
            return self._key_columns(record, fields, values)
        if self.pk_mode == "record_value":
            return fields, self.pk_fields or [f.name for f in fields], values
        return fields, [], values

    def _key_columns(self, record: ConnectRecord, fields: list[Field],
                     values: dict[str, Any]) -> tuple[list[Field], list[str], dict[str, Any]]:
        key_schema = record.key_schema
        if key_schema is not None and key_schema.type == "struct":
            pk = [f for f in key_schema.fields if not self.pk_fields or f.name in self.pk_fields]
            values.update({f.name: record.key.get(f.name) for f in pk})
        else:
            if len(self.pk_fields) != 1:
                raise JdbcError("Need exactly one PK column defined since the key schema for records is a primitive "
                                f"type, defined columns are: {self.pk_fields}")
            pk = [Field(self.pk_fields[0], key_schema or Schema("string"))]
            values[self.pk_fields[0]] = record.key
        return pk + [f for f in fields if f.name not in {p.name for p in pk}], [f.name for f in pk], values

    def _write_one(self, record: ConnectRecord) -> None:
        fields, pk, values = self._columns(record)
        table = self.config.get("table.name.format", "${topic}").replace("${topic}", record.topic)
        self._ensure_table(table, fields, pk)
        names = [f.name for f in fields]
        cols, marks = ", ".join(self.q(n) for n in names), ", ".join(["%s"] * len(names))
        args = [values.get(n) for n in names]
        if self.mode == "insert":
            sql = f"INSERT INTO {self.q(table)} ({cols}) VALUES ({marks})"
        elif not pk:
            raise JdbcError(f"Write to table '{table}' in {self.mode.upper()} mode requires key field names to be "
                            "known, check the primary key configuration")
        elif self.mode == "upsert":
            others = [n for n in names if n not in pk]
            action = ("DO UPDATE SET " + ", ".join(f"{self.q(n)}=EXCLUDED.{self.q(n)}" for n in others)
                      if others else "DO NOTHING")
            sql = f"INSERT INTO {self.q(table)} ({cols}) VALUES ({marks}) ON CONFLICT ({', '.join(map(self.q, pk))}) " \
                  + action
        else:
            others = [n for n in names if n not in pk]
            sql = (f"UPDATE {self.q(table)} SET {', '.join(f'{self.q(n)} = %s' for n in others)} WHERE "
                   + " AND ".join(f"{self.q(n)} = %s" for n in pk))
            args = [values.get(n) for n in others] + [values.get(n) for n in pk]
        self.conn.execute(sql, args)

    def _existing_columns(self, table: str) -> set[str]:
        rows = self.conn.execute("SELECT column_name FROM information_schema.columns WHERE table_name = %s "
                                 "AND table_schema = current_schema()", [table if self.quote else table.lower()])
        return {row[0] for row in rows}

    def _ensure_table(self, table: str, fields: list[Field], pk: list[str]) -> None:
        existing = self._existing_columns(table)
        if not existing:
            if self.config.get("auto.create", "false").lower() != "true":
                raise JdbcError(f"Table \"{table}\" is missing and auto-creation is disabled")
            columns = [f"{self.q(f.name)} {PG_TYPES[f.schema.type]}{'' if f.schema.optional else ' NOT NULL'}"
                       for f in fields]
            key = [f"PRIMARY KEY({', '.join(map(self.q, pk))})"] if pk else []
            self.conn.execute(f"CREATE TABLE {self.q(table)} (\n" + ",\n".join(columns + key) + ")")
            return
        missing = [f for f in fields if f.name not in existing]
        if missing and self.config.get("auto.evolve", "false").lower() != "true":
            raise JdbcError(f"Table \"{table}\" is missing fields ({[f.name for f in missing]}) and auto-evolution "
                            "is disabled")
        for f in missing:
            if not f.schema.optional:
                raise JdbcError(f"Cannot ALTER TABLE \"{table}\" to add missing field {f.name}, as the field is not "
                                "optional and does not have a default value")
            self.conn.execute(f"ALTER TABLE {self.q(table)} ADD {self.q(f.name)} {PG_TYPES[f.schema.type]} NULL")
