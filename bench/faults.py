"""Jepsen-style fault run: acks=all idempotent producers write while a nemesis stops,
crashes and restarts brokers and cuts the producers' link to one of them; then every
partition is read back and checked.

    python bench/faults.py --minutes 5 --seed 1

The producers reach the embedded 3-broker Cluster only through :mod:`minikafka.netfault`
proxies (its ``advertised.listeners``), so a cut link is a partition that holds their
requests or a reset that closes their connections (``--no-links``: broker faults only).

Prints the figures (writes, acknowledged, lost, duplicated, failovers) and exits 1 if
the check failed. The parts are importable (``from bench.faults import run``) so a test
can run a short form and a multi-process cluster can bring its own nemesis: anything
with ``step(rng)``, ``heal()`` and ``failovers()``.

The check itself is :mod:`minikafka.netfault.history`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import socket
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from minikafka.netfault import Network
from minikafka.netfault.history import Check, History, check, replica_logs

TOPIC = "jepsen"


class Nemesis(Protocol):
    def step(self, rng: random.Random) -> str: ...
    def heal(self) -> None: ...
    def failovers(self) -> int: ...


class ClusterNemesis:
    """Faults of an embedded Cluster: clean stops, crashes and restarts of its brokers,
    at most ``max_down`` of them down at once."""

    def __init__(self, cluster: Any, topic: str = TOPIC, max_down: int = 1) -> None:
        self.cluster, self.topic, self.max_down = cluster, topic, max_down
        self._epochs_at_start: int | None = None  # read at the first fault: the topic exists by then

    def _epochs(self) -> int:
        parts = len(self.cluster.metadata.topics[self.topic].partitions)
        return sum(self.cluster.partition_state(self.topic, p)["leader_epoch"] for p in range(parts))

    def step(self, rng: random.Random) -> str:
        if self._epochs_at_start is None:
            self._epochs_at_start = self._epochs()
        live = self.cluster.live_brokers
        down = [b for b in self.cluster.node_ids if b not in live]
        if down and (len(down) >= self.max_down or rng.random() < 0.5):
            victim = rng.choice(down)
            self.cluster.start_broker(victim)
            return f"start {victim}"
        victim = rng.choice(live)
        if rng.random() < 0.5:
            self.cluster.crash_broker(victim)
            return f"crash {victim}"
        self.cluster.stop_broker(victim)
        return f"stop {victim}"

    def heal(self) -> None:
        for b in self.cluster.node_ids:
            self.cluster.start_broker(b)

    def failovers(self) -> int:
        """Leader changes so far: the growth of the partitions' leader epochs."""
        return 0 if self._epochs_at_start is None else self._epochs() - self._epochs_at_start


class ClientLinkNemesis:
    """Broker faults, and now and then the producers' link to one broker cut (a partition
    that holds their requests, or resets) through a :class:`~minikafka.netfault.Network`."""

    def __init__(self, brokers: ClusterNemesis, network: Network, share: float = 0.4) -> None:
        self.brokers, self.network, self.share = brokers, network, share
        self.cut: str | None = None

    def step(self, rng: random.Random) -> str:
        if self.cut:
            self.network.heal("client", self.cut)
            healed, self.cut = self.cut, None
            return f"heal client-{healed}"
        if rng.random() >= self.share:
            return self.brokers.step(rng)
        self.cut = rng.choice(list(self.network.nodes))
        how = rng.choice(["partition", "reset"])
        getattr(self.network, how)("client", self.cut)
        return f"{how} client-{self.cut}"

    def heal(self) -> None:
        self.network.heal()
        self.brokers.heal()

    def failovers(self) -> int:
        return self.brokers.failovers()


def free_port_block(count: int, rng: random.Random) -> int:
    """A first port such that it and the next ``count - 1`` are free on 127.0.0.1."""
    for _ in range(200):
        base = rng.randrange(20000, 60000 - count)
        try:
            with contextlib.ExitStack() as stack:
                for port in range(base, base + count):
                    stack.enter_context(socket.create_server(("127.0.0.1", port)))
            return base
        except OSError:
            continue
    raise RuntimeError(f"no {count} free consecutive ports found")


