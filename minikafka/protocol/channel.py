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

    async def _call(self, request: Any) -> Any:
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        assert self._reader is not None
        self._correlation += 1
        self._writer.write(encode_request(request, self._correlation))
        await self._writer.drain()
        (size,) = struct.unpack(">i", await self._reader.readexactly(4))
        frame = await self._reader.readexactly(size)
        correlation, body = decode_response(frame, type(request).__api_key__, type(request).__version__)
        if correlation != self._correlation:
            raise ConnectionError(f"answer to request {correlation} where {self._correlation} was expected")
        return body

    def close(self) -> None:
        if self._writer is not None:
            self._writer.transport.abort()
        self._reader = self._writer = None
