"""Time for a 4th consumer to join a stable group of 3, until all 4 have partitions.

    python bench/bench_rebalance.py                       # starts `minikafka serve` as a process
    python bench/bench_rebalance.py --bootstrap-server localhost:9092   # any Kafka cluster
    python bench/bench_rebalance.py --rounds 5 --heartbeat-ms 3000      # Kafka's default heartbeat

Each round uses a fresh 8-partition topic and group, three consumers polling in
threads, then a fourth; the clock runs from creating the fourth consumer until every
member owns at least one partition and the four assignments cover the topic. The
existing members learn of the rebalance from their next heartbeat, so the result is
dominated by ``heartbeat.interval.ms`` (the 4th member arrives at a random point of
the others' heartbeat cycle, the same points for both clients): on average about half
an interval, plus what the broker and clients add on top.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _broker import broker

PARTITIONS = 8


class Member(threading.Thread):
    """One consumer of either client, polling until stopped; ``owned`` is its assignment."""

    def __init__(self, client: str, bootstrap: str, group: str, topic: str, heartbeat_ms: int):
        super().__init__(daemon=True)
        self.owned: set[int] = set()
        self._stop_event = threading.Event()
        self.consumer = _consumer(client, bootstrap, group, topic, heartbeat_ms)
        if client == "confluent":
            self._poll = self.consumer.poll
        else:
            self._poll = lambda t: self.consumer.poll(timeout_ms=t * 1000)
        self.start()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self._poll(0.2)
            self.owned = {tp.partition for tp in self.consumer.assignment()}
        self.consumer.close()

    def stop(self) -> None:
        self._stop_event.set()


def _consumer(client: str, bootstrap: str, group: str, topic: str, heartbeat_ms: int):
    session_ms, poll_ms = max(6000, 3 * heartbeat_ms), 30000
    if client == "confluent":
        from confluent_kafka import Consumer
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "session.timeout.ms": session_ms,
                      "heartbeat.interval.ms": heartbeat_ms, "max.poll.interval.ms": poll_ms})
        c.subscribe([topic])
        return c
    from kafka import KafkaConsumer
    c = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, session_timeout_ms=session_ms,
                      heartbeat_interval_ms=heartbeat_ms, max_poll_interval_ms=poll_ms)
    _until(lambda: c.partitions_for_topic(topic), 15)  # see tests/groups/helpers.py: a kafka-python race
    return c


def _until(condition, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("timed out: the group did not settle")
        time.sleep(0.005)


def _settled(members: list[Member]) -> bool:
    owned = [m.owned for m in members]
    return all(owned) and set().union(*owned) == set(range(PARTITIONS)) and sum(map(len, owned)) == PARTITIONS


def one_round(client: str, bootstrap: str, heartbeat_ms: int, rng: random.Random) -> float:
    from confluent_kafka.admin import AdminClient, NewTopic
    topic, group = f"rebalance-{uuid.uuid4().hex[:8]}", f"bench-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
    members = [Member(client, bootstrap, group, topic, heartbeat_ms) for _ in range(3)]
    try:
        _until(lambda: _settled(members), 60)
        # A quiet, stable group, and a random phase against the members' heartbeat timers:
        # the 4th member arrives anywhere in their heartbeat interval, as in real life.
        time.sleep((2 + rng.random()) * heartbeat_ms / 1000)
        start = time.perf_counter()
        members.append(Member(client, bootstrap, group, topic, heartbeat_ms))
        _until(lambda: _settled(members), 60)
        return time.perf_counter() - start
    finally:
        for m in members:
            m.stop()
        for m in members:
            m.join(10)
        admin.delete_topics([topic])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap-server", help="an existing cluster (default: start minikafka serve)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--heartbeat-ms", type=int, default=1000)
    parser.add_argument("--clients", default="kafka-python,confluent")
    args = parser.parse_args()
    print("command:", " ".join([Path(sys.executable).name, *sys.argv]))
    with broker(args.bootstrap_server) as bootstrap:
        print(f"broker: {bootstrap}, heartbeat.interval.ms={args.heartbeat_ms}, {PARTITIONS} partitions, "
              f"{args.rounds} rounds")
        for client in args.clients.split(","):
            rng = random.Random(42)  # the same heartbeat phases for every client
            times = [one_round(client, bootstrap, args.heartbeat_ms, rng) for _ in range(args.rounds)]
            print(f"{client:>12}: 4th member joins a group of 3 in {statistics.median(times) * 1000:7.0f} ms (median; "
                  f"rounds {', '.join(f'{t * 1000:.0f}' for t in times)} ms)")


if __name__ == "__main__":
    main()
