"""Check for lab 03: tune a producer to a throughput, latency, disk and durability budget.

The learner hands in ``SETTINGS``, a dict of librdkafka producer settings (``acks``,
``linger.ms``, ``batch.size``, ``batch.num.messages``, ``compression.type``, ...). The
check gives them to a confluent-kafka producer against its own embedded minikafka of
three brokers (replication factor 3, ``min.insync.replicas=2``) and measures four things,
each the way an operator would:

* **durability**: a leader crash right after the acknowledgement loses no acknowledged
  record. The followers are slowed down, so a record acknowledged by the leader alone
  (``acks=1``, or no acknowledgement at all with ``acks=0``) is not on them yet when the
  leader dies; only ``acks=all`` waits for the in-sync replicas.
* **throughput**: records acknowledged per second for a bulk load of order events.
* **disk**: bytes per record in the leader's log. Compression works on whole batches
  (the broker stores them as sent), so it needs both a codec and batches worth compressing.
* **latency**: the 95th percentile from ``produce()`` to the acknowledgement for a slow
  source (one record every 10 ms), where ``linger.ms`` is time every record waits.

The budgets come from runs on a loaded 2-core machine (``Budget`` says how); a near
miss of throughput or latency is measured a second time and the better run counts,
since a busy machine can slow any one run but never makes a wrong setting right.
"""

from __future__ import annotations

import json
import logging
import os
import random
import statistics
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..checks import Report
from ..client_logs import quiet
from ..i18n import _

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Message, Producer

    from minikafka.api import Cluster


@dataclass(frozen=True)
class Budget:
    """The order service's requirements. Measured with two checks at once on a 2-core machine
    already loaded by other work (load average 3 to 7): the reference settings (acks=all,
    linger.ms=10, zstd) gave 14,000 to 41,000 records/s, 39 bytes per record and a p95 of 23
    to 47 ms; one record per batch gave 150 to 700 records/s, no compression about 265 bytes
    per record, lz4 or snappy 69 to 93, linger.ms=500 a p95 of 492 ms and 1000 of 985 ms.
    Each budget sits at least twice from both the reference and the setting it must catch
    (throughput 2.8x and 7x, latency 4.3x and 2.5x, disk 3.3x and 2.1x)."""
    throughput: float = 5_000  # records/s acknowledged, bulk load
    latency_ms: float = 200  # p95 from produce() to acknowledgement, slow source
    bytes_per_record: float = 128  # in the leader's log


BUDGET = Budget()
RECORDS = 20_000  # the bulk load: order events of about 250 bytes of JSON
TRICKLE_RECORDS, TRICKLE_EVERY = 100, 0.010  # the slow source: one record every 10 ms
PROBE_RECORDS, FOLLOWER_DELAY_MS = 5, 300  # the crash test
_PURGED = (-152, -151)  # librdkafka's _PURGE_QUEUE, _PURGE_INFLIGHT: what the check itself cancelled


@dataclass
class Measurement:
    """What one run of the lab's workload showed about a set of producer settings."""
    acknowledged: int = 0  # durability probe: records the producer was told are stored
    unknown_offsets: int = 0  # ... acknowledged without an offset (nobody answered: acks=0)
    lost: int = 0  # ... acknowledged, then missing after the leader crashed
    delivered: int = 0  # bulk load
    seconds: float = 0.0
    records_per_batch: float = 0.0
    codecs: tuple[str, ...] = ()
    bytes_per_record: float = 0.0
    p95_ms: float = 0.0  # slow source
    p50_ms: float = 0.0
    errors: tuple[str, ...] = ()

    @property
    def throughput(self) -> float:
        return self.delivered / self.seconds if self.seconds else 0.0

    def __str__(self) -> str:
        if self.unknown_offsets:
            durability = _("  durability  {acknowledged} acknowledged before the leader crashed, {lost} of them lost "
                           "({unknown} without an offset)")
        else:
            durability = _("  durability  {acknowledged} acknowledged before the leader crashed, {lost} of them lost")
        return "\n".join([
            durability.format(acknowledged=self.acknowledged, lost=self.lost, unknown=self.unknown_offsets),
            _("  throughput  {throughput:,.0f} records/s ({delivered:,} acknowledged in {seconds:.2f} s)").format(
                throughput=self.throughput, delivered=self.delivered, seconds=self.seconds),
            _("  batches     {per_batch:,.1f} records per batch, compression {codecs}").format(
                per_batch=self.records_per_batch, codecs="/".join(self.codecs) or "-"),
            _("  disk        {size:,.0f} bytes per record in the leader's log").format(size=self.bytes_per_record),
            _("  latency     p50 {p50}, p95 {p95} from produce() to acknowledgement").format(
                p50=_ms(self.p50_ms), p95=_ms(self.p95_ms)),
        ] + [_("  error       {error}").format(error=e) for e in self.errors[:3]])


