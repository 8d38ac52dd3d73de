"""Kafka as a queue: share groups (KIP-932) through confluent-kafka's ``ShareConsumer``.

In a consumer group a partition has one owner, so the partition count caps the busy
members and a record is done when the group's offset passes it. In a *share group*
every member reads the same partitions and the broker hands out *records*: each is
acquired by one consumer under a lock (``group.share.record.lock.duration.ms``, 30 s by
default), then accepted, released (offered again, its delivery count increased) or
rejected (never delivered again). A record delivered ``group.share.delivery.count.limit``
times (5) without being accepted is archived. Records stay in the log for every other
group, as always.

The broker acquires whole record batches, so ``produce_each`` sends every record in a
batch of its own: that is what lets three consumers take turns on one partition.
``ShareWorkers`` runs consumers in threads (each with its own ``ShareConsumer``, which
is not thread-safe); ``share_consumer`` and ``poll_one`` are for step-by-step cells.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from confluent_kafka import Message, ShareConsumer

from .client_logs import quiet
from .clients import admin, producer
from .connection import current_bootstrap


def share_consumer(group: str, topic: str, *, bootstrap: str | None = None, **config: Any) -> ShareConsumer:
    """A ``ShareConsumer`` in ``group``, subscribed to ``topic``; settings passed with underscores
    (``share_acknowledgement_mode="explicit"``, ``max_poll_records=1``)."""
    settings = {"bootstrap.servers": bootstrap or current_bootstrap(), "group.id": group}
    settings.update({k.replace("_", "."): v for k, v in config.items()})
    consumer = ShareConsumer(quiet(settings))
    consumer.subscribe([topic])
    return consumer


def set_group_config(group: str, *, bootstrap: str | None = None, **settings: Any) -> None:
    """Change a group's own settings (IncrementalAlterConfigs on a GROUP resource, KIP-848/932);
    names with underscores: ``share_auto_offset_reset="earliest"``."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
    entries = [ConfigEntry(k.replace("_", "."), str(v), incremental_operation=AlterConfigOpType.SET)
               for k, v in settings.items()]
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
    for future in admin(bootstrap).incremental_alter_configs([resource]).values():
        future.result(10)


def read_from_start(group: str, *, bootstrap: str | None = None) -> None:
    """A new share group starts at the end of the log (``share.auto.offset.reset=latest``); this
    one starts at the beginning."""
    set_group_config(group, bootstrap=bootstrap, share_auto_offset_reset="earliest")


def produce_each(topic: str, values: Iterable[str], *, key: Any = None, bootstrap: str | None = None) -> int:
    """Send each value in a record batch of its own, to partition 0; returns how many."""
    p = producer(bootstrap, linger_ms=0)
    count = 0
    for i, value in enumerate(values):
        k = key(i) if callable(key) else key
        p.produce(topic, value.encode(), key=k.encode() if isinstance(k, str) else k, partition=0)
        if p.flush(10):
            raise RuntimeError(f"record {i} was not delivered to {topic}")
        count += 1
    return count


def poll_one(consumer: ShareConsumer, timeout: float = 10.0) -> Message | None:
    """The next record, or None after ``timeout`` seconds; an error record raises."""
    from confluent_kafka import KafkaException
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for message in consumer.poll(0.2):
            if message.error() is not None:
                raise KafkaException(message.error())
            return message
    return None


def members(group: str, *, bootstrap: str | None = None) -> int:
    """How many members the share group has right now (ShareGroupDescribe at its coordinator)."""
    from .tools import share_groups
    found = share_groups.find(admin(bootstrap), group)
    return 0 if found is None else len(found[1].members)


class ShareWorkers:
    """Share consumers polling in threads, one record at a time, with implicit acknowledgement
    (each poll accepts what the previous one returned). ``got[name]`` lists what each took:
    ``(offset, delivery count, value)``. Use as a context manager; leaving closes them all."""

    def __init__(self, topic: str, group: str, names: Iterable[str], *, delay: float = 0.0,
                 bootstrap: str | None = None):
        self.topic, self.group, self.delay = topic, group, delay
        self.bootstrap = bootstrap or current_bootstrap()
        self.got: dict[str, list[tuple[int | None, int | None, str]]] = {name: [] for name in names}
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(name,), daemon=True) for name in self.got]

    def __enter__(self) -> ShareWorkers:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(15)

    def _run(self, name: str) -> None:
        try:
            consumer = share_consumer(self.group, self.topic, bootstrap=self.bootstrap, client_id=name,
                                      max_poll_records=1)
        except Exception as e:  # noqa: BLE001 - shown by the notebook
            self.errors.append(f"{name}: {e}")
            return
        try:
            while not self._stop.is_set():
                for message in consumer.poll(0.2):
                    if message.error() is not None:
                        self.errors.append(f"{name}: {message.error()}")
                        continue
                    value = message.value()
                    assert value is not None  # the demo's records all have a value
                    self.got[name].append((message.offset(), message.delivery_count(), value.decode()))
                    time.sleep(self.delay)  # the work on the record
            consumer.commit_sync(10)  # accept what the last poll returned (close alone would release it)
        except Exception as e:  # noqa: BLE001 - a fatal error (e.g. share groups switched off) is shown
            self.errors.append(f"{name}: {e}")
        finally:
            consumer.close()

    def total(self) -> int:
        return sum(len(got) for got in self.got.values())

    def wait_for_members(self, timeout: float = 20) -> bool:
        """Wait until every worker has joined the group (so none gets a head start)."""
        return _wait(lambda: members(self.group, bootstrap=self.bootstrap) >= len(self.got) or bool(self.errors),
                     timeout)

    def wait_for(self, records: int, timeout: float = 30) -> bool:
        """Wait until the workers took ``records`` records in all; False on timeout."""
        return _wait(lambda: self.total() >= records or bool(self.errors), timeout)


def _wait(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False
