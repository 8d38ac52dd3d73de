"""Replication cost and failover time.

    python bench/bench_replication.py

1. Produce throughput with acks=all to a topic with replication factor 1 and 3, on a
   3-broker `minikafka serve --brokers 3` process (confluent-kafka, 100 B records).
2. Failover time: an embedded 3-broker Cluster (its stop_broker is needed), a producer
   sending one record at a time; time from stopping the leader to the first record
   acknowledged by the new one. Reported as the median of several rounds.
3. ``--transports``: acks=all throughput, RF=3, on an embedded 3-broker Cluster whose
   followers replicate in-process (method calls, the default) and then over the network
   (Fetch requests over TCP, ``Cluster(replication="network")``), side by side (issue 31).
   Measured 2026-11-28 on the shared 2-core machine (load ~5), 100 B records:
   ``--transports --messages 100000 --rounds 3``: in-process 251,331 msg/s, network 231,828 msg/s;
   with 50,000 messages: 195,399 and 144,830 msg/s.
"""

from __future__ import annotations

import argparse
import statistics
import time

from _broker import broker


def produce_all(bootstrap: str, topic: str, n: int) -> float:
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5,
                  "queue.buffering.max.messages": 1_000_000})
    start = time.perf_counter()
    for _ in range(n):
        p.produce(topic, b"x" * 100)
        p.poll(0)
    assert p.flush(60) == 0
    return time.perf_counter() - start


def throughput(n: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic
    with broker(None, "--brokers", "3") as bootstrap:
        client = AdminClient({"bootstrap.servers": bootstrap})
        for rf in (1, 3):
            name = f"rf{rf}"
            client.create_topics([NewTopic(name, 1, rf)])[name].result(10)
            elapsed = produce_all(bootstrap, name, n)
            print(f"RF={rf} acks=all: {n / elapsed:>10,.0f} msg/s ({n * 100 / elapsed / 1e6:.1f} MB/s)")


def failover_once(rounds: int) -> list[float]:
    from confluent_kafka import Producer

    from minikafka import Cluster
    out = []
    with Cluster(brokers=3, in_memory=True, config={"min.insync.replicas": 2}) as cluster:
        cluster.create_topic("f", 1, 3)
        p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all", "linger.ms": 0,
                      "retry.backoff.ms": 10, "topic.metadata.refresh.fast.interval.ms": 10})
        for _ in range(rounds):
            p.produce("f", b"warm")
            p.flush(10)
            leader = cluster.partition_state("f")["leader"]
            start = time.perf_counter()
            cluster.stop_broker(leader)
            p.produce("f", b"after")
            assert p.flush(30) == 0
            out.append((time.perf_counter() - start) * 1000)
            cluster.start_broker(leader)
            while len(cluster.partition_state("f")["isr"]) < 3:
                time.sleep(0.05)
    return out


def transports(n: int, rounds: int) -> None:
    """acks=all, RF=3: in-process against network replication, the best of ``rounds`` runs each."""
    from minikafka import Cluster
    for transport in ("in-process", "network"):
        best = 0.0
        with Cluster(brokers=3, in_memory=True, replication=transport,
                     config={"min.insync.replicas": 2}) as cluster:
            for r in range(rounds):
                cluster.create_topic(f"t{r}", 1, 3)
                best = max(best, n / produce_all(cluster.bootstrap_servers, f"t{r}", n))
        print(f"replication={transport:<10} RF=3 acks=all: {best:>10,.0f} msg/s ({best * 100 / 1e6:.1f} MB/s), "
              f"best of {rounds}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--transports", action="store_true",
                    help="only compare in-process and network replication (embedded cluster)")
    args = ap.parse_args()
    if args.transports:
        transports(args.messages, args.rounds)
        return
    throughput(args.messages)
    times = failover_once(args.rounds)
    print(f"failover (leader stop -> first acks=all record on the new leader): "
          f"median {statistics.median(times):.0f} ms, max {max(times):.0f} ms over {len(times)} rounds")


if __name__ == "__main__":
    main()
