"""The Connect worker as a process you can reach: Connect's REST API on a free port of 127.0.0.1."""

from __future__ import annotations

from typing import Any

from .._http import JsonServer
from .._kafka import admin
from .rest import ConnectApi
from .worker import Worker


class ConnectServer:
    """``ConnectServer(bootstrap).start()``; ``.url`` is what ``CONNECT_URL`` would be; ``.stop()``."""

    def __init__(self, bootstrap: str, *, port: int = 0, config: dict[str, str] | None = None):
        self.http = JsonServer(self._answer, port=port, name="connect-rest")
        host, bound = self.http.httpd.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address: (host, port), the host a str
        self.worker = Worker(bootstrap, f"{host}:{bound}", config)
        cluster_id = admin(bootstrap).list_topics(timeout=10).cluster_id or "unknown"
        self.api = ConnectApi(self.worker, cluster_id)

    @property
    def url(self) -> str:
        return self.http.url

    def _answer(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
        return self.api.answer(method, path, query, body)

    def start(self) -> ConnectServer:
        self.worker.start()
        self.http.start()
        return self

    def stop(self) -> None:
        self.http.stop()
        self.worker.stop()
