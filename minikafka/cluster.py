"""``Cluster``: minikafka brokers running inside your Python process.

The brokers' event loop runs in a background thread, so a notebook kernel (or a
test) stays free to run Kafka clients against ``cluster.bootstrap_servers``. Every
method here is safe to call from any thread: work is handed to the loop and waited
for. ``minikafka serve`` uses the same object in the foreground.

Security is off unless Kafka's settings turn it on (``minikafka.security.settings``):
``listeners`` gives each broker one listener per entry (a port of 0 is any free port;
another port is the first broker's, the next brokers take the ports after it), SASL
and TLS listeners authenticate their clients, and ``authorizer.class.name`` makes
every request pass the ACLs. A wrong setting stops the constructor with a sentence.

Followers copy their leaders' logs by method calls on the other brokers (the default, and
the notebooks': no encoding, no socket). ``replication="network"`` makes them send Fetch
requests over TCP to the leaders' listeners instead, as brokers in separate processes do
(``minikafka.replica.sources``).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import signal
import tempfile
import threading
from collections.abc import Coroutine
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .broker import Broker
from .config import BrokerConfig
from .controller import Controller
from .faults import Faults
from .handlers.dispatch import RequestDispatcher
from .metadata import ClusterMetadata
from .replica.peers import Peers
from .replica.sources import TRANSPORTS, NetworkSource
from .security import settings as security_settings
from .security.authorizer import StandardAuthorizer
from .security.connections import SessionFactory
from .security.scram import MECHANISMS as SCRAM_MECHANISMS
from .server import Listener
from .transactions.channel import InProcessTxnPeers

T = TypeVar("T")
log = logging.getLogger("minikafka")


def _racks(racks: Sequence[str | None] | None, setting: str, node_ids: tuple[int, ...]) -> dict[int, str | None]:
    """Each broker's rack (KIP-392): ``racks`` in broker order, else ``broker.rack`` (one rack for
    every broker, or a comma-separated list with one per broker)."""
    if racks is None:
        names = [r.strip() for r in setting.split(",")] if setting else []
        racks = names if len(names) > 1 else [names[0] if names else None] * len(node_ids)
    if len(racks) != len(node_ids):
        raise ValueError(f"{len(node_ids)} broker(s) need {len(node_ids)} rack(s), not {len(racks)}: {list(racks)}")
    return {node_id: rack or None for node_id, rack in zip(node_ids, racks)}


class Cluster:
    def __init__(self, brokers: int = 1, data_dir: str | Path | None = None, port: int = 0,
                 config: Mapping[str, Any] | None = None, *, host: str = "127.0.0.1", in_memory: bool = False,
                 first_node_id: int = 1, racks: Sequence[str | None] | None = None,
                 replication: str = "in-process"):
        if isinstance(brokers, bool) or not isinstance(brokers, int) or brokers < 1:
            raise ValueError(f"a cluster needs at least one broker, not {brokers!r}")
        if isinstance(first_node_id, bool) or not isinstance(first_node_id, int) or first_node_id < 0:
            raise ValueError(f"broker ids start at 0 or more, not {first_node_id!r}")
        if replication not in TRANSPORTS:
            raise ValueError(f"replication is one of {', '.join(TRANSPORTS)}, not {replication!r}")
        self.replication = replication  # how followers fetch: method calls, or Fetch requests over TCP
        self.broker_count = brokers
        self.node_ids = tuple(range(first_node_id, first_node_id + brokers))
        self.host, self.first_port = host, port
        self.security, rest = security_settings.split(config or {})
        if self.security.listeners and port:
            raise ValueError("give the ports in the listeners setting, or port=, not both")
        self.config = BrokerConfig(rest)
        first = self.security.listeners[0] if self.security.listeners else None
        if replication == "network" and first is not None and first.protocol != "PLAINTEXT":
            raise ValueError(f"replication='network' fetches over the first listener, which must be PLAINTEXT, "
                             f"not {first.protocol} ({first.name})")
        self.racks = _racks(racks, self.config["broker.rack"], self.node_ids)
        self.in_memory = in_memory
        log_dirs = [Path(d) for d in self.config["log.dirs"].split(",") if d]  # Kafka's log.dirs
        self._own_dir = data_dir is None and not in_memory and not log_dirs
        if in_memory:
            self.data_dir = None
        else:  # the cluster metadata lives here; with log.dirs, in the first one (Kafka's metadata.log.dir)
            self.data_dir = Path(data_dir or (log_dirs[0] if log_dirs else tempfile.mkdtemp(prefix="minikafka-")))
        self.log_dir_roots = log_dirs or ([self.data_dir] if self.data_dir else [])
        self.brokers: dict[int, Broker] = {}
        self.peers = Peers(self.brokers)  # the one seam between brokers, over the live ones
        self.dispatchers: dict[int, RequestDispatcher] = {}
        self.listeners: dict[int, Listener] = {}  # each broker's first listener (bootstrap_servers)
        self.all_listeners: dict[int, list[Listener]] = {}  # with the others of the listeners setting
        self._listener_ports: dict[tuple[int, str], int] = {}  # a restarted broker listens where it did
        self.authorizer: StandardAuthorizer | None = None
        self._metadata: ClusterMetadata | None = None  # both made by start(): see the properties
        self._controller: Controller | None = None
        self.ports: dict[int, int] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------
    def start(self) -> Cluster:
        if self._thread:
            return self
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run_loop, args=(ready,), name="minikafka", daemon=True)
        self._thread.start()
        ready.wait()
        self.run(self._start())
        return self

    def stop(self) -> None:
        if not self._thread:
            return
        self.run(self._stop())
        loop = self._started_loop()
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(timeout=10)
        self._thread = None
        if self._own_dir and self.data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def restart(self) -> None:
        """Stop every broker and start them again from the same data directory."""
        self.run(self._stop())
        self.run(self._start())

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run_loop(self, ready: threading.Event) -> None:
        loop = self._started_loop()
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        loop.run_forever()

    def _started_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise RuntimeError("the cluster is not started")
        return self._loop

    @property
    def metadata(self) -> ClusterMetadata:
        """The cluster's metadata (topics, brokers, configs), made by ``start()``."""
        if self._metadata is None:
            raise RuntimeError("the cluster is not started: its metadata is made by start()")
        return self._metadata

    @property
    def controller(self) -> Controller:
        """The cluster's controller, made by ``start()``."""
        if self._controller is None:
            raise RuntimeError("the cluster is not started: its controller is made by start()")
        return self._controller

    async def _start(self) -> None:
        if self.data_dir:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        meta_path = self.data_dir / "cluster-metadata.json" if self.data_dir else None
        self._metadata = ClusterMetadata(self.config, meta_path)
        self._metadata.broker_configs.keep_cluster_min_isr(self._metadata.static_config)
        if self.security.authorizer is not None:
            self.authorizer = StandardAuthorizer(self.metadata.security, self.security.super_users,
                                                 self.security.allow_everyone_if_no_acl)
        self.brokers.clear()
        self._controller = Controller(self.metadata, self.peers)
        for node_id in self.node_ids:
            await self._start_broker(node_id)

    async def _start_broker(self, node_id: int) -> Broker:
        port = self.ports.get(node_id) or (self.first_port + self.node_ids.index(node_id) if self.first_port else 0)
        config = self.metadata.broker_config(node_id)
        source = NetworkSource(self.metadata, config) if self.replication == "network" else None
        broker = Broker(node_id, config, self.controller, self.peers, self.broker_log_dirs(node_id),
                        fetch_source=source, txn_peers=InProcessTxnPeers(self.brokers))
        dispatcher = RequestDispatcher(broker, self.authorizer)
        old = self.dispatchers.get(node_id)
        if old is not None:
            dispatcher.faults = old.faults  # injected faults outlive a restart, as in librdkafka's mock
        listeners = await self._open_listeners(node_id, dispatcher, port)
        self.dispatchers[node_id] = dispatcher
        self.ports[node_id] = listeners[0].port  # a restarted broker comes back where clients knew it
        first = self.security.listeners[0].name if self.security.listeners else None
        self.metadata.brokers[node_id] = self.metadata.listener_endpoints[first][node_id] if first else (
            listeners[0].host, listeners[0].port)
        self.metadata.racks[node_id] = self.racks[node_id]
        self._describe_listeners(broker, listeners)
        self.brokers[node_id], self.listeners[node_id], self.all_listeners[node_id] = broker, listeners[0], listeners
        self.controller.elect_controller()
        broker.load()
        broker.start_background()
        self.controller.broker_joined(node_id)
        return broker

    def broker_log_dirs(self, node_id: int) -> list[Path]:
        """A broker's log directories: each of ``log.dirs`` (or the data directory), with a
        ``broker-N`` directory inside when the cluster has several brokers."""
        if self.broker_count == 1:
            return list(self.log_dir_roots)
        return [root / f"broker-{node_id}" for root in self.log_dir_roots]
    async def _open_listeners(self, node_id: int, dispatcher: RequestDispatcher, port: int) -> list[Listener]:
        """One listener, or one per entry of the listeners setting, each with its TLS and sessions."""
        limits = dict(idle_ms=self.config["connections.max.idle.ms"], max_connections=self.config["max.connections"],
                      max_per_ip=self.config["max.connections.per.ip"])
        if not self.security.listeners:
            listener = Listener(dispatcher.handle_frame, self.host, port, **limits)
            await listener.start()
            return [listener]
        opened = []
        for spec in self.security.listeners:
            wanted = self._listener_ports.get((node_id, spec.name)) or (
                spec.port + self.node_ids.index(node_id) if spec.port else 0)
            listener = Listener(dispatcher.handle_frame, spec.host, wanted, ssl_context=spec.tls,
                                new_session=SessionFactory(spec, self.metadata.security.credential,
                                                           self.security.failed_authentication_delay_ms), **limits)
            await listener.start()
            self._listener_ports[(node_id, spec.name)] = listener.port
            self.metadata.listener_endpoints.setdefault(spec.name, {})[node_id] = self._advertised(spec, node_id,
                                                                                                  listener.port)
            opened.append(listener)
        return opened

    def _describe_listeners(self, broker: Broker, listeners: list[Listener]) -> None:
        """The broker's listeners and advertised.listeners, with the ports it really has."""
        specs = self.security.listeners
        if not specs:
            broker.listeners_setting = (f"PLAINTEXT://{listeners[0].host}:{listeners[0].port}", False)
            return
        broker.listeners_setting = (",".join(f"{spec.name}://{lst.host}:{lst.port}"
                                             for spec, lst in zip(specs, listeners, strict=True)), True)
        advertised = [f"{spec.name}://{host}:{port}" for spec in specs if spec.advertised is not None
                      for host, port in [self.metadata.listener_endpoints[spec.name][broker.node_id]]]
        if advertised:
            broker.advertised_listeners_setting = (",".join(advertised), True)

    def _advertised(self, spec: security_settings.Listener, node_id: int, bound_port: int) -> tuple[str, int]:
        """What Metadata tells clients: advertised.listeners' address (the next brokers' the ports after it)."""
        if spec.advertised is None:
            return spec.host, bound_port
        host, port = spec.advertised
        return host, port + self.node_ids.index(node_id) if port else bound_port

    async def _stop_broker(self, node_id: int, abrupt: bool = False) -> None:
        if node_id not in self.brokers:
            raise ValueError(f"broker {node_id} is not running")
        if not abrupt:
            self.controller.broker_leaving(node_id)  # controlled shutdown: leadership moves first
        self.listeners.pop(node_id)
        for listener in self.all_listeners.pop(node_id):
            await listener.stop(abrupt=abrupt)
        broker = self.brokers.pop(node_id)
        self.metadata.brokers.pop(node_id, None)
        await broker.close(flush=not abrupt)
        if abrupt:
            self.controller.broker_leaving(node_id)  # the controller notices the broker is gone
        self.controller.elect_controller()

    async def _stop(self) -> None:
        for node_id in sorted(self.brokers, reverse=True):
            self.listeners.pop(node_id)
            for listener in self.all_listeners.pop(node_id):
                await listener.stop()
            await self.brokers.pop(node_id).close()
            self.metadata.brokers.pop(node_id, None)
        if self._metadata is not None:
            self._metadata.close()

    # -- calling into the loop -----------------------------------------------------
    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the brokers' loop and wait for its result."""
        loop = self._started_loop()
        if threading.current_thread() is self._thread:
            raise RuntimeError("Cluster.run() called from the broker thread would deadlock")
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call a plain function on the brokers' loop (where broker state may be touched)."""
        async def _call() -> Any:
            return fn(*args, **kwargs)
        return self.run(_call())

    def serve_forever(self, ready: Callable[[], None] | None = None) -> None:
        """Run in the foreground until SIGTERM or SIGINT (``minikafka serve``), then shut down as
        Kafka does on SIGTERM: leadership moves first, logs are flushed, the clean-shutdown marker
        is written. Both signals are taken even where they were ignored when the process started
        (SIGINT is, for a background job of a script). ``ready`` is called once both are taken:
        whoever reads what it prints may signal at once (a Ctrl-C sent between an announcement
        and the handlers would otherwise interrupt the process half-way)."""
        self.start()
        asked = threading.Event()
        stopping: list[str] = []

        def stop_on(signum: int, _frame: object) -> None:
            stopping.append(signal.Signals(signum).name)
            asked.set()
        in_main = threading.current_thread() is threading.main_thread()
        before = {s: signal.signal(s, stop_on) for s in (signal.SIGTERM, signal.SIGINT)} if in_main else {}
        try:
            if ready is not None:
                ready()
            while not asked.wait(0.5) and self._thread is not None and self._thread.is_alive():
                pass
        finally:
            for sig, handler in before.items():
                signal.signal(sig, handler)
            self.stop()
        if stopping:
            log.info("stopped cleanly on %s", stopping[0])

    # -- what a user asks ------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        """The brokers' addresses on their first listener."""
        return ",".join(f"{self.listeners[i].host}:{self.listeners[i].port}" for i in sorted(self.listeners))

    def bootstrap_servers_of(self, listener: str) -> str:
        """The brokers' addresses on the listener named ``listener`` (e.g. ``SASL_PLAINTEXT``)."""
        names = [spec.name for spec in self.security.listeners]
        if listener.upper() not in names:
            have = ", ".join(names) or "one PLAINTEXT"
            raise ValueError(f"this cluster has no listener {listener!r} (it has {have})")
        index = names.index(listener.upper())
        return ",".join(f"{self.all_listeners[i][index].host}:{self.all_listeners[i][index].port}"
                        for i in sorted(self.all_listeners))

    def add_scram_user(self, user: str, password: str, mechanism: str = "SCRAM-SHA-256",
                       iterations: int = 4096) -> None:
        """A SCRAM credential, as ``kafka-storage format --add-scram`` seeds one before any client
        can log in (afterwards an admin client's AlterUserScramCredentials does the same)."""
        if mechanism not in SCRAM_MECHANISMS:
            raise ValueError(f"mechanism must be one of {', '.join(SCRAM_MECHANISMS)}, not {mechanism!r}")
        credential = SCRAM_MECHANISMS[mechanism].credential_from_password(password, iterations)
        self.call(self.metadata.security.set_credential, user, mechanism, credential)

    @property
    def running(self) -> bool:
        """True between ``start()`` and ``stop()``."""
        return self._thread is not None

    @property
    def _id_range(self) -> str:
        return f"{self.node_ids[0]}..{self.node_ids[-1]}"

    @property
    def controller_id(self) -> int:
        return self.metadata.controller_id

    def broker(self, node_id: int | None = None) -> Broker:
        """A running broker (the first one by default)."""
        node_id = self.node_ids[0] if node_id is None else node_id
        if node_id not in self.brokers:
            state = "is not running" if node_id in self.node_ids else "does not exist"
            raise ValueError(f"broker {node_id} {state} (this cluster has brokers {self._id_range})")
        return self.brokers[node_id]

    def request_counts(self, node_id: int, api: str | None = None) -> dict[str, int]:
        """How many requests one broker answered, by client id (of one API, e.g. "Fetch", or all):
        which broker serves a consumer is visible here (KIP-392 moves fetches to followers)."""
        counts: dict[str, int] = {}
        for (name, client_id), n in list(self.dispatchers[node_id].requests.items()):
            if api is None or name == api:
                counts[client_id] = counts.get(client_id, 0) + n
        return counts

    def faults(self, node_id: int | None = None) -> Faults:
        """The fault-injection handle of one broker (see ``minikafka.faults.Faults``)."""
        node_id = self.node_ids[0] if node_id is None else node_id
        if node_id not in self.dispatchers:
            raise ValueError(f"this cluster has no broker {node_id} (brokers {self._id_range})")
        return self.dispatchers[node_id].faults

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1,
                     config: Mapping[str, Any] | None = None) -> None:
        broker = self.brokers[self.controller_id]
        self.call(broker.create_topic, name, partitions, replication_factor, dict(config or {}))

    def topics(self) -> list[str]:
        return sorted(self.metadata.topics)

    def partition_offsets(self, topic: str) -> list[dict]:
        """Log start offset, high watermark and log end offset of each partition (leader's view)."""
        def read() -> list[dict]:
            out = []
            for p in self.metadata.topics[topic].partitions:
                part = self.brokers[p.leader].partitions[(topic, p.index)]
                out.append({"partition": p.index, "log_start_offset": part.log_start_offset,
                            "high_watermark": part.high_watermark, "log_end_offset": part.log_end_offset})
            return out
        return self.call(read)

    # -- breaking things (the replication notebook and the failure labs) ------------------
    def stop_broker(self, node_id: int) -> None:
        """Clean shutdown: leadership moves to other in-sync replicas first, then it stops."""
        self.run(self._stop_broker(node_id))

    def crash_broker(self, node_id: int) -> None:
        """Abrupt stop: connections are reset and nothing is flushed; the controller reacts after."""
        self.run(self._stop_broker(node_id, abrupt=True))

    def start_broker(self, node_id: int) -> None:
        """Start a stopped broker on its old port and data; it catches up and rejoins the ISR."""
        if node_id in self.brokers:
            return
        if node_id not in self.node_ids:
            raise ValueError(f"this cluster has brokers {self._id_range}")
        self.run(self._start_broker(node_id))

    def slow_broker(self, node_id: int, delay_ms: int) -> None:
        """Make a broker lag: its follower fetches and its responses wait ``delay_ms`` (0 undoes it)."""
        def apply() -> None:
            self.brokers[node_id].fetcher.delay_ms = delay_ms
            self.dispatchers[node_id].faults.set_latency(delay_ms)
        self.call(apply)

    @property
    def live_brokers(self) -> list[int]:
        return sorted(self.brokers)

    def partition_state(self, topic: str, partition: int = 0) -> dict:
        """Leader, epoch, replicas, ISR, eligible leader replicas (and the last known ones, KIP-966),
        high watermark and each replica's log end offset; during a reassignment (KIP-455) also
        the replicas being added and removed."""
        def read() -> dict:
            info = self.metadata.topics[topic].partitions[partition]
            leos = {b: self.brokers[b].partitions[(topic, partition)].log_end_offset
                    for b in info.replicas if b in self.brokers and (topic, partition) in self.brokers[b].partitions}
            leader = self.brokers.get(info.leader)
            hw = leader.partitions[(topic, partition)].high_watermark if leader else None
            return {"topic": topic, "partition": partition, "leader": info.leader, "leader_epoch": info.leader_epoch,
                    "replicas": list(info.replicas), "isr": list(info.isr), "elr": list(info.elr),
                    "last_known_elr": list(info.last_known_elr), "high_watermark": hw,
                    "log_end_offsets": leos, "adding_replicas": list(info.adding_replicas),
                    "removing_replicas": list(info.removing_replicas)}
        return self.call(read)

    def run_log_cleaner(self) -> None:
        """Run retention and compaction now instead of waiting for the next check."""
        for broker in list(self.brokers.values()):
            self.call(broker.run_log_cleaner)

    # -- looking inside (what no Kafka client can see) -------------------------------------
    def segments(self, topic: str) -> dict[int, list[dict]]:
        """Each partition's segment files on its leader: base offset, size, path, ...

        A partition whose leader is down has an empty list.
        """
        def read() -> dict[int, list[dict]]:
            out = {}
            for info in self.metadata.topics[topic].partitions:
                leader = self.brokers.get(info.leader)
                part = leader.partitions.get((topic, info.index)) if leader else None
                out[info.index] = part.log.segments_info() if part else []
            return out
        return self.call(read)

    def roll_segments(self, topic: str) -> None:
        """Close the active segment of each partition of ``topic`` on its leader.

        The log cleaner never touches an active segment; rolling first lets
        ``run_log_cleaner()`` compact or delete everything written so far.
        """
        def roll() -> None:
            for broker in self.brokers.values():
                for (name, _), part in broker.partitions.items():
                    if name == topic and part.is_leader:
                        part.log.roll()
        self.call(roll)

    def share_partition_state(self, group: str, topic: str, partition: int = 0) -> dict | None:
        """A share group's view of one partition (KIP-932), from the partition's leader: the start
        and end offsets (SPSO, SPEO) and each in-flight record's state, delivery count and holder.
        None while the group has never read the partition."""
        def read() -> Any:
            leader = self.brokers[self.metadata.topics[topic].partitions[partition].leader]
            return leader.share_partitions.describe(group, topic, partition)
        return self.call(read)

    def transaction_state(self, transactional_id: str) -> str:
        """The coordinator's state of a transactional id (``EMPTY``, ``ONGOING``...), or ``unknown``."""
        def read() -> str:
            states = [b.transaction_state(transactional_id) for b in self.brokers.values()]
            return next((s for s in states if s is not None), "unknown")
        return self.call(read)
