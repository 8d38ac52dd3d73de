"""A small JSON-over-HTTP server on 127.0.0.1 for the ecosystem's REST APIs (registry, Connect).

It turns each request into ``answer(method, path, query, body) -> (status, body)`` and
writes the answer back: JSON, a raw string, or nothing (204). Threads serve requests, so a
slow call (a Kafka write) does not hold up the others.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

Answer = Callable[[str, str, dict[str, list[str]], Any], "tuple[int, Any]"]


class Raw(str):
    """An answer sent as it is, not encoded as JSON."""


class JsonServer:
    def __init__(self, answer: Answer, content_type: str = "application/json", host: str = "127.0.0.1",
                 port: int = 0, name: str = "http"):
        self.answer, self.content_type, self.name = answer, content_type, name
        self.httpd = ThreadingHTTPServer((host, port), _handler_for(self))
        self.httpd.daemon_threads = True

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address: (host, port), the host a str
        return f"http://{host}:{port}"

    def start(self) -> JsonServer:
        threading.Thread(target=self.httpd.serve_forever, name=self.name, daemon=True).start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def serve(self, method: str, target: str, data: bytes) -> tuple[int, bytes]:
        parts = urlsplit(target)
        try:
            body = json.loads(data) if data else None
        except ValueError as e:
            return 400, json.dumps({"error_code": 400, "message": f"Unexpected character: {e}"}).encode()
        try:
            status, out = self.answer(method, parts.path.rstrip("/"), parse_qs(parts.query), body)
        except Exception as e:  # noqa: BLE001 - a server error is an answer, not a dropped connection
            status, out = 500, {"error_code": 500, "message": f"{type(e).__name__}: {e}"}
        if out is None:
            return status, b""
        return status, (out if isinstance(out, Raw) else json.dumps(out)).encode()


def _handler_for(server: JsonServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            status, data = server.serve(self.command, self.path, self.rfile.read(length) if length else b"")
            self.send_response(status)
            if data:
                self.send_header("Content-Type", server.content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
            pass  # a notebook has no use for an access log

    return Handler
