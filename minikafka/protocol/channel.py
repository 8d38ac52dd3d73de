"""Outbound connections from one node to another: a request out, its answer back, one at a time.

The controllers' Raft requests (``kraft``: each (peer, kind) pair has its own connection, so
that a Fetch waiting on a slow leader never holds up a Vote), a follower's Fetch to its
leader (``replica.sources``) and a broker's requests to the controllers (``brokerproc``) all
use it. A request that gets no answer within the channel's timeout closes its connection;
the next one reconnects. It lives beside the codec, which is all it needs, so that the
packages using it do not import each other for it.
"""

from __future__ import annotations

import asyncio
import io
import struct
from typing import Any

from kio.serial import entity_reader, entity_writer

from . import codec

CLIENT_ID = "raft-client"


def encode_request(request: Any, correlation_id: int, client_id: str = CLIENT_ID) -> bytes:
    """Size prefix, request header (v2 for flexible versions) and body."""
    cls = type(request)
    buf = io.BytesIO()
    buf.write(struct.pack(">hhi", cls.__api_key__, cls.__version__, correlation_id))
    name = client_id.encode()
    buf.write(struct.pack(">h", len(name)) + name)
    if cls.__flexible__:
        buf.write(b"\0")
    entity_writer(cls)(buf, request)
    body = buf.getvalue()
    return struct.pack(">i", len(body)) + body


def decode_response(frame: bytes, api_key: int, version: int) -> tuple[int, Any]:
    (correlation_id,) = struct.unpack_from(">i", frame, 0)
    cls: Any = codec.response_class(api_key, version)
    pos = 5 if cls.__flexible__ and api_key != codec.API_VERSIONS_KEY else 4
    body: Any
    body, _ = entity_reader(cls)(frame, pos)
    return correlation_id, body


class PeerChannel:
    """One connection to ``host:port``, used for one request at a time."""

    def __init__(self, host: str, port: int, timeout_ms: int):
        self.host, self.port, self.timeout = host, port, timeout_ms / 1000
        self._lock = asyncio.Lock()
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._correlation = 0

    async def call(self, request: Any) -> Any:
        """Send ``request``, return the decoded answer; raise OSError/TimeoutError on failure."""
        async with self._lock:
            try:
                return await asyncio.wait_for(self._call(request), self.timeout)
            except BaseException:
                self.close()
                raise

    async def call_frame(self, frame: bytes, timeout_ms: int | None = None) -> bytes:
        """Send an encoded request ``frame`` (without its size prefix) under this channel's next correlation
        id; return the answer frame (without its size prefix). A broker forwards a client's request so."""
        async with self._lock:
            try:
                wait = self.timeout if timeout_ms is None else timeout_ms / 1000
                return await asyncio.wait_for(self._exchange(frame[:4], frame[8:]), wait)
            except BaseException:
                self.close()
                raise

    async def _call(self, request: Any) -> Any:
        encoded = encode_request(request, 0)[4:]  # the frame; the correlation id is set by _exchange
        frame = await self._exchange(encoded[:4], encoded[8:])
        _, body = decode_response(frame, type(request).__api_key__, type(request).__version__)
        return body

    async def _exchange(self, api_and_version: bytes, rest: bytes) -> bytes:
        """One request out (API key and version, this channel's correlation id, the rest), its answer back."""
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        assert self._reader is not None
        self._correlation += 1
        out = api_and_version + struct.pack(">i", self._correlation) + rest
        self._writer.write(struct.pack(">i", len(out)) + out)
        await self._writer.drain()
        (size,) = struct.unpack(">i", await self._reader.readexactly(4))
        answer = await self._reader.readexactly(size)
        (correlation,) = struct.unpack_from(">i", answer)
        if correlation != self._correlation:
            raise ConnectionError(f"answer to request {correlation} where {self._correlation} was expected")
        return answer

    def close(self) -> None:
        if self._writer is not None:
            self._writer.transport.abort()
        self._reader = self._writer = None
