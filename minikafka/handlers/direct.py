"""One broker in this process, its handlers called directly: no sockets, no threads, no Cluster.

``DirectBroker`` builds an in-memory broker (its metadata, controller and coordinators) as
``Cluster`` does for each of its brokers, without listeners and without the background
tasks (replica fetcher, timers, log cleaner). ``call`` runs one request through the
handler the registry declares for its API, as dispatch does: the request (a kio entity of
any supported version) is lifted to the class its handler reads, the handler answers in
the request's version. The ACL gates and injected faults of ``RequestDispatcher`` are not
applied; a unit test of one handler wants none of them. A test of the whole request path
(framing, version checks, gates, faults) feeds raw request frames to ``dispatcher``, the
``RequestDispatcher`` a listener would feed.

Build it and call it from a coroutine (``asyncio.run``, or one ``asyncio.Runner`` for many
calls), as everything in a broker runs on its event loop::

    async def check():
        async with DirectBroker() as broker:
            broker.create_topic("orders", partitions=2)
            answer = await broker.call(ApiVersionsRequest(...))
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..broker import Broker
from ..clock import SYSTEM, Clock
from ..config import BrokerConfig
from ..controller import Controller
from ..metadata import ClusterMetadata
from ..protocol.apis import BY_KEY
from ..replica.peers import Peers
from .ports import Caller, Response
from .dispatch import RequestDispatcher, lift


class DirectBroker:
    def __init__(self, config: Mapping[str, Any] | None = None, node_id: int = 1,
                 address: tuple[str, int] = ("127.0.0.1", 9092), clock: Clock = SYSTEM) -> None:
        self.metadata = ClusterMetadata(BrokerConfig(dict(config or {})))
        brokers: dict[int, Broker] = {}
        self.controller = Controller(self.metadata, Peers(brokers), clock)
        self.broker = Broker(node_id, self.metadata.broker_config(node_id), self.controller,
                             self.controller.peers, None, clock=clock)
        brokers[node_id] = self.broker
        self.metadata.brokers[node_id] = address  # what Metadata and FindCoordinator answer
        self.metadata.racks[node_id] = None
        self.controller.elect_controller()
        self.broker.load()
        self.controller.broker_joined(node_id)
        self._correlation_id = 0
        self.dispatcher = RequestDispatcher(self.broker)  # frames in, frames out, as from a socket

    async def __aenter__(self) -> DirectBroker:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    def create_topic(self, name: str, partitions: int = 1, configs: Mapping[str, str] | None = None) -> None:
        """Create a topic of ``partitions`` partitions led by this broker, as the controller would."""
        self.broker.create_topic(name, partitions, 1, dict(configs or {}))

    async def call(self, request: Any, client_id: str = "direct") -> Response:
        """The handler's answer to ``request`` (a kio request entity), in the request's version."""
        api_key, version = request.__api_key__, request.__version__
        api = BY_KEY.get(api_key)
        if api is None or not api.supports(version):
            raise ValueError(f"{type(request).__name__} v{version} is not an API version this broker handles")
        self._correlation_id += 1
        caller = Caller(api_key, version, client_id)
        return await self.dispatcher.answer(caller, lift(api_key, request))

    async def close(self) -> None:
        await self.broker.close(flush=False)
        self.metadata.close()


def run(check: Callable[[DirectBroker], Awaitable[Any]], config: Mapping[str, Any] | None = None,
        topics: Mapping[str, int] | None = None, clock: Clock = SYSTEM) -> Any:
    """``check``'s result, run against a fresh DirectBroker on an event loop of its own, with
    ``topics`` (name -> partitions) created first; the broker is closed after. ``clock`` is the
    broker's (``minikafka.clock``): a ``ManualClock`` makes its timeouts move only when told."""
    async def main() -> Any:
        async with DirectBroker(config, clock=clock) as broker:
            for name, partitions in (topics or {}).items():
                broker.create_topic(name, partitions=partitions)
            return await check(broker)
    return asyncio.run(main())
