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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from confluent_kafka import Producer

from ...client_logs import quiet
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
            value = msg.value()
            store.apply(json.loads(msg.key()), None if value is None else json.loads(value))
            count += 1
        return count

    def write(self, records: list[Record]) -> None:
        failures = []
        for key, value in records:
            self.producer.produce(self.topic, None if value is None else json.dumps(value).encode(),
                                  json.dumps(key).encode(),
                                  on_delivery=lambda err, msg: err and failures.append(err))
        if self.producer.flush(15) or failures:
            raise errors.RegistryError(500, 50001, f"Error while writing to the Kafka store: {failures or 'timeout'}")


class SchemaRegistryServer:
    def __init__(self, bootstrap: str, *, host: str = "127.0.0.1", port: int = 0,
                 default_compatibility: str = "BACKWARD", topic: str = "_schemas"):
        self.store = SchemaStore(default_compatibility)
        self.topic = SchemasTopic(bootstrap, topic)
        self._lock = threading.Lock()  # one write at a time, like the registry's leader
        self.api = RegistryApi(self.store, self._write)
        self.httpd = ThreadingHTTPServer((host, port), _handler_for(self))
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "SchemaRegistryServer":
        self.records_replayed = self.topic.replay(self.store)
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="schema-registry", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.topic.producer.flush(5)
        self.topic.producer.close()

    def _write(self, records: list[Record]) -> None:
        self.topic.write(records)
        for key, value in records:
            self.store.apply(key, value)

    def answer(self, method: str, target: str, body: bytes) -> tuple[int, str | bytes]:
        parts = urlsplit(target)
        try:
            payload = json.loads(body) if body else None
        except ValueError as e:
            return 400, json.dumps({"error_code": 400, "message": f"Unexpected character: {e}"})
        with self._lock:
            status, answer = self.api.handle(method, parts.path.rstrip("/"), dict(parse_qsl(parts.query)), payload)
        return status, answer if isinstance(answer, RawText) else json.dumps(answer)


def _handler_for(server: SchemaRegistryServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            status, text = server.answer(self.command, self.path, self.rfile.read(length) if length else b"")
            data = text.encode() if isinstance(text, str) else text
            self.send_response(status)
            self.send_header("Content-Type", CONTENT_TYPE)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = _serve

        def log_message(self, format, *args):  # noqa: A002 - the stdlib's name
            pass  # a notebook has no use for an access log

    return Handler
