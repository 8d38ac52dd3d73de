"""The network edge: TCP listeners that feed request frames to a broker's dispatcher.

This is the only module that touches sockets. Kafka answers the requests of one
connection in order, one at a time; so does this loop. A connection that sends a
malformed or oversized frame is closed with a log line; the broker and every other
connection carry on.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import socket
import struct
from typing import Awaitable, Callable

from .faults import DropConnection
from .protocol.codec import MalformedRequest

log = logging.getLogger("minikafka.server")

MAX_REQUEST_BYTES = 100 * 1024 * 1024  # socket.request.max.bytes
_ids = itertools.count(1)

FrameHandler = Callable[[bytes, str, int], Awaitable["bytes | None"]]  # (frame, client host, connection id)


class Listener:
    """Accepts connections for one broker and serves them until stopped."""

    def __init__(self, handle_frame: FrameHandler, host: str = "127.0.0.1", port: int = 0):
        self.handle_frame, self.host, self.port = handle_frame, host, port
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port, reuse_address=True,
                                                  limit=1 << 20)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self, abrupt: bool = False) -> None:
        """Stop accepting and close every connection (``abrupt``: reset, no goodbye)."""
        if self._server:
            self._server.close()
        for writer in list(self._writers):
            if abrupt:
                writer.transport.abort()
            else:
                writer.close()
        for task in list(self._connections):
            task.cancel()
        if self._server:
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._connections.add(task)
        self._writers.add(writer)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        peer = writer.get_extra_info("peername") or ("?", 0)
        conn_id = next(_ids)
        try:
            await self._loop(reader, writer, peer[0], conn_id)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away
        except DropConnection as e:
            log.info("closing connection %d: %s", conn_id, e)
        except MalformedRequest as e:
            log.warning("closing connection %d from %s:%s: %s", conn_id, peer[0], peer[1], e)
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("closing connection %d from %s:%s after an internal error", conn_id, peer[0], peer[1])
        finally:
            self._connections.discard(task)
            self._writers.discard(writer)
            writer.close()

    async def _loop(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, conn_id: int) -> None:
        while True:
            (size,) = struct.unpack(">i", await reader.readexactly(4))
            if size < 8 or size > MAX_REQUEST_BYTES:
                raise MalformedRequest(f"frame size {size} is outside 8..{MAX_REQUEST_BYTES}")
            frame = await reader.readexactly(size)
            response = await self.handle_frame(frame, host, conn_id)
            if response is not None:
                writer.write(response)
                if writer.transport.get_write_buffer_size() > 1 << 22:
                    await writer.drain()
