"""A network of links: one proxy per ordered pair of nodes, driven from any thread.

Given the nodes' real addresses, :class:`Network` starts a :class:`~.proxy.Link` for each
ordered pair (``a->b`` is the proxy ``a`` uses to reach ``b``) on its own event loop in a
background thread, and tells each node the proxied address to use for each peer
(:meth:`Network.peers`). Clients that only connect (a producer, the course helper) are
named in ``clients`` and get links to every node but none towards them.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from .proxy import Link
from .rules import Direction, Mode

T = TypeVar("T")


def _address(spec: str | int | tuple[str, int]) -> tuple[str, int]:
    if isinstance(spec, int):
        return "127.0.0.1", spec
    if isinstance(spec, tuple):
        return spec
    host, _, port = spec.rpartition(":")
    return host or "127.0.0.1", int(port)


class Network:
    """``Network({"b1": 9092, "c1": "127.0.0.1:9093"}, clients=["client"])``; use as a context manager.

    ``ports`` fixes the port of some links' proxies, for nodes that must know them before
    they start (an embedded Cluster's ``advertised.listeners``).
    """

    def __init__(
        self,
        nodes: Mapping[str, str | int | tuple[str, int]],
        clients: Iterable[str] = (),
        *,
        host: str = "127.0.0.1",
        seed: int | None = None,
        ports: Mapping[tuple[str, str], int] | None = None,
    ) -> None:
        self.nodes = {name: _address(spec) for name, spec in nodes.items()}
        self.clients = [c for c in clients if c not in self.nodes]
        self.host, self.seed = host, seed
        self.ports = dict(ports or {})  # (src, dst) -> the port its proxy listens on (default: any free one)
        self.links: dict[tuple[str, str], Link] = {}
        self.control_port: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._control: asyncio.Server | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> Network:
        from .rules import LinkRules

        ready = threading.Event()
        self._loop = asyncio.new_event_loop()

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            ready.set()
            self._loop.run_forever()  # type: ignore[union-attr]

        self._thread = threading.Thread(target=run, name="netfault", daemon=True)
        self._thread.start()
        ready.wait()
        for n, (src, dst) in enumerate((s, d) for s in [*self.nodes, *self.clients] for d in self.nodes if s != d):
            seed = None if self.seed is None else self.seed * 7919 + n
            port = self.ports.get((src, dst), 0)
            link = Link(f"{src}->{dst}", self.nodes[dst], host=self.host, port=port, rules=LinkRules(seed=seed))
            self.links[(src, dst)] = link
            self.run(link.start())
        return self

    def stop(self) -> None:
        if not self._loop or not self._thread:
            return
        if self._control:
            self._control.close()

        async def stop_all() -> None:
            await asyncio.gather(*(link.stop() for link in self.links.values()))
            # the connections' accept tasks end a moment after their connection's task was cancelled:
            # let them, so that closing the loop destroys no pending task (asyncio would say so on stderr)
            rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if rest:
                _, pending = await asyncio.wait(rest, timeout=1)
                for task in pending:
                    task.cancel()
                if pending:
                    await asyncio.wait(pending, timeout=1)

        self.run(stop_all())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()
        self._loop = self._thread = None

    def __enter__(self) -> Network:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def run(self, coro: Any) -> Any:
        """Run a coroutine on the network's loop and wait for it."""
        assert self._loop, "the network is not started"
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(30)

    def _on_loop(self, fn: Callable[[], T]) -> T:
        """Change rules on the loop's own thread (the proxies read them there)."""
        assert self._loop, "the network is not started"
        if threading.current_thread() is self._thread:
            return fn()

        async def call() -> T:
            return fn()

        return self.run(call())

    # -- addresses ---------------------------------------------------------------------
    def link(self, src: str, dst: str) -> Link:
        try:
            return self.links[(src, dst)]
        except KeyError:
            names = ", ".join(sorted({*self.nodes, *self.clients}))
            raise ValueError(f"there is no link {src}->{dst}; the nodes are {names}") from None

    def address(self, src: str, dst: str) -> str:
        """The ``host:port`` node ``src`` must use to reach ``dst``."""
        return self.link(src, dst).address

    def peers(self, src: str) -> dict[str, str]:
        """Every other node's proxied address as seen from ``src``."""
        return {dst: link.address for (s, dst), link in self.links.items() if s == src}

    def routes(self) -> dict[str, dict[str, str]]:
        return {src: self.peers(src) for src in [*self.nodes, *self.clients]}

    # -- faults ------------------------------------------------------------------------
    def _pairs(self, a: str, b: str, one_way: bool) -> list[Link]:
        pairs = [self.link(a, b)]
        if not one_way and (b, a) in self.links:
            pairs.append(self.links[(b, a)])
        return pairs

    def _set(self, links: list[Link], change: Callable[[Link], None]) -> None:
        def apply() -> None:
            for link in links:
                change(link)
                link.apply()

        self._on_loop(apply)

    def partition(self, a: str, b: str, *, one_way: bool = False) -> None:
        """Cut ``a`` from ``b``: connections stall, bytes are held, nothing is refused.

        Both ways unless ``one_way`` (then only the connections ``a`` opens to ``b``).
        """
        self._set(self._pairs(a, b, one_way), lambda link: link.rules.set_mode(Mode.PARTITION))

    def reset(self, a: str, b: str, *, one_way: bool = False) -> None:
        """Cut ``a`` from ``b`` by closing: open connections are reset, new ones closed at once."""
        self._set(self._pairs(a, b, one_way), lambda link: link.rules.set_mode(Mode.RESET))

    def isolate(self, node: str, *, mode: str = "partition") -> None:
        """Cut ``node`` from every other node and client (a broker alive but unreachable)."""
        links = [link for (s, d), link in self.links.items() if node in (s, d)]
        if not links:
            self.link(node, node)  # raises with the names
        self._set(links, lambda link: link.rules.set_mode(mode))

    def delay(
        self, a: str, b: str, ms: float, jitter_ms: float = 0.0, *, one_way: bool = False, direction: str | None = None
    ) -> None:
        """Hold every chunk on the link(s) between ``a`` and ``b`` for ``ms`` ± ``jitter_ms``.

        ``direction`` is ``"request"`` or ``"response"`` (from the connecting side) or both.
        """
        way = Direction(direction) if direction else None
        self._set(self._pairs(a, b, one_way), lambda link: link.rules.set_delay(ms, jitter_ms, way))

    def drop(self, a: str, b: str, fraction: float, *, one_way: bool = False) -> None:
        """Drop ``fraction`` of the new connections between ``a`` and ``b`` (closed at once)."""
        self._set(self._pairs(a, b, one_way), lambda link: link.rules.set_drop_rate(fraction))

    def heal(self, a: str | None = None, b: str | None = None) -> None:
        """Undo every fault, or only those between ``a`` and ``b`` (both ways)."""
        links = list(self.links.values()) if a is None or b is None else self._pairs(a, b, False)
        self._set(links, lambda link: link.rules.heal())

    def status(self) -> dict[str, dict]:
        """Each link's address, rules and connection counts."""

        def read() -> dict[str, dict]:
            return {
                link.name: {
                    "listen": link.address,
                    "target": f"{link.target[0]}:{link.target[1]}",
                    **link.rules.describe(),
                    "accepted": link.connections_accepted,
                    "closed_by_rule": link.connections_closed_by_rule,
                }
                for link in self.links.values()
            }

        return self._on_loop(read)

    # -- the control port --------------------------------------------------------------
    def serve_control(self, port: int = 0) -> int:
        """Listen for line commands on 127.0.0.1 (see :mod:`minikafka.netfault`); returns the port."""
        from .control import serve

        async def start() -> int:
            self._control = await serve(self, self.host, port)
            return self._control.sockets[0].getsockname()[1]

        self.control_port = self.run(start())
        return self.control_port
