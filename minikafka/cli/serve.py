"""``minikafka serve``: run brokers in the foreground until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import difflib
import gc
import logging
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

# kio registers Hypothesis strategies when Hypothesis is importable (test installs have
# it); a broker process never needs them, and skipping them halves its start-up time.
sys.modules.setdefault("hypothesis", None)  # type: ignore[arg-type]  # None: "cannot be imported"

from ..cluster import Cluster  # noqa: E402
from ..config import BROKER_SETTINGS, TOPIC_TO_BROKER, ConfigError, read_properties  # noqa: E402
from ..processes import ProcessCluster  # noqa: E402
from ..running import RunningProcesses  # noqa: E402
from ..protocol import codec  # noqa: E402
from ..security import settings as security_settings  # noqa: E402
from .common import parse_pairs  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minikafka serve", description="Run a Kafka-compatible broker.")
    p.add_argument("properties", nargs="?", help="a server.properties file (Kafka's format)")
    p.add_argument("--host", help="address to listen on (default 127.0.0.1, or the first of the file's listeners)")
    p.add_argument("--port", type=int, help="port of the first broker (default 9092, or the first of the file's "
                                            "listeners; 0 = any free port)")
    p.add_argument("--brokers", type=int, default=1, help="number of brokers, on consecutive ports")
    p.add_argument("--data-dir", help="where logs are kept (default ./.minikafka-data, or the file's log.dirs); "
                                      "several directories, comma-separated, are Kafka's log.dirs")
    p.add_argument("--in-memory", action="store_true", help="keep everything in RAM (lost on exit)")
    p.add_argument("--config", action="append", metavar="NAME=VALUE", help="a broker setting, e.g. num.partitions=3")
    p.add_argument("--controllers", type=int, metavar="N",
                   help="run a KRaft controller quorum of N processes and each broker as its own process "
                        "(brokers take ids 1..B, controllers the ids after; their ports follow the brokers')")
    p.add_argument("--links", action="store_true",
                   help="with --controllers: a fault proxy on every link between the processes (broker to broker "
                        "too: replication) and between the clients and each broker, driven by "
                        "'minikafka link --data-dir DIR' (cut, delay, drop, heal)")
    p.add_argument("--log-level", default="INFO")
    return p


def serve_processes(args: argparse.Namespace, settings: dict[str, str]) -> int:
    """``--controllers N``: every broker and controller its own process (``minikafka.processes``),
    until Ctrl-C or SIGTERM, which stops the brokers (under control) and then the controllers."""
    if args.in_memory or args.properties or args.host not in (None, "127.0.0.1"):
        print("Error: --controllers runs processes on 127.0.0.1 with a data directory; leave out --in-memory, "
              "--host and the properties file.", file=sys.stderr)
        return 2
    if args.brokers < 1 or args.controllers < 1:
        print("Error: --brokers and --controllers must be at least 1.", file=sys.stderr)
        return 2
    first = 9092 if args.port is None else args.port
    count = args.brokers + args.controllers
    ports = list(range(first, first + count)) if first else None
    data_dir = Path(args.data_dir or ".minikafka-data")
    try:
        cluster = ProcessCluster(args.brokers, args.controllers, data_dir, ports=ports, config=settings,
                                 links=args.links, log_level=args.log_level)
    except ValueError as e:
        print(f"Error: {e}.", file=sys.stderr)
        return 2
    asked: list[str] = []

    def stop_on(signum: int, _frame: object) -> None:
        asked.append(signal.Signals(signum).name)

    before = {s: signal.signal(s, stop_on) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        try:
            cluster.start()
        except (TimeoutError, RuntimeError) as e:  # too slow, or a node that exited (a setting it refused)
            print(f"Error: the processes did not come up: {e}. Their output is in {data_dir}/*.out.", file=sys.stderr)
            return 1
        print(f"minikafka: {args.brokers} broker process(es) (id {', '.join(map(str, cluster.broker_ids))}) "
              f"listening on {cluster.bootstrap_servers}; {args.controllers} controller process(es) "
              f"{cluster.controllers} (data in {data_dir}). Ctrl-C or SIGTERM stops it cleanly.", flush=True)
        if args.links:
            _print_links(cluster, data_dir)
        down: set[int] = set()
        while not asked:
            time.sleep(0.5)
            _watch(cluster, data_dir, down)
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        cluster.stop()
    print("minikafka: stopped cleanly (brokers first, then controllers).", flush=True)
    return 0


def _watch(cluster: ProcessCluster, data_dir: Path, down: set[int]) -> None:
    """Say when a node stops running, and when it runs again (``minikafka node start`` from another
    terminal starts it with a pid this process did not make: ``cluster.json`` has it)."""
    nodes = RunningProcesses(data_dir)
    for node_id in cluster.procs:
        cluster.alive(node_id)  # reaps a child that died, whose pid then reads as gone
        name = cluster.name(node_id)
        if not nodes.alive(node_id) and node_id not in down:
            down.add(node_id)
            print(f"minikafka: {name} is not running; see {data_dir}/{name}.out", file=sys.stderr, flush=True)
        elif nodes.alive(node_id) and node_id in down:
            down.discard(node_id)
            print(f"minikafka: {name} runs again (pid {nodes.pids()[node_id]}).", file=sys.stderr, flush=True)


def _print_links(cluster: ProcessCluster, data_dir: Path) -> None:
    """Open the links' control port and say how to use it, with a command to paste."""
    control = cluster.serve_control()
    broker, controller = cluster.name(cluster.broker_ids[0]), cluster.name(cluster.controller_ids[0])
    print(f"minikafka: links between the processes (clients through their own link to each broker, each broker "
          f"through its own to every other) take commands on {control}: minikafka link --control {control} "
          f"partition {broker} {controller} "
          f"(or: minikafka link --data-dir {data_dir} heal); minikafka node status --data-dir {data_dir} "
          "lists the processes.", flush=True)


