"""Running one task: a thread with its own Kafka client, as Kafka's WorkerSourceTask and WorkerSinkTask.

A **source** task is polled; each record goes through the transforms and the converters
and is produced. Every ``offset.flush.interval.ms`` (and when the task stops) the worker
flushes the producer and only then writes the source offsets it has seen to
``connect-offsets``: a crash in between sends some records again after the restart
(at-least-once).

A **sink** task is a member of the consumer group ``connect-<name>``. Records are
converted, transformed and handed to ``put()``; every ``offset.flush.interval.ms`` (and
when the task stops) the worker calls ``flush()`` and then commits the consumer offsets.
A crash between a write and the next commit writes those records again: at-least-once,
which an idempotent write (the JDBC sink's upsert) turns into one row per key.

``errors.tolerance=all`` skips a record that fails to convert or transform (and sends it
to ``errors.deadletterqueue.topic.name`` when one is set); ``none`` fails the task.
"""

from __future__ import annotations

import re
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition

from ...client_logs import quiet
from . import converters, plugins, transforms
from .._kafka import position
from .data import ConnectRecord
from .storage import offset_key
from .tasks import TASKS

StatusListener = Callable[[int, str, "str | None"], None]


class TaskRunner:
    def __init__(self, connector: str, task_id: int, config: dict[str, str], worker: Any, on_status: StatusListener):
        self.connector, self.id, self.config, self.worker = connector, task_id, config, worker
        self.on_status = on_status
        self.state, self.started = "UNASSIGNED", False
        self.trace: str | None = None
        self.stopping, self.paused = threading.Event(), threading.Event()
        plugin = plugins.find(config["connector.class"])
        assert plugin is not None, config["connector.class"]  # the worker runs only connectors of a known plugin
        self.task = TASKS[plugin.class_name]()
        self.transforms = transforms.chain(config)
        self.key_converter = self._converter("key")
        self.value_converter = self._converter("value")
        self.tolerate = config.get("errors.tolerance", "none") == "all"
        self.thread = threading.Thread(target=self._run, name=f"task-{connector}-{task_id}", daemon=True)

    def _converter(self, part: str) -> converters.Converter:
        name = self.config.get(f"{part}.converter") or self.worker.config[f"{part}.converter"]
        prefix = f"{part}.converter."
        settings = {k[len(prefix):]: v for k, v in {**self.worker.config, **self.config}.items()
                    if k.startswith(prefix)}
        return converters.make(name, settings, part == "key")

    def set_state(self, state: str, trace: str | None = None) -> None:
        self.state, self.trace = state, trace
        self.on_status(self.id, state, trace)

    def start(self, paused: bool) -> None:
        if paused:
            self.paused.set()
        self.thread.start()

    def pause(self) -> None:
        self.paused.set()
        self.set_state("PAUSED")

    def resume(self) -> None:
        self.paused.clear()
        self.set_state("RUNNING")

    def stop(self, timeout: float = 15) -> None:
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(timeout)

    def _run(self) -> None:
        try:
            self.setup()
            self.set_state("PAUSED" if self.paused.is_set() else "RUNNING")
            next_flush = time.monotonic() + self.worker.flush_interval
            while not self.stopping.is_set():
                self.step()
                if time.monotonic() >= next_flush:
                    self.commit()
                    next_flush = time.monotonic() + self.worker.flush_interval
            self.commit()
        except Exception as e:  # noqa: BLE001 - a failed task is reported in its status, as Connect does
            self.set_state("FAILED", f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
        finally:
            self.teardown()

    def transform(self, record: ConnectRecord) -> ConnectRecord | None:
        for t in self.transforms:
            applied = t.apply(record)
            if applied is None:
                return None
            record = applied
        return record

    # what each kind of task does
    def setup(self) -> None: ...
    def step(self) -> None: ...
    def commit(self) -> None: ...
    def teardown(self) -> None: ...


class SourceRunner(TaskRunner):
    def setup(self) -> None:
        path = self.config.get("file")
        stored = self.worker.topics.source_offset(self.connector, {"filename": path}) if path else None
        self.task.start(self.config, stored)
        self.started = True
        self.producer = Producer(quiet({"bootstrap.servers": self.worker.bootstrap, "acks": "all",
                                        "enable.idempotence": True, "partitioner": "murmur2_random",
                                        "client.id": f"connector-producer-{self.connector}-{self.id}"}))
        self.pending: dict[str, tuple[dict, dict]] = {}  # source partition -> (partition, latest offset)

    def step(self) -> None:
        if self.paused.is_set():
            self.stopping.wait(0.1)
            return
        records = self.task.poll()
        if not records:
            self.stopping.wait(0.2)
            return
        for record in records:
            out = self.transform(record)
            if out is not None:
                self.producer.produce(out.topic, self.value_converter.from_connect(out.topic, out.value_schema,
                                                                                    out.value),
                                      self.key_converter.from_connect(out.topic, out.key_schema, out.key))
                self.producer.poll(0)
            self.pending[repr(record.source_partition)] = (record.source_partition, record.source_offset)

    def commit(self) -> None:
        if not hasattr(self, "producer") or not self.pending:
            return
        if self.producer.flush(15):
            raise RuntimeError("records were not acknowledged; the source offsets stay where they were")
        for partition, offset in self.pending.values():
            self.worker.topics.write(self.worker.topics.offsets, offset_key(self.connector, partition), offset)
        self.pending.clear()

    def teardown(self) -> None:
        if self.started:
            self.task.stop()
        if hasattr(self, "producer"):
            self.producer.flush(5)
            self.producer.close()


class SinkRunner(TaskRunner):
    def setup(self) -> None:
        self.task.start(self.config)
        self.started = True
        self.consumer = Consumer(quiet({
            "bootstrap.servers": self.worker.bootstrap, "group.id": f"connect-{self.connector}",
            "client.id": f"connector-consumer-{self.connector}-{self.id}", "enable.auto.commit": False,
            "auto.offset.reset": "earliest", "topic.metadata.refresh.interval.ms": 2000}))
        topics = [t.strip() for t in self.config.get("topics", "").split(",") if t.strip()]
        regex = self.config.get("topics.regex", "").strip()
        self.consumer.subscribe(topics or [f"^{regex}"])
        self.regex = re.compile(regex) if regex else None
        self.positions: dict[tuple[str, int], int] = {}
        self.dead_letters = self.config.get("errors.deadletterqueue.topic.name") or None
        self.dlq = Producer(quiet({"bootstrap.servers": self.worker.bootstrap})) if self.dead_letters else None

    def step(self) -> None:
        assignment = self.consumer.assignment()
        if self.paused.is_set():
            self.consumer.pause(assignment)
        elif assignment:
            self.consumer.resume(assignment)
        batch = [m for m in self.consumer.consume(500, 0.2) if not m.error()]
        records = []
        for msg in batch:
            record = self._record(msg)
            if record is not None:
                records.append(record)
            topic, (partition, offset) = msg.topic(), position(msg)
            assert topic is not None  # a record names its topic
            self.positions[(topic, partition)] = offset + 1
        if records:
            self.task.put(records)

    # msg: a confluent Message, Any because its stubs make topic, partition and offset optional (they are
    # unset on an error event) and type headers loosely; a polled record has them all
    def _record(self, msg: Any) -> ConnectRecord | None:
        try:
            key_schema, key = self.key_converter.to_connect(msg.topic(), msg.key())
            value_schema, value = self.value_converter.to_connect(msg.topic(), msg.value())
            record = ConnectRecord(msg.topic(), key, value, key_schema, value_schema, msg.partition(), msg.offset(),
                                   msg.timestamp()[1], tuple(msg.headers() or ()))
            return self.transform(record)
        except Exception:  # any failure of a record: errors.tolerance decides (re-raised unless "all")
            if not self.tolerate:
                raise
            if self.dlq is not None and self.dead_letters is not None:  # the one is made when the other is set
                self.dlq.produce(self.dead_letters, msg.value(), msg.key())
                self.dlq.flush(10)
            return None

    def commit(self) -> None:
        if not hasattr(self, "consumer") or not self.positions:
            return
        self.task.flush()
        self.consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in self.positions.items()],
                             asynchronous=False)
        self.positions.clear()

    def teardown(self) -> None:
        if hasattr(self, "consumer"):
            self.consumer.close()
        if self.started:
            self.task.stop()
        dlq = getattr(self, "dlq", None)
        if dlq is not None:
            dlq.flush(5)


def runner_for(plugin_type: str) -> type[TaskRunner]:
    return SourceRunner if plugin_type == "source" else SinkRunner
