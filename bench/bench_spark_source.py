"""Records per second through the Python Kafka source for Spark (``kafka_course.spark``).

    python bench/bench_spark_source.py                      # starts `minikafka serve` in its own process
    python bench/bench_spark_source.py --records 100000 --partitions 3
    python bench/bench_spark_source.py --bootstrap-server host:9092   # any Kafka cluster

It fills a topic with sign-up events (a pool of Faker events with fresh user ids,
because Faker itself makes only a few thousand events per second), then times:

* a batch read of the whole topic (``spark.read ... .count()``);
* a streaming query with ``trigger(availableNow=True)`` that parses the JSON and
  counts per country into the memory sink (what notebook 11 does, at scale).

Spark's start-up is not in the numbers: a batch and a streaming query on a small
warm-up topic run first, so Python workers and the state store are already up.
Nothing is asserted: the numbers are printed.
"""

from __future__ import annotations

import argparse
import itertools
import shlex
import sys
import tempfile
import time
import uuid

from _broker import broker


def fill(bootstrap: str, topic: str, records: int, partitions: int) -> float:
    """Create the topic and produce ``records`` sign-ups; returns the seconds it took."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    from kafka_course.fakeusers import FakeUsers, key_of, serialize
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(15)
    pool = FakeUsers(seed=1, start=1_700_000_000, interval=0.01).take(2_000)
    producer = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random", "linger.ms": 20,
                         "queue.buffering.max.messages": 1_000_000})
    started = time.perf_counter()
    for i, event in zip(range(records), itertools.cycle(pool)):
        event = {**event, "user_id": str(uuid.UUID(int=i, version=4))}
        while True:
            try:
                producer.produce(topic, key=key_of(event), value=serialize(event))
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(120) == 0
    return time.perf_counter() - started


def timed(action) -> tuple[float, object]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


class Bench:
    """One Spark session reading one bootstrap address through the Python Kafka source."""

    def __init__(self, spark, bootstrap: str):
        from kafka_course.spark import register
        self.spark, self.bootstrap, self.fmt = spark, bootstrap, register(spark)

    def source(self, topic: str, stream: bool, **options: str):
        reader = (self.spark.readStream if stream else self.spark.read).format(self.fmt)
        return reader.options(**{"kafka.bootstrap.servers": self.bootstrap, "subscribe": topic,
                                 "startingOffsets": "earliest", **options}).load()

    def batch_count(self, topic: str) -> tuple[float, int]:
        return timed(lambda: self.source(topic, stream=False).count())

    def stream_count_per_country(self, topic: str, name: str) -> tuple[float, int]:
        """An availableNow query: parse the JSON, count per country into the memory sink."""
        from pyspark.sql import functions as F
        per_country = (self.source(topic, stream=True)
                       .select(F.from_json(F.col("value").cast("string"), "country string").alias("u"))
                       .groupBy("u.country").count())
        with tempfile.TemporaryDirectory() as checkpoint:
            query = (per_country.writeStream.format("memory").queryName(name).outputMode("complete")
                     .option("checkpointLocation", checkpoint).trigger(availableNow=True))
            seconds, _ = timed(lambda: query.start().awaitTermination())
        return seconds, self.spark.sql(f"SELECT sum(count) FROM {name}").first()[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-server", help="use this cluster instead of starting minikafka serve")
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    print("command:", shlex.join([sys.executable, *sys.argv]))

    from kafka_course.spark import local_session
    with broker(args.bootstrap_server) as bootstrap:
        topic, warm_up = f"bench-signups-{uuid.uuid4().hex[:6]}", f"bench-warm-up-{uuid.uuid4().hex[:6]}"
        produce_s = fill(bootstrap, topic, args.records, args.partitions)
        print(f"produced {args.records:,} records to {args.partitions} partitions in {produce_s:.1f} s")
        fill(bootstrap, warm_up, 1_000, args.partitions)
        bench = Bench(local_session("bench-spark-source", cores=args.cores), bootstrap)

        bench.batch_count(warm_up)  # the first queries start Python workers, the state store...
        bench.stream_count_per_country(warm_up, "bench_warm_up")
        for label, (seconds, counted) in [("batch read", bench.batch_count(topic)),
                                          ("streaming query", bench.stream_count_per_country(topic, "bench"))]:
            assert counted == args.records, f"{label}: counted {counted} records, expected {args.records}"
            print(f"{label + ':':<17} {args.records / seconds:>10,.0f} records/s ({seconds:.1f} s)")
        print("(streaming query: availableNow, JSON parse + count per country into the memory sink)")
        bench.spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
