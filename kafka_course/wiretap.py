"""A TCP proxy that keeps every byte a client sends: what someone on the network sees.

Put one between clients and a broker (advertise the tap's address as the broker's, so that
every connection goes through it) and ``seen()`` returns what an eavesdropper on the path
would have read: on PLAINTEXT, topic names, records and a PLAIN password; on TLS, a
handshake and then noise. Notebook 08b and the TLS tests use it.
"""

from __future__ import annotations

import contextlib
import socket
import threading


class WireTap:
    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._connections: list[bytearray] = []  # what each client sent, in the order they connected
        self._lock = threading.Lock()
        self._open: set[socket.socket] = {self._server}

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def seen(self) -> bytes:
        """Every byte clients sent through the tap, connection after connection."""
        return b"".join(self.connections())

    def connections(self) -> list[bytes]:
        """What each client connection sent, one entry per connection, oldest first."""
        with self._lock:
            return [bytes(sent) for sent in self._connections]

    def forward_to(self, address: str) -> WireTap:
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
            with self._lock:
                self._connections.append(sent := bytearray())
                self._open |= {client, upstream}
            threading.Thread(target=self._relay, args=(client, upstream, sent), daemon=True).start()

    def _relay(self, client: socket.socket, upstream: socket.socket, sent: bytearray) -> None:
        """Both directions of one connection; closes both sockets when either side hangs up."""
        back = threading.Thread(target=self._pump, args=(upstream, client, None), daemon=True)
        back.start()
        self._pump(client, upstream, sent)
        back.join()
        with self._lock:
            self._open -= {client, upstream}
        client.close()
        upstream.close()

    def _pump(self, source: socket.socket, sink: socket.socket, record: bytearray | None) -> None:
        try:
            while data := source.recv(65536):
                if record is not None:
                    with self._lock:
                        record += data
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        with self._lock:
            still_open, self._open = self._open, set()
        for s in still_open:
            s.close()

    def __enter__(self) -> WireTap:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