@contextlib.contextmanager
def proxied_brokers(brokers: int = 3, seed: int = 0) -> Iterator[tuple[dict[str, str], Network]]:
    """Cluster settings and a running Network such that clients reach broker N only through
    the proxy ``client->bN`` (its ``advertised.listeners``); broker N listens on the real port."""
    rng = random.Random(seed)
    real, proxied = free_port_block(brokers, rng), free_port_block(brokers, rng)
    nodes = {f"b{i + 1}": real + i for i in range(brokers)}
    ports = {("client", f"b{i + 1}"): proxied + i for i in range(brokers)}
    with Network(nodes, clients=["client"], seed=seed, ports=ports) as network:
        config = {
            "listeners": f"PLAINTEXT://127.0.0.1:{real}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{proxied}",
        }
        yield config, network


class RecordingProducer:
    """An idempotent acks=all confluent-kafka producer in a thread, each attempt in ``history``."""

    def __init__(self, name: str, bootstrap: str, history: History, topic: str = TOPIC, pause: float = 0.002) -> None:
        from confluent_kafka import Producer

        self.name, self.topic, self.history, self.pause = name, topic, history, pause
        self.producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 5,
                "message.timeout.ms": 60000,
                "partitioner": "murmur2_random",
                "log_level": 2,  # the lost connections are the point: not one line each on stderr
                # without it a fatal error is raised from inside the delivery callbacks of the same
                # poll, which can leave the history's lock taken and the run hung in flush()
                "error_cb": self._on_error,
            }
        )
        self.fatal: str | None = None  # a fatal producer error (e.g. OUT_OF_ORDER_SEQUENCE_NUMBER): the run fails
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"producer-{name}", daemon=True)

    def _report(self, index: int) -> Callable[[Any, Any], None]:
        def on_delivery(err: Any, msg: Any) -> None:
            if err is None:
                self.history.complete(index, partition=msg.partition(), offset=msg.offset())
            else:
                self.history.complete(index, error=str(err))

        return on_delivery

    def _on_error(self, err: Any) -> None:
        if err.fatal() and self.fatal is None:
            self.fatal = f"{self.name}: {err.str()}"

    def _run(self) -> None:
        from confluent_kafka import KafkaException

        seq = 0
        while not self._stop.is_set() and self.fatal is None:
            value, key = f"{self.name}-{seq:09d}".encode(), str(seq % 64).encode()
            index = self.history.invoke(self.name, key, value)
            try:
                while True:
                    try:
                        self.producer.produce(self.topic, value, key, on_delivery=self._report(index))
                        break
                    except BufferError:
                        self.producer.poll(0.05)
                seq += 1
                self.producer.poll(self.pause)
            except KafkaException as e:  # fatal: this producer can send no more
                self.history.complete(index, error=str(e))
                self.fatal = self.fatal or f"{self.name}: {e}"

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 90.0) -> int:
        """Stop sending, wait for every delivery report; returns how many never came."""
        self._stop.set()
        self._thread.join(10)
        return self.producer.flush(timeout)


