"""One network link as a TCP proxy: listen on 127.0.0.1:A, forward to the node at B.

Every byte a node sends another goes through the link the node was given for that peer,
so cutting, delaying or dropping there is what a partition, a slow route or a lossy
network does to Kafka's connections (client to broker, follower fetcher to leader,
broker heartbeat to controller). The rules are :class:`~minikafka.netfault.rules.LinkRules`;
this module only moves bytes as they say.
"""

from __future__ import annotations

import asyncio
import contextlib

from .rules import Direction, LinkRules, Mode, Verdict

CHUNK = 65536
QUEUED_CHUNKS = 64  # per direction; beyond it the proxy stops reading (TCP back-pressure)


class Link:
    """A proxy on one ordered link ``name`` (e.g. ``"b1->c2"``) to ``target`` (host, port).

    Runs on an asyncio loop: ``await link.start()``, change ``link.rules`` then call
    :meth:`apply`, ``await link.stop()``. :class:`~minikafka.netfault.network.Network`
    does all of this from any thread.
    """

    def __init__(
        self,
        name: str,
        target: tuple[str, int],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        rules: LinkRules | None = None,
    ) -> None:
        self.name, self.target, self.host, self.port = name, target, host, port
        self.rules = rules or LinkRules()
        self.connections_accepted = 0
        self.connections_closed_by_rule = 0
        self._server: asyncio.Server | None = None
        self._flowing = asyncio.Event()
        self._open: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task] = set()
        self._stopping = False

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    async def start(self) -> Link:
        self._server = await asyncio.start_server(self._accept, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        self.apply()
        return self

    async def stop(self) -> None:
        self._stopping = True  # a connection the kernel accepted before the server closed is closed at once
        if self._server:
            self._server.close()
        self._close_all()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def apply(self) -> None:
        """Act on changed rules: wake held traffic on a healed link, close everything on a reset."""
        if self.rules.flowing:
            self._flowing.set()
        else:
            self._flowing.clear()
        if self.rules.mode is Mode.RESET:
            self._close_all()

    def _close_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()  # its connection's finally aborts both sockets
        for writer in list(self._open):
            writer.transport.abort()  # an RST, as a reset route or a killed peer sends
        self._open.clear()

    # -- one connection --------------------------------------------------------------------
    async def _accept(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        if self._stopping:
            client_w.transport.abort()
            return
        self.connections_accepted += 1
        # The connection runs in its own task, so that a reset cancels it and not the task
        # asyncio's server made for this callback (which would report the cancellation).
        task = asyncio.ensure_future(self._serve(client_r, client_w))
        self._tasks.add(task)
        try:
            await asyncio.wait([task])
        finally:
            self._tasks.discard(task)
            if task.done() and not task.cancelled() and task.exception():
                raise task.exception()  # type: ignore[misc]

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        if self.rules.on_connect() is Verdict.CLOSE:
            self.connections_closed_by_rule += 1
            client_w.transport.abort()
            return
        self._open.add(client_w)
        try:
            await self._flowing.wait()  # a held connection (partition) waits here, unanswered
            if client_w not in self._open:
                return  # reset while held
            try:
                up_r, up_w = await asyncio.open_connection(*self.target)
            except OSError:
                return  # the node is down: the peer sees its connection closed
            self._open.add(up_w)
            try:
                await asyncio.gather(
                    self._pump(client_r, up_w, Direction.REQUEST), self._pump(up_r, client_w, Direction.RESPONSE)
                )
            except (OSError, asyncio.IncompleteReadError):
                pass
            finally:
                self._open.discard(up_w)
                up_w.transport.abort()
        finally:
            self._open.discard(client_w)
            client_w.transport.abort()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, direction: Direction) -> None:
        """Copy one direction, each chunk held for the link's delay, order kept (TCP is a stream)."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes | None]] = asyncio.Queue(QUEUED_CHUNKS)

        async def read_side() -> None:
            last_due = 0.0
            while True:
                await self._flowing.wait()
                try:
                    data = await reader.read(CHUNK)
                except OSError:
                    await queue.put((0.0, None))  # the peer reset its connection: reset the other one too
                    return
                last_due = max(last_due, loop.time() + self.rules.delay_for(direction))
                await queue.put((last_due, data))
                if not data:
                    return

        async def write_side() -> None:
            while True:
                due, data = await queue.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                await self._flowing.wait()
                if data is None:
                    raise ConnectionResetError(f"{self.name}: the {direction.value} side was reset")
                if not data:
                    if writer.can_write_eof() and not writer.is_closing():
                        with contextlib.suppress(OSError):
                            writer.write_eof()  # half-close: the other direction may still talk
                    return
                writer.write(data)
                await writer.drain()

        reading = asyncio.ensure_future(read_side())
        try:
            await write_side()
        finally:
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await reading
