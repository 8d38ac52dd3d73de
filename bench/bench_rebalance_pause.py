"""Pause per member when a consumer joins: classic protocol (eager, cooperative) vs KIP-848.

    python bench/bench_rebalance_pause.py                    # starts `minikafka serve` as a process
    python bench/bench_rebalance_pause.py --heartbeat-ms 3000 --rounds 5

A producer writes one record every 5 ms, round robin over 6 partitions. Two
confluent-kafka consumers, started half a heartbeat interval apart (so they heartbeat
at different moments, as real members do), read them; then a third joins. For each of the two members
already there, the *pause* is the longest time it received nothing, from the newcomer's
arrival until the group is settled (each member has two partitions) plus one second;
for the newcomer, the time to its first record. Three protocols, same heartbeat interval:

* classic, eager (``range``): every member gives up every partition at each rebalance;
* classic, cooperative (``cooperative-sticky``, KIP-429): two rebalances, only moved
  partitions stop;
* consumer (KIP-848, ``group.protocol=consumer``): no rebalance barrier at all; the
  broker's ``group.consumer.heartbeat.interval.ms`` plays the heartbeat's part.

A member polls every 50 ms, so a pause never reads much below that. Also counted: how
many of its three partitions each member already there had to stop (its revoke callback).
On loopback a rebalance round trip takes milliseconds, so the classic pauses stay short
here; what the protocols change is which partitions stop, and how long a newcomer waits.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _broker import broker

PARTITIONS, EVERY_S, POLL_S = 6, 0.005, 0.05
PROTOCOLS = {
    "classic eager": {"partition.assignment.strategy": "range"},
    "classic cooperative": {"partition.assignment.strategy": "cooperative-sticky"},
    "consumer (KIP-848)": {"group.protocol": "consumer"},
}


class Member(threading.Thread):
    """A consumer that notes when each record arrived and which partitions it owns."""

    def __init__(self, bootstrap: str, group: str, topic: str, settings: dict):
        super().__init__(daemon=True)
        from confluent_kafka import Consumer
        self.arrivals: list[float] = []
        self.owned: set[int] = set()
        self.revoked: list[int] = []  # how many partitions each revocation took away
        self._stop_event = threading.Event()
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "latest",
                                  "fetch.wait.max.ms": 20, "log_level": 3, **settings})
        self.consumer.subscribe([topic], on_revoke=lambda _, tps: self.revoked.append(len(tps)))
        self.start()

    def run(self) -> None:
        while not self._stop_event.is_set():
            msg = self.consumer.poll(POLL_S)
            if msg is not None and not msg.error():
                self.arrivals.append(time.perf_counter())
            self.owned = {tp.partition for tp in self.consumer.assignment()}
        self.consumer.close()

    def longest_gap(self, start: float, end: float) -> float:
        times = [start] + [t for t in self.arrivals if start < t < end] + [end]
        return max(b - a for a, b in itertools.pairwise(times))

    def stop(self) -> None:
        self._stop_event.set()
        self.join(10)


def produce_until(bootstrap: str, topic: str, stop: threading.Event) -> None:
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "log_level": 3})
    i = 0
    while not stop.is_set():
        producer.produce(topic, b"x", partition=i % PARTITIONS)
        producer.poll(0)
        i += 1
        time.sleep(EVERY_S)
    producer.flush(10)


def _until(condition, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("timed out: the group did not settle")
        time.sleep(0.01)


def one_round(bootstrap: str, settings: dict, heartbeat_ms: int) -> tuple[list[float], float, list[int]]:
    from confluent_kafka.admin import AdminClient, NewTopic
    topic, group = f"pause-{uuid.uuid4().hex[:8]}", f"pause-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
    if "group.protocol" not in settings:
        settings = {**settings, "heartbeat.interval.ms": heartbeat_ms, "session.timeout.ms": 10 * heartbeat_ms}
    stop = threading.Event()
    producer = threading.Thread(target=produce_until, args=(bootstrap, topic, stop), daemon=True)
    producer.start()
    members = [Member(bootstrap, group, topic, settings)]
    time.sleep(heartbeat_ms / 2000)  # their heartbeats half an interval apart
    members.append(Member(bootstrap, group, topic, settings))
    try:
        _until(lambda: sorted(len(m.owned) for m in members) == [3, 3], 60)
        time.sleep(1.0 + heartbeat_ms / 1000)  # steady consumption, and a random heartbeat phase
        for m in members:
            m.revoked.clear()
        joined = time.perf_counter()
        newcomer = Member(bootstrap, group, topic, settings)
        _until(lambda: all(len(m.owned) == 2 for m in [*members, newcomer]) and newcomer.arrivals, 60)
        end = time.perf_counter() + 1.0
        time.sleep(1.0)
        pauses = [m.longest_gap(joined, end) for m in members]
        return pauses, newcomer.arrivals[0] - joined, [sum(m.revoked) for m in members]
    finally:
        stop.set()
        for m in [*members, locals().get("newcomer")]:
            if m is not None:
                m.stop()
        producer.join(10)
        admin.delete_topics([topic])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap-server", help="an existing cluster (default: start minikafka serve)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--heartbeat-ms", type=int, default=1000)
    args = parser.parse_args()
    print("command:", " ".join([Path(sys.executable).name, *sys.argv]))
    extra = ["--config", "group.initial.rebalance.delay.ms=0",
             "--config", f"group.consumer.heartbeat.interval.ms={args.heartbeat_ms}"]
    with broker(args.bootstrap_server, *extra) as bootstrap:
        print(f"broker: {bootstrap}, heartbeat interval {args.heartbeat_ms} ms, {PARTITIONS} partitions, "
              f"a record every {EVERY_S * 1000:.0f} ms, {args.rounds} rounds; medians")
        print(f"{'protocol':>22}  {'pause of each member already there':>36}  {'partitions it stopped':>22}  "
              f"{'newcomer first record':>22}")
        for name, settings in PROTOCOLS.items():
            results = [one_round(bootstrap, settings, args.heartbeat_ms) for _ in range(args.rounds)]
            pause = statistics.median(p for pauses, _, _ in results for p in pauses)
            worst = max(p for pauses, _, _ in results for p in pauses)
            stopped = statistics.median(n for _, _, revoked in results for n in revoked)
            first = statistics.median(f for _, f, _ in results)
            print(f"{name:>22}  {pause * 1000:20.0f} ms (worst {worst * 1000:5.0f} ms)  {stopped:19.0f} of 3  "
                  f"{first * 1000:19.0f} ms")


if __name__ == "__main__":
    main()
