"""Produce/consume throughput and acks=all latency, for confluent-kafka and kafka-python.

    python bench/bench_clients.py                       # starts `minikafka serve` in its own process
    python bench/bench_clients.py --bootstrap-server host:9092   # any Kafka cluster

Defaults follow the issue's target: one partition, 200,000 records of 100 bytes,
linger.ms=5, acks=1. Numbers are printed, not asserted: compare ratios measured in
one run on the same machine.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from _broker import broker


def create_topic(bootstrap: str, name: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic
    client = AdminClient({"bootstrap.servers": bootstrap})  # must outlive its futures
    client.create_topics([NewTopic(name, 1, 1)])[name].result(10)


def confluent_produce(bootstrap, topic, n, size) -> float:
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": 1, "enable.idempotence": False,
                  "queue.buffering.max.messages": 1_000_000})
    payload = b"x" * size
    start = time.perf_counter()
    for _ in range(n):
        try:
            p.produce(topic, payload)
        except BufferError:
            p.poll(0.01)
            p.produce(topic, payload)
    assert p.flush(60) == 0
    return time.perf_counter() - start


def confluent_consume(bootstrap, topic, n) -> float:
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench", "enable.auto.commit": False,
                  "fetch.max.bytes": 52428800, "max.partition.fetch.bytes": 10485760})
    c.assign([TopicPartition(topic, 0, 0)])
    got, start = 0, time.perf_counter()
    while got < n:
        got += len(c.consume(10000, 1.0))
    elapsed = time.perf_counter() - start
    c.close()
    return elapsed


def kafka_python_produce(bootstrap, topic, n, size) -> float:
    from kafka import KafkaProducer
    p = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, acks=1, batch_size=1 << 20,
                      enable_idempotence=False)
    payload = b"x" * size
    start = time.perf_counter()
    for _ in range(n):
        p.send(topic, payload)
    p.flush()
    elapsed = time.perf_counter() - start
    p.close()
    return elapsed


def kafka_python_consume(bootstrap, topic, n) -> float:
    from kafka import KafkaConsumer, TopicPartition
    c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, max_partition_fetch_bytes=10485760)
    tp = TopicPartition(topic, 0)
    c.assign([tp])
    c.seek(tp, 0)
    got, start = 0, time.perf_counter()
    while got < n:
        got += sum(len(v) for v in c.poll(timeout_ms=1000, max_records=100000).values())
    elapsed = time.perf_counter() - start
    c.close()
    return elapsed


def confluent_latency(bootstrap, topic, rounds) -> list[float]:
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    p.produce(topic, b"warm-up")
    p.flush(10)
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        p.produce(topic, b"x" * 100)
        p.flush(10)
        out.append((time.perf_counter() - start) * 1000)
    return out


def kafka_python_latency(bootstrap, topic, rounds) -> list[float]:
    from kafka import KafkaProducer
    p = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0)
    p.send(topic, b"warm-up").get(10)
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        p.send(topic, b"x" * 100).get(10)
        out.append((time.perf_counter() - start) * 1000)
    p.close()
    return out


def pct(values, q):
    return statistics.quantiles(values, n=100)[q - 1]


def report(name, n, size, produce_s, consume_s, lat):
    print(f"{name:15} produce {n / produce_s:>10,.0f} msg/s {n * size / produce_s / 1e6:6.1f} MB/s | "
          f"consume {n / consume_s:>10,.0f} msg/s {n * size / consume_s / 1e6:6.1f} MB/s | "
          f"acks=all p50 {pct(lat, 50):.2f} ms p99 {pct(lat, 99):.2f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bootstrap-server")
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--latency-rounds", type=int, default=2000)
    ap.add_argument("--clients", default="confluent,kafka-python")
    args = ap.parse_args()
    with broker(args.bootstrap_server) as bootstrap:
        print(f"broker {bootstrap}; {args.messages:,} records of {args.size} B, 1 partition, linger.ms=5, acks=1")
        for client in args.clients.split(","):
            topic = f"bench-{client}-{uuid.uuid4().hex[:6]}"
            create_topic(bootstrap, topic)
            if client == "confluent":
                p = confluent_produce(bootstrap, topic, args.messages, args.size)
                c = confluent_consume(bootstrap, topic, args.messages)
                lat = confluent_latency(bootstrap, topic + "-lat", args.latency_rounds)
            else:
                n = min(args.messages, 100_000)  # pure Python client: fewer records keeps the run short
                p = kafka_python_produce(bootstrap, topic, n, args.size) * args.messages / n
                c = kafka_python_consume(bootstrap, topic, n) * args.messages / n
                lat = kafka_python_latency(bootstrap, topic + "-lat", min(args.latency_rounds, 500))
            report(client, args.messages, args.size, p, c, lat)


if __name__ == "__main__":
    main()