def _ms(value: float) -> str:
    return _("never acknowledged") if value == float("inf") else _("{ms:,.0f} ms").format(ms=value)


def orders(n: int, seed: int = 3) -> list[bytes]:
    """The workload: ``n`` order events as JSON, about 250 bytes each."""
    rng = random.Random(seed)
    products = ["guitar", "piano", "drums", "violin", "cello", "flute", "trumpet", "ukulele"]
    cities = ["Lisbon", "Porto", "Madrid", "Seville", "Lyon", "Berlin", "Ghent", "Turin"]
    start = 1_767_225_600_000
    return [json.dumps({
        "order_id": f"{rng.getrandbits(64):016x}", "customer_id": rng.randint(1, 5000),
        "email": f"customer-{rng.randint(1, 5000)}@example.com", "product": rng.choice(products),
        "quantity": rng.randint(1, 4), "unit_price": f"{rng.randint(100, 99999) / 100:.2f}", "currency": "EUR",
        "channel": rng.choice(["web", "store", "app"]), "city": rng.choice(cities),
        "created_at": start + i * 37, "status": "PLACED"}).encode() for i in range(n)]


# -- the cluster the check measures on ------------------------------------------------------------
@contextmanager
def _cluster() -> Iterator[Cluster]:
    """Three brokers, every topic on all three, acks=all needing two of them."""
    from minikafka.api import Cluster
    cluster = Cluster(brokers=3, config={"min.insync.replicas": 2, "group.initial.rebalance.delay.ms": 0}).start()
    try:
        yield cluster
    finally:
        cluster.stop()


def _producer(cluster: Cluster, settings: Mapping[str, Any]) -> Producer:
    from confluent_kafka import Producer
    return Producer(quiet({**settings, "bootstrap.servers": cluster.bootstrap_servers}))


def _close(producer: Producer) -> None:
    producer.purge()
    producer.flush(1)
    producer.close()


def _topic(cluster: Cluster, name: str, partitions: int) -> str:
    topic = f"{name}-{os.urandom(3).hex()}"
    cluster.create_topic(topic, partitions=partitions, replication_factor=3)
    return topic


# -- the four measurements --------------------------------------------------------------------------
def _bulk(cluster: Cluster, settings: Mapping[str, Any], records: list[bytes],
          window: float) -> tuple[int, float, list[str], str]:
    """Send every record as fast as the producer takes them; count what is acknowledged in ``window`` s."""
    topic = _topic(cluster, "bulk", 3)
    counts = [0]
    errors: list[str] = []

    def on_delivery(err: KafkaError | None, _msg: Message) -> None:
        if err is None:
            counts[0] += 1
        elif len(errors) < 3 and err.code() not in _PURGED:
            errors.append(err.str())

    producer = _producer(cluster, settings)
    producer.list_topics(topic, timeout=10)
    start = time.perf_counter()
    for record in records:
        while time.perf_counter() - start < window:
            try:
                producer.produce(topic, record, on_delivery=on_delivery)
                break
            except BufferError:  # the producer's queue is full: let it send
                producer.poll(0.01)
        producer.poll(0)
    unfinished = producer.flush(max(0.0, window - (time.perf_counter() - start)))
    seconds = window if unfinished else time.perf_counter() - start
    delivered = counts[0]
    _close(producer)
    return delivered, seconds, errors, topic


