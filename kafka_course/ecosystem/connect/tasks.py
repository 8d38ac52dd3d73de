"""The tasks that do the work: Kafka's FileStream source and sink, and Confluent's JDBC sink.

A *source task* is polled for records and says, for each one, where it came from (its
*source partition*, here ``{"filename": ...}``) and how far it got (its *source offset*,
``{"position": <bytes read>}``); the worker stores those in ``connect-offsets`` and gives
them back when the task starts again. A *sink task* is handed records by the worker's
consumer and writes them out; the worker commits the consumer's offsets after ``flush()``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from .data import STRING, ConnectRecord, java_string
from .jdbc import JdbcWriter


class ConnectException(RuntimeError):
    """org.apache.kafka.connect.errors.ConnectException: the task cannot go on."""


class SourceTask:
    def start(self, config: dict[str, str], offset: dict | None) -> None: ...
    def poll(self) -> list[ConnectRecord]:
        return []  # every source task overrides this: the records it found since the last poll
    def stop(self) -> None: ...


class SinkTask:
    def start(self, config: dict[str, str]) -> None: ...
    def put(self, records: list[ConnectRecord]) -> None: ...
    def flush(self) -> None: ...
    def stop(self) -> None: ...


class FileStreamSourceTask(SourceTask):
    """Each line of the file becomes a record with a string value; the offset is a byte position."""

    def start(self, config: dict[str, str], offset: dict | None) -> None:
        if not config.get("file"):
            raise ConnectException("This worker cannot read standard input; set \"file\" to a path")
        self.path, self.topic = config["file"], config["topic"]
        self.batch = int(config.get("batch.size", 2000))
        self.position = int((offset or {}).get("position", 0))

    def poll(self) -> list[ConnectRecord]:
        if not os.path.exists(self.path):
            return []  # Kafka's task waits for the file to be created, too
        with open(self.path, "rb") as f:
            f.seek(self.position)
            data = f.read(1 << 20)
        records = []
        for line in data.split(b"\n")[:-1][: self.batch]:  # the part after the last newline is not a line yet
            self.position += len(line) + 1
            records.append(ConnectRecord(self.topic, None, line.decode().rstrip("\r"), None, STRING,
                                         source_partition={"filename": self.path},
                                         source_offset={"position": self.position}))
        return records


_file_locks: dict[str, threading.Lock] = {}


class FileStreamSinkTask(SinkTask):
    """Writes ``String.valueOf(value)`` of each record as one line, as Kafka's FileStreamSinkTask does."""

    def start(self, config: dict[str, str]) -> None:
        if not config.get("file"):
            raise ConnectException("This worker has no standard output to write to; set \"file\" to a path")
        self.path = Path(config["file"])
        self.lock = _file_locks.setdefault(str(self.path), threading.Lock())
        self.out = self.path.open("a")

    def put(self, records: list[ConnectRecord]) -> None:
        with self.lock:
            for record in records:
                self.out.write(java_string(record.value, record.value_schema) + "\n")

    def flush(self) -> None:
        with self.lock:
            self.out.flush()

    def stop(self) -> None:
        self.out.close()


class JdbcSinkTask(SinkTask):
    def start(self, config: dict[str, str]) -> None:
        self.writer = JdbcWriter(config)

    def put(self, records: list[ConnectRecord]) -> None:
        self.writer.write(records)

    def flush(self) -> None:
        pass  # every put() is one committed database transaction

    def stop(self) -> None:
        self.writer.close()


TASKS: dict[str, type[Any]] = {
    "org.apache.kafka.connect.file.FileStreamSourceConnector": FileStreamSourceTask,
    "org.apache.kafka.connect.file.FileStreamSinkConnector": FileStreamSinkTask,
    "io.confluent.connect.jdbc.JdbcSinkConnector": JdbcSinkTask,
}