def read_back(bootstrap: str, topic: str, partitions: int, timeout: float = 60.0) -> dict[int, list[tuple[int, bytes]]]:
    """Every record of every partition from offset 0 to its end: (offset, value)."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "jepsen-reader",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
            "log_level": 2,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
    done: set[int] = set()
    deadline = time.monotonic() + timeout
    try:
        while len(done) < partitions:
            if time.monotonic() > deadline:
                raise TimeoutError(f"partitions {sorted(set(out) - done)} not read to their end in {timeout} s")
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    done.add(msg.partition())
                continue
            out[msg.partition()].append((msg.offset(), msg.value()))
    finally:
        consumer.close()
    return out


def settle(cluster: Any, topic: str, timeout: float = 30.0) -> bool:
    """Wait until every replica of every partition is in the ISR and at the high watermark."""
    deadline = time.monotonic() + timeout
    parts = len(cluster.metadata.topics[topic].partitions)
    while time.monotonic() < deadline:
        states = [cluster.partition_state(topic, p) for p in range(parts)]
        if all(
            sorted(s["isr"]) == sorted(s["replicas"])
            and s["high_watermark"] is not None
            and all(leo == s["high_watermark"] for leo in s["log_end_offsets"].values())
            for s in states
        ):
            return True
        time.sleep(0.1)
    return False


def run(
    cluster: Any,
    seconds: float,
    seed: int,
    producers: int = 2,
    partitions: int = 3,
    interval: tuple[float, float] = (0.5, 1.5),
    nemesis: Nemesis | None = None,
    log: Callable[[str], None] = lambda line: None,
    settled: Callable[[], bool] | None = None,
    replicas: Callable[[], dict[int, dict[int, list[tuple[int, bytes]]]]] | None = None,
) -> tuple[Check, dict[str, Any]]:
    """Write for ``seconds`` under ``nemesis`` (default: stop/crash/start brokers), heal, check.

    ``settled`` (wait until every ISR is full, default :func:`settle`) and ``replicas``
    (each partition's in-sync replicas' records below the high watermark, default
    :func:`~minikafka.netfault.history.replica_logs`) let a cluster of another kind be checked.
    A nemesis with a ``figures()`` method adds its own figures."""
    rng = random.Random(seed)
    cluster.create_topic(TOPIC, partitions=partitions, replication_factor=3)
    nemesis = nemesis or ClusterNemesis(cluster)
    history = History()
    writers = [RecordingProducer(f"p{i}", cluster.bootstrap_servers, history) for i in range(producers)]
    for w in writers:
        w.start()
    kinds: Counter[str] = Counter()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(rng.uniform(*interval))
        line = nemesis.step(rng)
        log(line)
        kinds[line.split()[0]] += 1
    nemesis.heal()
    unanswered = sum(w.stop() for w in writers)
    is_settled = settled() if settled else settle(cluster, TOPIC)
    logs = replicas() if replicas else replica_logs(cluster, TOPIC)
    result = check(history, read_back(cluster.bootstrap_servers, TOPIC, partitions), logs)
    extra = getattr(nemesis, "figures", None)
    figures = {
        **result.figures(),
        "faults": sum(kinds.values()),
        "faults_by_kind": dict(sorted(kinds.items())),
        "failovers": nemesis.failovers(),
        **(extra() if extra else {}),
        "unanswered": unanswered,
        "producer_fatal_errors": [w.fatal for w in writers if w.fatal],
        "settled": is_settled,
        "seconds": seconds,
        "seed": seed,
    }
    return result, figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--producers", type=int, default=2)
    parser.add_argument("--no-links", dest="links", action="store_false", help="broker faults only, no cut links")
    parser.add_argument("--verbose", action="store_true", help="print each fault as it happens")
    args = parser.parse_args()
    from minikafka import Cluster

    with (
        tempfile.TemporaryDirectory(prefix="mk-faults-") as data,
        proxied_brokers(3, args.seed) as (listeners, network),
        Cluster(brokers=3, data_dir=data, config={"min.insync.replicas": 2, **listeners}) as cluster,
    ):
        nemesis = ClientLinkNemesis(ClusterNemesis(cluster), network) if args.links else None
        result, figures = run(
            cluster,
            args.minutes * 60,
            args.seed,
            args.producers,
            nemesis=nemesis,
            log=print if args.verbose else lambda line: None,
        )
    print(json.dumps(figures))
    for attempt in result.lost[:10]:
        print("lost:", attempt)
    for value, places in list(result.duplicated.items())[:10]:
        print(f"duplicated: {value!r} at (partition, offset) {places}")
    for attempt, stored_at in result.wrong_offset[:10]:
        print(f"acknowledged at offset {attempt.offset} but stored at {stored_at}: {attempt}")
    for line in [*result.reordered[:10], *result.diverged[:10]]:
        print(line)
    for error in figures["producer_fatal_errors"]:
        print("fatal producer error:", error)
    raise SystemExit(0 if result.ok and not figures["producer_fatal_errors"] else 1)


if __name__ == "__main__":
    main()