# Settings of a Kafka server.properties that minikafka takes in another form: the KRaft quorum
# (one process runs the controller) and the metadata log's place. (listeners, advertised.listeners,
# listener.security.protocol.map and controller.listener.names go to the Cluster.) Every other name
# Kafka knows (KAFKA_SETTINGS) that minikafka has no part for (thread pools, socket buffers, fsync
# policy, ZooKeeper...) is accepted too, so Kafka's own file starts a broker, and named once at
# start-up; a name Kafka does not know is named with the closest one Kafka knows, and the broker starts.
NOT_USED = frozenset({
    "process.roles", "controller.quorum.voters", "controller.quorum.bootstrap.servers",
    "inter.broker.listener.name", "metadata.log.dir",
})
KAFKA_SETTINGS = frozenset(
    line for line in (Path(__file__).with_name("kafka_settings.txt").read_text().split("\n"))
    if line and not line.startswith("#"))


BROKER_NAMES = frozenset(s.name for s in BROKER_SETTINGS)


def takes(name: str) -> bool:
    """Whether a setting of this name changes what minikafka does."""
    return name in BROKER_NAMES or name in TOPIC_TO_BROKER or security_settings.takes(name)


@dataclass
class Where:
    host: str = "127.0.0.1"
    port: int = 9092
    data_dir: str = ".minikafka-data"
    not_used: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # "name (did you mean x?)"


def from_server_properties(settings: dict[str, str]) -> Where:
    """Take what a Kafka server.properties says about the process out of ``settings``.

    ``listeners`` stays in ``settings``: the Cluster opens one listener per entry (with
    their security, ``minikafka.security.settings``). ``log.dirs`` (or ``log.dir``) gives
    the data directories (the first also holds the cluster metadata, as Kafka's
    ``metadata.log.dir`` defaults to it), ``log.retention.hours`` and ``log.retention.minutes`` become
    ``log.retention.ms`` as on Kafka (ms wins, then minutes, then hours). What minikafka
    has no part for is removed and listed.
    """
    where = Where()
    dirs = _items(settings.pop("log.dirs", "") or settings.pop("log.dir", ""))
    settings.pop("log.dir", None)
    if dirs:
        where.data_dir = ",".join(dirs)
    for unit, ms in (("minutes", 60_000), ("hours", 3_600_000)):
        value = settings.pop(f"log.retention.{unit}", None)
        if value is not None and "log.retention.ms" not in settings:
            try:
                settings["log.retention.ms"] = str(int(value) * ms) if int(value) >= 0 else "-1"
            except ValueError:
                raise ConfigError(f"log.retention.{unit} must be a whole number, not {value!r}") from None
    for name in sorted(settings):
        if name in NOT_USED or not takes(name):
            settings.pop(name)
            if name in NOT_USED or name in KAFKA_SETTINGS:
                where.not_used.append(name)
            else:
                where.unknown.append(_closest(name))
    return where


def _closest(name: str) -> str:
    near = difflib.get_close_matches(name, KAFKA_SETTINGS, n=1, cutoff=0.6)
    return f"{name} (did you mean {near[0]}?)" if near else name


