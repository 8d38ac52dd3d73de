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
import ssl
import struct
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from .faults import DropConnection
from .protocol.codec import MalformedRequest

log = logging.getLogger("minikafka.server")

MAX_REQUEST_BYTES = 100 * 1024 * 1024  # socket.request.max.bytes
_ids = itertools.count(1)

FrameHandler = Callable[..., Awaitable["bytes | None"]]  # (frame, client host, connection id[, session])


class ConnectionSession(Protocol):
    """What the server reads of a connection's session (``minikafka.security.sasl.Session``)."""

    close_after_response: bool
    reason: str
    close_delay_ms: int


SessionFactory = Callable[[str, Any], ConnectionSession]  # (client host, peer certificate or None)


UNLIMITED = 2**31 - 1


class Listener:
    """Accepts connections for one broker and serves them until stopped.

    Kafka's connection limits apply: a connection that sends nothing for
    ``connections.max.idle.ms`` is closed; past ``max.connections`` (all clients) or
    ``max.connections.per.ip`` (one address) a new connection is closed at once (Kafka's
    acceptor waits for a free slot instead; the client sees a refused connection either way
    and retries).

    A secured listener (``minikafka.security``) has a TLS context, which wraps every
    connection before its first frame, and a session factory: each connection gets a
    session (who the client is, how far its SASL login went) that goes with every frame
    to the dispatcher, and that may ask for the connection to close after an answer.
    """

    def __init__(self, handle_frame: FrameHandler, host: str = "127.0.0.1", port: int = 0, *,
                 idle_ms: int = 600_000, max_connections: int = UNLIMITED, max_per_ip: int = UNLIMITED,
                 ssl_context: ssl.SSLContext | None = None, new_session: SessionFactory | None = None):
        self.handle_frame, self.host, self.port = handle_frame, host, port
        self.ssl_context, self.new_session = ssl_context, new_session
        self.idle_ms, self.max_connections, self.max_per_ip = idle_ms, max_connections, max_per_ip
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task] = set()
        self._writers: dict[asyncio.StreamWriter, str] = {}  # open connections and their client address
        self._last_active: dict[asyncio.StreamWriter, float] = {}
        self._sweeper: asyncio.Task | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port, reuse_address=True,
                                                  limit=1 << 20, ssl=self.ssl_context,
                                                  ssl_handshake_timeout=10 if self.ssl_context else None)
        self.port = self._server.sockets[0].getsockname()[1]
        if self.idle_ms >= 0:
            self._sweeper = asyncio.get_running_loop().create_task(self._close_idle())

    async def _close_idle(self) -> None:
        """Close connections silent for longer than connections.max.idle.ms."""
        loop = asyncio.get_running_loop()
        every = min(max(self.idle_ms / 4000, 0.05), 30.0)
        while True:
            await asyncio.sleep(every)
            deadline = loop.time() - self.idle_ms / 1000
            for writer, last in list(self._last_active.items()):
                if last < deadline:
                    log.info("closing connection from %s: idle for more than connections.max.idle.ms=%d",
                             self._writers.get(writer, "?"), self.idle_ms)
                    self._last_active.pop(writer, None)
                    writer.transport.abort()

    def connection_count(self, host: str | None = None) -> int:
        return len(self._writers) if host is None else sum(1 for h in self._writers.values() if h == host)

    async def stop(self, abrupt: bool = False) -> None:
        """Stop accepting and close every connection (``abrupt``: reset, no goodbye)."""
        if self._server:
            self._server.close()
        if self._sweeper:
            self._sweeper.cancel()
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
        peer = writer.get_extra_info("peername") or ("?", 0)
        if self.connection_count() >= self.max_connections or self.connection_count(peer[0]) >= self.max_per_ip:
            which = "max.connections" if self.connection_count() >= self.max_connections else "max.connections.per.ip"
            log.warning("refusing a connection from %s: %s reached", peer[0], which)
            writer.transport.abort()
            return
        task = asyncio.current_task()
        assert task is not None  # a connection is served by the task asyncio.start_server made for it
        self._connections.add(task)
        self._writers[writer] = peer[0]
        self._last_active[writer] = asyncio.get_running_loop().time()
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn_id = next(_ids)
        session = self.new_session(peer[0], writer.get_extra_info("peercert")) if self.new_session else None
        try:
            await self._loop(reader, writer, peer[0], conn_id, session)
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
            self._writers.pop(writer, None)
            self._last_active.pop(writer, None)
            writer.close()

    async def _loop(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, conn_id: int,
                    session: ConnectionSession | None = None) -> None:
        loop, active = asyncio.get_running_loop(), self._last_active
        extra = () if session is None else (session,)
        while True:
            (size,) = struct.unpack(">i", await reader.readexactly(4))
            if size < 8 or size > MAX_REQUEST_BYTES:
                raise MalformedRequest(f"frame size {size} is outside 8..{MAX_REQUEST_BYTES}")
            frame = await reader.readexactly(size)  # a frame that never ends counts as idle
            active.pop(writer, None)  # busy (a Fetch may wait long), not idle, until the answer is out
            response = await self.handle_frame(frame, host, conn_id, *extra)
            active[writer] = loop.time()
            if response is not None:
                writer.write(response)
                if writer.transport.get_write_buffer_size() > 1 << 22:
                    await writer.drain()
            if session is not None and session.close_after_response:
                await writer.drain()  # the answer (a failed login, say) goes out first, then the connection closes
                await asyncio.sleep(session.close_delay_ms / 1000)  # Kafka's pause, so clients read the answer
                log.info("closing connection %d from %s: %s", conn_id, host, session.reason)
                return