def _stored(cluster: Cluster, topic: str) -> tuple[int, int, int, tuple[str, ...]]:
    """Bytes, batches, records and compression codecs in the leaders' segment files."""
    from minikafka.api import COMPRESSION_NAMES
    size = batches = records = 0
    codecs: set[str] = set()
    for segments in cluster.segments(topic).values():
        for segment in segments:
            for header in _batch_headers(segment["path"]):
                size, batches, records = size + header.size, batches + 1, records + header.record_count
                codecs.add(COMPRESSION_NAMES.get(header.compression, str(header.compression)))
    return size, batches, records, tuple(sorted(codecs))


def _batch_headers(path: str) -> list:
    from minikafka.api import BatchHeader, scan_batches
    fd = os.open(path, os.O_RDONLY)
    try:
        return [BatchHeader.parse(batch) for _, batch in scan_batches(lambda pos, n: os.pread(fd, n, pos),
                                                                      os.fstat(fd).st_size)]
    finally:
        os.close(fd)


def _trickle(cluster: Cluster, settings: Mapping[str, Any]) -> list[float]:
    """Milliseconds from produce() to acknowledgement for a source sending one record every 10 ms."""
    topic = _topic(cluster, "trickle", 1)
    producer = _producer(cluster, settings)
    producer.produce(topic, b"warm-up")
    producer.flush(10)
    latencies: dict[int, float] = {}
    for i, record in enumerate(orders(TRICKLE_RECORDS, seed=9)):
        sent = time.perf_counter()
        producer.produce(topic, record,  # mypy cannot infer a lambda whose defaults bind i and t
                         on_delivery=lambda err, _m, i=i, t=sent: latencies.__setitem__(  # type: ignore[misc]
                             i, (time.perf_counter() - t) * 1000 if err is None else float("inf")))
        producer.poll(0)
        time.sleep(TRICKLE_EVERY)
    deadline = time.monotonic() + 2  # no flush(): it would send a lingering batch at once
    while len(latencies) < TRICKLE_RECORDS and time.monotonic() < deadline:
        producer.poll(0.02)
    _close(producer)
    return sorted(list(latencies.values()) + [float("inf")] * (TRICKLE_RECORDS - len(latencies)))


def _crash_probe(cluster: Cluster, settings: Mapping[str, Any]) -> tuple[int, int, int]:
    """Acknowledged, acknowledged without offset, and lost records when the leader crashes after the acks."""
    topic = _topic(cluster, "durable", 1)
    leader = cluster.partition_state(topic)["leader"]
    followers = [b for b in cluster.live_brokers if b != leader]
    producer = _producer(cluster, settings)
    producer.list_topics(topic, timeout=10)
    for b in followers:
        cluster.slow_broker(b, FOLLOWER_DELAY_MS)
    acked: list[tuple[bytes | None, int | None]] = []
    for i in range(PROBE_RECORDS):
        producer.produce(topic, f"order {i}".encode(), on_delivery=lambda err, m: acked.append(
            (m.value(), m.offset() if m.offset() is not None and m.offset() >= 0 else None))  # type: ignore[operator]
            if err is None else None)  # (mypy does not narrow the second m.offset() by the first)
    producer.flush(15)
    cluster.crash_broker(leader)
    _close(producer)
    for b in followers:
        cluster.slow_broker(b, 0)
    stored = _read_after_failover(cluster, topic, leader)
    lost = sum(1 for value, _ in acked if value not in stored)
    return len(acked), sum(1 for _, offset in acked if offset is None), lost


