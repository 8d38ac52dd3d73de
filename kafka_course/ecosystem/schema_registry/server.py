"""The schema registry as a process you can reach: an HTTP server on 127.0.0.1 and the ``_schemas`` topic.

``SchemaRegistryServer(bootstrap).start()`` reads ``_schemas`` from the beginning to
rebuild its state (so a restarted registry knows every schema it ever accepted), then
answers Confluent's REST API on a free port. Each write is produced to ``_schemas`` with
``acks=all`` and applied only once Kafka has acknowledged it. One instance is the only
writer; the real registry elects a leader among several instances, which this one does not.
"""

from __future__ import annotations

import json
import threading

from confluent_kafka import KafkaError, Message, Producer

from ...client_logs import quiet
from .._http import JsonServer, Raw
from .._kafka import ensure_topic, read_to_end
from . import errors
from .api import RawText, RegistryApi
from .store import Record, SchemaStore

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


class SchemasTopic:
    """The compacted topic that is the registry's only storage."""

    def __init__(self, bootstrap: str, topic: str = "_schemas"):
        self.bootstrap, self.topic = bootstrap, topic
        ensure_topic(bootstrap, topic, partitions=1, config={"cleanup.policy": "compact"})
        self.producer = Producer(quiet({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                                        "linger.ms": 0}))

    def replay(self, store: SchemaStore) -> int:
        count = 0
        for msg in read_to_end(self.bootstrap, self.topic, timeout=15):
            key, value = msg.key(), msg.value()
            assert key is not None  # every record of the schemas topic has a JSON key
            store.apply(json.loads(key), None if value is None else json.loads(value))
            count += 1
        return count

    def write(self, records: list[Record]) -> None:
        failures: list[KafkaError] = []

        def on_delivery(err: KafkaError | None, _msg: Message) -> None:
            if err:
                failures.append(err)

        for key, value in records:
            self.producer.produce(self.topic, None if value is None else json.dumps(value).encode(),
                                  json.dumps(key).encode(), on_delivery=on_delivery)
        if self.producer.flush(15) or failures:
            raise errors.RegistryError(500, 50001, f"Error while writing to the Kafka store: {failures or 'timeout'}")


class SchemaRegistryServer:
    def __init__(self, bootstrap: str, *, host: str = "127.0.0.1", port: int = 0,
                 default_compatibility: str = "BACKWARD", topic: str = "_schemas"):
        self.store = SchemaStore(default_compatibility)
        self.topic = SchemasTopic(bootstrap, topic)
        self._lock = threading.Lock()  # one request at a time, like the registry's single leader
        self.api = RegistryApi(self.store, self._write)
        self.http = JsonServer(self._answer, CONTENT_TYPE, host, port, name="schema-registry")
        self.records_replayed = 0

    @property
    def url(self) -> str:
        return self.http.url

    def start(self) -> SchemaRegistryServer:
        self.records_replayed = self.topic.replay(self.store)
        self.http.start()
        return self

    def stop(self) -> None:
        self.http.stop()
        self.topic.producer.flush(5)
        self.topic.producer.close()

    def _write(self, records: list[Record]) -> None:
        self.topic.write(records)
        for key, value in records:
            self.store.apply(key, value)

    def _answer(self, method: str, path: str, query: dict[str, list[str]], body: object) -> tuple[int, object]:
        with self._lock:
            status, answer = self.api.handle(method, path, {k: v[-1] for k, v in query.items()}, body)
        return status, Raw(answer) if isinstance(answer, RawText) else answer
