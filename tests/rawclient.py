"""A bare Kafka protocol client for tests that must send what real clients never do
(bad CRCs, unknown versions, garbage). It encodes requests with kio, like the broker."""

from __future__ import annotations

import io
import socket
import struct

from kio.serial import entity_reader, entity_writer

from minikafka.protocol import codec


class RawClient:
    def __init__(self, bootstrap: str, timeout: float = 10):
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send_frame(self, payload: bytes) -> None:
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)

    def recv_frame(self) -> bytes:
        size = struct.unpack(">i", self._exactly(4))[0]
        return self._exactly(size)

    def _exactly(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("broker closed the connection")
            out += chunk
        return out

    def encode(self, request, api_key: int, version: int, client_id: str = "raw") -> bytes:
        self.correlation_id += 1
        buf = io.BytesIO()
        buf.write(struct.pack(">hhi", api_key, version, self.correlation_id))
        cid = client_id.encode()
        buf.write(struct.pack(">h", len(cid)) + cid)
        if type(request).__flexible__:
            buf.write(b"\0")
        entity_writer(type(request))(buf, request)
        return buf.getvalue()

    def request(self, request, flexible_response: bool | None = None):
        """Send a kio request entity and decode the response of the same version."""
        api_key, version = type(request).__api_key__, type(request).__version__
        self.send_frame(self.encode(request, api_key, version))
        frame = self.recv_frame()
        (corr,) = struct.unpack_from(">i", frame, 0)
        assert corr == self.correlation_id
        resp_cls = codec.response_class(api_key, version)
        pos = 4
        if flexible_response if flexible_response is not None else (resp_cls.__flexible__ and api_key != 18):
            pos += 1  # empty tagged fields of header v1
        body, _ = entity_reader(resp_cls)(frame, pos)
        return body
