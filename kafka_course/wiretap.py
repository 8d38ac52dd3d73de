"""A TCP proxy that keeps every byte a client sends: what someone on the network sees.

Put one between clients and a broker (advertise the tap's address as the broker's, so that
every connection goes through it) and ``seen()`` returns what an eavesdropper on the path
would have read: on PLAINTEXT, topic names, records and a PLAIN password; on TLS, a
handshake and then noise. Notebook 08b and the TLS tests use it.
"""

from __future__ import annotations

import socket
import threading


class WireTap:
    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._seen = bytearray()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = [self._server]

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def seen(self) -> bytes:
        with self._lock:
            return bytes(self._seen)

    def forward_to(self, address: str) -> "WireTap":
        host, port = address.split(",")[0].rsplit(":", 1)
        threading.Thread(target=self._accept, args=((host, int(port)),), daemon=True).start()
        return self

    def _accept(self, target: tuple[str, int]) -> None:
        while True:
            try:
                client, _ = self._server.accept()
                upstream = socket.create_connection(target)
            except OSError:
                return  # closed
            self._sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, record: bool) -> None:
        try:
            while data := source.recv(65536):
                if record:
                    with self._lock:
                        self._seen += data
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        for s in self._sockets:
            s.close()

    def __enter__(self) -> "WireTap":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