def _read_after_failover(cluster: Cluster, topic: str, old_leader: int) -> set[bytes | None]:
    from confluent_kafka import Consumer, TopicPartition
    deadline = time.monotonic() + 10
    while cluster.partition_state(topic)["leader"] in (old_leader, -1) and time.monotonic() < deadline:
        time.sleep(0.05)
    consumer = Consumer(quiet({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "lab03-reader",
                               "enable.auto.commit": False, "enable.partition.eof": True}))
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: set[bytes | None] = set()
    try:
        while time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            error = msg.error()
            if error is None:
                values.add(msg.value())
            elif error.code() == -191:  # _PARTITION_EOF: read it all
                break
    finally:
        consumer.close()
    return values


# -- putting it together ------------------------------------------------------------------------------
def measure(settings: Mapping[str, Any], *, records: int = RECORDS, show: bool = True) -> Measurement:
    """Run the lab's workload once with these producer settings and return (and print) what it showed."""
    settings = dict(settings)
    m = Measurement()
    with _quiet_crash(), _cluster() as cluster:
        _measure_bulk(cluster, settings, records, m)
        _measure_latency(cluster, settings, m)
        m.acknowledged, m.unknown_offsets, m.lost = _crash_probe(cluster, settings)  # last: it kills a broker
    if show:
        print(m)
    return m


def _measure_bulk(cluster: Cluster, settings: Mapping[str, Any], records: int, m: Measurement) -> None:
    delivered, seconds, errors, topic = _bulk(cluster, settings, orders(records), records / BUDGET.throughput)
    size, batches, stored, codecs = _stored(cluster, topic)
    m.delivered, m.seconds, m.errors = delivered, seconds, tuple(errors)
    m.records_per_batch = stored / batches if batches else 0.0
    m.codecs, m.bytes_per_record = codecs, size / stored if stored else 0.0


def _measure_latency(cluster: Cluster, settings: Mapping[str, Any], m: Measurement) -> None:
    latencies = _trickle(cluster, settings)
    m.p95_ms = latencies[int(0.95 * len(latencies)) - 1]
    m.p50_ms = statistics.median(latencies)


@contextmanager
def _quiet_crash() -> Iterator[None]:
    """The crashed broker's connections end abruptly; asyncio's complaints about them are expected."""
    log = logging.getLogger("asyncio")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(level)


def _again(settings: Mapping[str, Any], records: int, m: Measurement) -> Measurement:
    """A near miss gets a second run on a fresh cluster; the better result of each kind counts."""
    near_throughput = BUDGET.throughput / 2 <= m.throughput < BUDGET.throughput
    near_latency = BUDGET.latency_ms < m.p95_ms <= 2.5 * BUDGET.latency_ms
    if not (near_throughput or near_latency):
        return m
    print("  " + _("a near miss: measuring throughput and latency once more (a busy machine can slow one run)"))
    with _quiet_crash(), _cluster() as cluster:
        second = Measurement()
        if near_throughput:
            _measure_bulk(cluster, settings, records, second)
            if second.throughput > m.throughput:
                m.delivered, m.seconds = second.delivered, second.seconds
        if near_latency:
            _measure_latency(cluster, settings, second)
            m.p95_ms, m.p50_ms = min(m.p95_ms, second.p95_ms), min(m.p50_ms, second.p50_ms)
    return m


def check(settings: Mapping[str, Any], *, records: int = RECORDS) -> Measurement | None:
    """Measure ``settings`` on the lab's workload and compare with the budgets; raise ``CheckFailed`` if over."""
    with Report(_("Lab 03 · a producer tuned to its budget")) as report:
        ok, m = report.attempt(lambda: measure(settings, records=records, show=False), what=_("Your settings"))
        if not ok:
            return None
        m = _again(dict(settings), records, m)
        print(m)
        _judge_durability(report, m)
        _judge_throughput(report, m, records)
        _judge_disk(report, m)
        _judge_latency(report, m)
        return m
    return None