def _items(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _move_first_listener(settings: dict, host: str | None, port: int | None) -> None:
    """--host and --port move the first broker listener of the ``listeners`` setting (which is
    then advertised where it listens: the file's advertised address was for the old place)."""
    controllers = {n.upper() for n in _items(settings.get("controller.listener.names", ""))}
    listeners = _items(settings["listeners"])
    for i, listener in enumerate(listeners):
        name, _, address = listener.partition("://")
        if name.upper() not in controllers:
            old_host, _, old_port = address.rpartition(":")
            listeners[i] = f"{name}://{host if host is not None else old_host}:{port if port is not None else old_port}"
            advertised = [a for a in _items(settings.get("advertised.listeners", ""))
                          if a.partition("://")[0].upper() != name.upper()]
            settings["advertised.listeners"] = ",".join(advertised)
            break
    settings["listeners"] = ",".join(listeners)


def _listening(cluster: Cluster) -> str:
    """Where clients connect: the addresses, and each listener's name when there are several."""
    specs = cluster.security.listeners
    if len(specs) <= 1:
        return cluster.bootstrap_servers
    return ", ".join(f"{cluster.bootstrap_servers_of(s.name)} ({s.name})" for s in specs)


def _first_node_id(settings: dict) -> int:
    """``node.id`` (KRaft) or ``broker.id`` (ZooKeeper days) names the first broker; more
    brokers (--brokers) take the ids after it."""
    given = {k: settings.pop(k) for k in ("node.id", "broker.id") if k in settings}
    try:
        ids = {int(v) for v in given.values()}
    except ValueError:
        raise ConfigError(f"node.id must be a whole number, not {given}") from None
    if len(ids) > 1:
        raise ConfigError(f"node.id and broker.id disagree: {given}")
    return ids.pop() if ids else 1


def warm_up(stopping: threading.Event) -> None:
    """What a long-running broker does once it listens, so that no request waits for it later:
    build every API version's classes (``codec.warm_up``), then move everything made so far
    (modules, classes, the cluster's own objects) out of reach of the garbage collector
    (``gc.freeze``). A full collection then walks only what the clients' requests created,
    instead of pausing the event loop for tens of milliseconds over objects that live as long
    as the process."""
    codec.warm_up(stopping.is_set)
    if not stopping.is_set():
        gc.freeze()


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        settings = read_properties(args.properties) if args.properties else {}
    except OSError as e:
        print(f"Error: cannot read {args.properties} ({e.strerror}). Give the path of a server.properties file, "
              "or leave it out to use the defaults.", file=sys.stderr)
        return 2
    except ConfigError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 2
    settings.update(parse_pairs(args.config, "--config"))
    if args.links and args.controllers is None:
        print("Error: --links puts fault proxies between broker and controller processes; add --controllers N "
              "(and --brokers B) to run them.", file=sys.stderr)
        return 2
    if args.controllers is not None:
        return serve_processes(args, settings)
    try:
        where = from_server_properties(settings)
        if settings.get("listeners"):
            if args.host is not None or args.port is not None:
                _move_first_listener(settings, args.host, args.port)
            host, port = "127.0.0.1", 0  # the listeners setting says where
        else:
            host, port = args.host or where.host, where.port if args.port is None else args.port
        data_dir = args.data_dir or where.data_dir
        if "," in data_dir:  # several log directories: Kafka's log.dirs
            settings["log.dirs"], data_dir = data_dir, _items(data_dir)[0]
        first_id = _first_node_id(settings)
        cluster = Cluster(args.brokers, None if args.in_memory else data_dir, port, settings,
                          host=host, in_memory=args.in_memory, first_node_id=first_id)
        cluster.start()
    except (ConfigError, ValueError) as e:
        print(f"Error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        where_to = settings.get("listeners") or f"{host}:{port}"
        print(f"Error: cannot listen on {where_to} ({e.strerror}). "
              f"Is another broker running? Try --port 0 or another port.", file=sys.stderr)
        return 2
    stopping = threading.Event()
    warming = threading.Thread(target=warm_up, args=(stopping,), name="minikafka-warm-up", daemon=True)
    warming.start()
    stored = "in memory" if args.in_memory else f"data in {settings.get('log.dirs') or data_dir}"
    ids = ", ".join(map(str, cluster.node_ids))
    if where.not_used:
        print(f"Not used by minikafka (one process, its own controller): {', '.join(where.not_used)}.")
    if where.unknown:
        print(f"Warning: not a Kafka setting, ignored: {', '.join(where.unknown)}.", file=sys.stderr)
    cluster.serve_forever(ready=lambda: print(
        f"minikafka: {args.brokers} broker(s) (id {ids}) listening on {_listening(cluster)} ({stored}). "
        "Ctrl-C or SIGTERM stops it cleanly.", flush=True))
    stopping.set()
    warming.join()
    print("minikafka: stopped cleanly (leaders moved, logs flushed).", flush=True)
    return 0
