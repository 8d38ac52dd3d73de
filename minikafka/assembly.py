"""The brokers of one cluster assembled in this process: no thread, no listener, no socket.

An ``Assembly`` is one run of a cluster's brokers: the cluster metadata, the controller, the
live brokers (each with its replicas and coordinators), the ``Peers`` seam between them and
each broker's ``RequestDispatcher`` (frames in, frames out, as a listener would feed them).
Everything is built and used on the running event loop, the loop that owns all broker state,
so a test drives it from a coroutine (``asyncio.run``, or one ``asyncio.Runner`` for many
steps). ``Cluster`` builds its brokers through it and adds what a Kafka client needs: the
thread that runs the loop, the listeners and the teaching views.

Brokers join in two steps because a listener needs its broker's dispatcher before the broker
can say where it listens: ``build`` makes a broker and its dispatcher, ``join`` makes it live
(its address in the metadata, in ``Peers``, recovered, announced to the controller). A test
that needs no listener calls ``add_broker``, which does both with an address nobody listens on.

``DirectBroker`` is the one-broker case for handler tests::

    async def check():
        async with DirectBroker() as broker:
            broker.create_topic("orders", partitions=2)
            answer = await broker.call(ApiVersionsRequest(...))

``call`` runs one request through the handler the registry declares for its API, as dispatch
does, without the ACL gates and injected faults of the dispatcher; a test of the whole request
path (framing, version checks, gates, faults) feeds raw frames to ``dispatchers[node_id]``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Self

from .broker import Broker
from .clock import SYSTEM, Clock
from .config import BrokerConfig
from .controller import Controller
from .faults import Faults
from .handlers.dispatch import RequestDispatcher, lift
from .handlers.ports import Caller, Response
from .metadata import ClusterMetadata
from .protocol.apis import BY_KEY
from .replica.peers import Peers
from .replica.sources import TRANSPORTS, NetworkSource
from .security.authorizer import Authorizer
from .transactions.channel import InProcessTxnPeers

__all__ = ["Assembly", "DirectBroker", "run"]

Address = tuple[str, int]


def unheard_address(node_id: int) -> Address:
    """Where Metadata and FindCoordinator say a broker without a listener is (nobody listens)."""
    return "127.0.0.1", 9091 + node_id


class Assembly:
    """The brokers of one cluster on the running event loop, wired as ``Cluster`` wires them.

    ``config``: Kafka's broker settings (security settings excepted: see ``security.settings``);
    ``metadata_path``: where the cluster metadata is kept (None: in memory); ``authorizer``: makes
    the authorizer every dispatcher asks (None: everyone may do everything); ``faults``: each
    broker's injected faults from an earlier run, kept (librdkafka's mock cluster keeps them
    too); ``replication``: how followers fetch, by method calls (``in-process``) or by Fetch
    requests to the leaders' addresses (``network``, only where listeners are open); ``clock``:
    the controller's and coordinators' time (``minikafka.clock``; a ``ManualClock`` in a test).
    """

    def __init__(self, config: BrokerConfig | Mapping[str, Any] | None = None, *, metadata_path: Path | None = None,
                 authorizer: Callable[[ClusterMetadata], Authorizer] | None = None,
                 faults: Mapping[int, Faults] | None = None, replication: str = "in-process",
                 clock: Clock = SYSTEM) -> None:
        if replication not in TRANSPORTS:
            raise ValueError(f"replication is one of {', '.join(TRANSPORTS)}, not {replication!r}")
        self.config = config if isinstance(config, BrokerConfig) else BrokerConfig(dict(config or {}))
        self.replication, self.clock = replication, clock
        self.metadata = ClusterMetadata(self.config, metadata_path)
        self.metadata.broker_configs.keep_cluster_min_isr(self.metadata.static_config)
        self.authorizer = authorizer(self.metadata) if authorizer is not None else None
        self.brokers: dict[int, Broker] = {}  # the live brokers
        self.peers = Peers(self.brokers)  # the one seam between brokers, over the live ones
        self.controller = Controller(self.metadata, self.peers, clock)
        self.dispatchers: dict[int, RequestDispatcher] = {}  # kept when a broker stops: its faults and counts
        self._earlier_faults = dict(faults or {})

    @property
    def faults(self) -> dict[int, Faults]:
        """Each broker's injected faults (``Faults``), for the next run of the same cluster."""
        return {**self._earlier_faults, **{node_id: d.faults for node_id, d in self.dispatchers.items()}}

    # -- brokers joining and leaving ----------------------------------------------------
    def build(self, node_id: int, log_dirs: Sequence[Path] | None = None) -> tuple[Broker, RequestDispatcher]:
        """A broker and its dispatcher, not live yet (``join``); ``log_dirs`` None keeps its logs in memory."""
        config = self.metadata.broker_config(node_id)
        source = NetworkSource(self.metadata, config) if self.replication == "network" else None
        broker = Broker(node_id, config, self.controller, self.peers, list(log_dirs) if log_dirs else None,
                        fetch_source=source, txn_peers=InProcessTxnPeers(self.brokers), clock=self.clock)
        dispatcher = RequestDispatcher(broker, self.authorizer)
        kept = self.dispatchers.get(node_id)
        faults = kept.faults if kept is not None else self._earlier_faults.get(node_id)
        if faults is not None:
            dispatcher.faults = faults  # injected faults outlive a restart, as in librdkafka's mock
        return broker, dispatcher

    def join(self, broker: Broker, dispatcher: RequestDispatcher, address: Address, rack: str | None = None, *,
             background: bool = True) -> None:
        """Make a built broker live at ``address``: it recovers its logs, and the controller gives
        it the partitions it may lead. ``background``: start its fetcher, ISR watch, log cleaner and
        coordinators' timers (a test that drives one broker's handlers wants none of them)."""
        node_id = broker.node_id
        self.dispatchers[node_id] = dispatcher
        self.metadata.brokers[node_id] = address  # what Metadata and FindCoordinator answer
        self.metadata.racks[node_id] = rack
        self.brokers[node_id] = broker
        self.controller.elect_controller()
        broker.load()
        if background:
            broker.start_background()
        self.controller.broker_joined(node_id)

    def add_broker(self, node_id: int, address: Address | None = None, *, rack: str | None = None,
                   log_dirs: Sequence[Path] | None = None, background: bool = False) -> Broker:
        """A broker built and joined at once, at ``address`` (by default one nobody listens on)."""
        broker, dispatcher = self.build(node_id, log_dirs)
        self.join(broker, dispatcher, address or unheard_address(node_id), rack, background=background)
        return broker

    async def stop_broker(self, node_id: int, abrupt: bool = False,
                          disconnect: Callable[[], Awaitable[None]] | None = None) -> None:
        """Stop one broker: a clean stop moves its leadership away first and flushes its logs; an
        abrupt one (a crash) flushes nothing and the controller notices after. ``disconnect`` closes
        what reaches the broker from outside (``Cluster``'s listeners) before the broker closes."""
        if node_id not in self.brokers:
            raise ValueError(f"broker {node_id} is not running")
        if not abrupt:
            self.controller.broker_leaving(node_id)  # controlled shutdown: leadership moves first
        if disconnect is not None:
            await disconnect()
        broker = self.brokers.pop(node_id)
        self.metadata.brokers.pop(node_id, None)
        await broker.close(flush=not abrupt)
        if abrupt:
            self.controller.broker_leaving(node_id)  # the controller notices the broker is gone
        self.controller.elect_controller()

    async def close(self, flush: bool = True, disconnect: Callable[[int], Awaitable[None]] | None = None) -> None:
        """Close every broker, highest id first, then the metadata; ``disconnect(node_id)`` first closes
        what reaches that broker from outside."""
        for node_id in sorted(self.brokers, reverse=True):
            if disconnect is not None:
                await disconnect(node_id)
            await self.brokers.pop(node_id).close(flush=flush)
            self.metadata.brokers.pop(node_id, None)
        self.metadata.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    # -- asking the brokers ---------------------------------------------------------------
    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1,
                     configs: Mapping[str, Any] | None = None) -> None:
        """A topic, created by the controller's broker as CreateTopics would."""
        self.brokers[self.metadata.controller_id].create_topic(name, partitions, replication_factor,
                                                               dict(configs or {}))

    async def call(self, request: Any, client_id: str = "direct", node_id: int | None = None) -> Response:
        """A broker's handler's answer to ``request`` (a kio request entity), in the request's version;
        the controller's broker unless ``node_id`` says which."""
        api_key, version = request.__api_key__, request.__version__
        api = BY_KEY.get(api_key)
        if api is None or not api.supports(version):
            raise ValueError(f"{type(request).__name__} v{version} is not an API version this broker handles")
        dispatcher = self.dispatchers[self.metadata.controller_id if node_id is None else node_id]
        return await dispatcher.answer(Caller(api_key, version, client_id), lift(api_key, request))


class DirectBroker(Assembly):
    """One in-memory broker, its handlers called directly: ``broker`` and its ``dispatcher``,
    without the background tasks (replica fetcher, timers, log cleaner)."""

    def __init__(self, config: Mapping[str, Any] | None = None, node_id: int = 1,
                 address: Address = ("127.0.0.1", 9092), clock: Clock = SYSTEM) -> None:
        super().__init__(config, clock=clock)
        self.broker = self.add_broker(node_id, address)
        self.dispatcher = self.dispatchers[node_id]  # frames in, frames out, as from a socket

    async def close(self, flush: bool = False, disconnect: Callable[[int], Awaitable[None]] | None = None) -> None:
        await super().close(flush, disconnect)


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