def _judge_durability(report: Report, m: Measurement) -> None:
    if m.unknown_offsets:
        expected = _("{lost} of {acknowledged} records the producer counted as sent were lost when the leader "
                     "crashed, and {unknown} came back without an offset: nobody acknowledged them (that is "
                     "acks=0). The order service needs an acknowledgement that survives a leader crash.")
    else:
        expected = _("{lost} of {acknowledged} acknowledged records were lost when the leader crashed right after "
                     "acknowledging them: the acknowledgement came before the followers had the records. Ask for "
                     "an acknowledgement from every in-sync replica.")
    if not m.lost:
        expected = _("only {acknowledged} of {probe} records were acknowledged in the crash test (errors: "
                     "{errors}).")
    report.check(m.acknowledged == PROBE_RECORDS and m.lost == 0,
                 _("durable: all {acknowledged} acknowledged records survived a leader crash").format(
                     acknowledged=m.acknowledged),
                 expected.format(lost=m.lost, acknowledged=m.acknowledged, unknown=m.unknown_offsets,
                                 probe=PROBE_RECORDS, errors=", ".join(m.errors) or _("none")))


def _judge_throughput(report: Report, m: Measurement, records: int) -> None:
    if m.records_per_batch and m.records_per_batch < 20:
        expected = _("throughput {throughput:,.0f} records/s is below the budget of {budget:,.0f}: {delivered:,} of "
                     "{records:,} records were acknowledged in {seconds:.1f} s. The broker received {per_batch:.1f} "
                     "records per batch: every batch is a request that waits for three replicas, so few records "
                     "per batch means few records per second. Let the producer put many records in each batch.")
    else:
        expected = _("throughput {throughput:,.0f} records/s is below the budget of {budget:,.0f}: {delivered:,} of "
                     "{records:,} records were acknowledged in {seconds:.1f} s.")
    report.check(m.throughput >= BUDGET.throughput,
                 _("throughput {throughput:,.0f} records/s (budget {budget:,.0f})").format(
                     throughput=m.throughput, budget=BUDGET.throughput),
                 expected.format(throughput=m.throughput, budget=BUDGET.throughput, delivered=m.delivered,
                                 records=records, seconds=m.seconds, per_batch=m.records_per_batch))


def _judge_disk(report: Report, m: Measurement) -> None:
    if m.codecs == ("none",) or not m.codecs:
        expected = _("the log takes {size:,.0f} bytes per record, over the budget of {budget:,.0f}. The batches are "
                     "stored uncompressed; JSON repeats its field names in every record.")
    else:
        expected = _("the log takes {size:,.0f} bytes per record, over the budget of {budget:,.0f}. The batches are "
                     "compressed ({codecs}) but hold {per_batch:.1f} records each: a codec finds little to share "
                     "in a small batch.")
    report.check(0 < m.bytes_per_record <= BUDGET.bytes_per_record,
                 _("disk {size:,.0f} bytes per record (budget {budget:,.0f})").format(
                     size=m.bytes_per_record, budget=BUDGET.bytes_per_record),
                 expected.format(size=m.bytes_per_record, budget=BUDGET.bytes_per_record,
                                 codecs="/".join(m.codecs), per_batch=m.records_per_batch))


def _judge_latency(report: Report, m: Measurement) -> None:
    report.check(m.p95_ms <= BUDGET.latency_ms,
                 _("latency p95 {p95} for a slow source (budget {budget:,.0f} ms)").format(
                     p95=_ms(m.p95_ms), budget=BUDGET.latency_ms),
                 _("95% of the slow source's records took up to {p95} to be acknowledged, over the budget of "
                   "{budget:,.0f} ms (median {p50}). When records arrive one by one, every record waits for its "
                   "batch to be sent: how long may a batch wait for company?").format(
                     p95=_ms(m.p95_ms), budget=BUDGET.latency_ms, p50=_ms(m.p50_ms)))
