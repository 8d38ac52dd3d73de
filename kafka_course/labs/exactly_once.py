"""Check for lab 08: a consume-transform-produce pipeline whose output holds each input once.

``prepare()`` fills an input topic with orders, written in transactions the way the
shop's own service writes them, with aborted transactions (cancelled orders) between
them, and returns a ``Lab``. The learner writes
``worker(consumer, producer, lab)``: read orders, write ``lab.transform(value)`` to
``lab.output``, and make progress durable, until ``lab.finished()``.

``lab.run(worker, consumer_settings, producer_settings)`` builds a confluent-kafka
consumer and producer from the learner's settings and runs the worker, crashing it
again and again. The producer handed to the worker is a ``CrashingProducer``: it behaves
like the real one but raises ``Crash`` right after some calls (in the middle of a batch
of ``produce`` calls, or just after a ``flush``, ``send_offsets_to_transaction`` or
``commit_transaction`` returned). The consumer handed to it is a ``CrashingConsumer``: it
dies right after the first ``commit()`` that returns while a batch is produced but its
transaction not yet committed, the moment that loses orders when the input offsets are
committed outside the transaction. The crashed instance is abandoned without committing
anything and a new one starts, with the same settings. The consumer starts from the Java
client's defaults (``read_uncommitted``), so the learner's isolation level decides whether
cancelled orders reach the output.

``check(lab)`` reads the output with ``read_committed``, as every downstream service
should, and counts each order and each cancelled one; then it looks at how the output was
written (``transactional_log``: transactional batches and commit markers), so a pipeline
that deduplicates by hand with a plain producer does not pass.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..checks import Report
from ..guarantees import Crash, CrashPlan, read_topic, transform
from ..i18n import _

if TYPE_CHECKING:
    from confluent_kafka import Consumer, Producer

    from .transactional_log import Written

_BOUNDARIES = ("flush", "send_offsets_to_transaction", "commit_transaction")

# The lab's consumer starts from the Java client's defaults, where isolation.level is
# read_uncommitted (librdkafka's own default is read_committed): a setting that differs
# between clients is one to set explicitly. A static member id lets a restarted worker
# take its partitions back at once.
CONSUMER_DEFAULTS = {"isolation.level": "read_uncommitted", "group.instance.id": "lab08-worker",
                     "auto.offset.reset": "earliest", "session.timeout.ms": 6000}
TRANSACTION = 25  # input orders per transaction of the shop's own producer


class CrashingProducer:
    """A confluent-kafka Producer that dies right after some calls (see the module docstring)."""

    def __init__(self, producer: Producer, mid: CrashPlan, end: CrashPlan) -> None:
        self._producer, self._mid, self._end = producer, mid, end
        self._batch = False  # records produced since the last flush or commit

    def produce(self, *args: Any, **kwargs: Any) -> None:
        self._producer.produce(*args, **kwargs)
        self._batch = True
        try:
            self._mid.step()
        except Crash:
            raise Crash(_("in the middle of a batch")) from None

    def __getattr__(self, name: str) -> Any:
        real = getattr(self._producer, name)
        if name not in _BOUNDARIES:
            return real

        def call(*args: Any, **kwargs: Any) -> Any:
            result = real(*args, **kwargs)
            self.returned(name, self._end)
            return result
        return call

    def returned(self, name: str, plan: CrashPlan) -> None:
        """``name`` just returned: a step of ``plan`` if it ends a real batch (the crash comes now)."""
        finishing = self._batch
        self._batch = self._batch and name in ("send_offsets_to_transaction", "consumer.commit")
        try:
            if finishing:  # only the end of a real batch counts as a step
                plan.step()
        except Crash:
            raise Crash(_("right after {call}() returned").format(call=name)) from None


class CrashingConsumer:
    """A confluent-kafka Consumer that dies right after a ``commit()`` that returned while the
    producer's batch was not yet committed (see the module docstring)."""

    def __init__(self, consumer: Consumer, producer: CrashingProducer, plan: CrashPlan) -> None:
        self._consumer, self._producer, self._plan = consumer, producer, plan

    def commit(self, *args: Any, **kwargs: Any) -> Any:
        result = self._consumer.commit(*args, **kwargs)
        self._producer.returned("consumer.commit", self._plan)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._consumer, name)


@dataclass
class Lab:
    input: str
    output: str
    group: str
    bootstrap: str
    orders: int
    crashes: int
    time_limit: float
    cancelled: set[int] = field(default_factory=set)  # ids of the orders in aborted input transactions
    runs: int = 0
    crashed: int = 0
    started: float = field(default_factory=time.monotonic)
    # one crash right after the first consumer.commit() that returns before the batch's transaction commits
    input_commit: CrashPlan = field(default_factory=lambda: CrashPlan(1, 2, seed=13), repr=False)
    _abandoned: list = field(default_factory=list, repr=False)

    @staticmethod
    def transform(value: bytes) -> bytes:
        """The pipeline's business logic: an order in, the same order with its VAT out."""
        return transform(value)

    def finished(self) -> bool:
        """True once the group has committed every input offset, or time is up."""
        if time.monotonic() - self.started > self.time_limit:
            return True
        from ..clients import lag
        return sum(lag(self.group, self.input, bootstrap=self.bootstrap).values()) == 0

    def run(self, worker: Callable[[Any, Any, Lab], Any], consumer_settings: dict[str, Any],
            producer_settings: dict[str, Any]) -> None:
        """Run ``worker`` until the input is all committed, crashing and restarting it."""
        from confluent_kafka import Consumer, Producer

        from ..client_logs import quiet
        mid = CrashPlan(self.crashes - self.crashes // 2, self.orders // 2, seed=11)
        end = CrashPlan(self.crashes // 2, max(2, self.orders // 40), seed=12)
        self.started = time.monotonic()
        while self.runs < self.crashes + 20 and not self.finished():
            self.runs += 1
            # A crashed process commits nothing, so the lab's consumers never commit on their own.
            consumer = Consumer(quiet({**CONSUMER_DEFAULTS, "bootstrap.servers": self.bootstrap,
                                       "group.id": self.group, **consumer_settings, "enable.auto.commit": False}))
            producer = Producer(quiet({"bootstrap.servers": self.bootstrap, "partitioner": "murmur2_random",
                                       **producer_settings}))
            consumer.subscribe([self.input])
            crashing = CrashingProducer(producer, mid, end)
            try:
                worker(CrashingConsumer(consumer, crashing, self.input_commit), crashing, self)
            except Crash as crash:
                self.crashed += 1
                print("  " + _("crash {number}: the worker died {when}; a new one starts").format(
                    number=self.crashed, when=crash))
                producer.purge(in_queue=True, in_flight=False)
                self._abandoned.append(producer)  # a dead process sends nothing more
            finally:
                consumer.close()
        print("  " + _("{runs} runs, {crashes} crashes, {seconds:.1f} s").format(
            runs=self.runs, crashes=self.crashed, seconds=time.monotonic() - self.started))


def prepare(*, bootstrap: str | None = None, orders: int = 300, partitions: int = 3, crashes: int = 6,
            time_limit: float = 40) -> Lab:
    """An input topic of ``orders`` orders written in transactions, with some cancelled (aborted)
    transactions between them, an empty output topic and a fresh group."""
    from ..connection import current_bootstrap
    from ..clients import new_topic
    servers = bootstrap or current_bootstrap()
    source = new_topic("lab08-orders", partitions=partitions, bootstrap=servers)
    sink = new_topic("lab08-orders-with-vat", partitions=partitions, bootstrap=servers)
    cancelled = _write_orders(servers, source, orders)
    return Lab(source, sink, f"lab08-{uuid.uuid4().hex[:6]}", servers, orders, crashes, time_limit, cancelled)


def _write_orders(servers: str, topic: str, orders: int) -> set[int]:
    """The shop writes its orders in transactions; every other one is followed by a
    transaction that is aborted (a basket that was not paid). Returns the aborted ids."""
    from confluent_kafka import Producer

    from ..client_logs import quiet
    shop = Producer(quiet({"bootstrap.servers": servers, "transactional.id": f"shop-{uuid.uuid4().hex[:6]}",
                           "partitioner": "murmur2_random", "linger.ms": 5}))
    shop.init_transactions(30)
    cancelled: set[int] = set()
    for first in range(0, orders, TRANSACTION):
        _transaction(shop, topic, range(first, min(orders, first + TRANSACTION)), commit=True)
        if first // TRANSACTION % 2 == 0 and first + TRANSACTION < orders:  # the last transaction commits
            unpaid = range(orders + first, orders + first + 5)
            _transaction(shop, topic, unpaid, commit=False)
            cancelled.update(unpaid)
    return cancelled


def _transaction(shop: Producer, topic: str, ids: range, *, commit: bool) -> None:
    shop.begin_transaction()
    for i in ids:
        shop.produce(topic, json.dumps({"id": i, "amount_cents": 500 + 13 * i}).encode(), f"customer-{i % 23}")
    shop.flush(30)  # the records are in the log before the marker decides their fate
    (shop.commit_transaction if commit else shop.abort_transaction)(30)


def _uncommitted_records(lab: Lab, lag: dict[int, int]) -> int:
    """Committed records after the group's committed offsets. Lag alone overcounts: a log that
    ends in a transaction marker (or an aborted transaction) has offsets no consumer is given,
    and a consumer's position need not have moved past them when the pipeline stopped."""
    from confluent_kafka import Consumer, TopicPartition

    from ..client_logs import quiet
    from ..clients import committed
    behind = {p: n for p, n in lag.items() if n > 0}
    if not behind:
        return 0
    done = committed(lab.group, lab.input, bootstrap=lab.bootstrap)
    reader = Consumer(quiet({"bootstrap.servers": lab.bootstrap, "group.id": f"{lab.group}-audit",
                             "isolation.level": "read_committed", "enable.auto.commit": False}))
    try:
        reader.assign([TopicPartition(lab.input, p, done.get(p) or 0) for p in behind])
        found, idle = 0, 0
        while idle < 5:  # five empty polls in a row: the rest holds no record a consumer is given
            batch = reader.consume(500, 0.2)
            found += sum(1 for m in batch if m.error() is None)
            idle = 0 if batch else idle + 1
        return found
    finally:
        reader.close()


def check(lab: Lab) -> None:
    """Read the output as a read_committed consumer would and count each order; then look at
    how the output was written, and at the group's committed offsets."""
    from ..clients import lag
    from .transactional_log import written
    with Report(_("Lab 08 · an exactly-once pipeline")) as report:
        report.check(lab.crashed > 0, _("your pipeline was crashed {crashes} times and restarted").format(
                         crashes=lab.crashed),
                     _("the pipeline never crashed; run lab.run(worker, CONSUMER_SETTINGS, PRODUCER_SETTINGS) "
                       "first."))
        ids, wrong = _read_output(lab)
        _judge_orders(report, lab, ids, wrong)
        _judge_transactions(report, written(lab.bootstrap, lab.output))
        behind = _uncommitted_records(lab, lag(lab.group, lab.input, bootstrap=lab.bootstrap))
        report.check(behind == 0, _("the group's committed offsets reach the end of the input"),
                     _("{count} input records are not committed by the group; a restart would process them "
                       "again.").format(count=behind))


def _read_output(lab: Lab) -> tuple[Counter, list]:
    """Order id -> copies in the committed output, and the records that are not a transformed order."""
    ids: Counter = Counter()
    wrong: list = []  # order ids, or the values that are no order
    for record in read_topic(lab.bootstrap, lab.output, "read_committed", timeout=20):
        if record.value is None:  # a record without a value is no order (json.loads(None) landed here too)
            wrong.append(record.value)
            continue
        try:
            order = json.loads(record.value)
            ids[order["id"]] += 1
            if order.get("vat_cents") != round(order["amount_cents"] * 0.21):
                wrong.append(order["id"])
        except (TypeError, ValueError, KeyError):
            wrong.append(record.value)
    return ids, wrong


def _judge_orders(report: Report, lab: Lab, ids: Counter, wrong: list) -> None:
    cancelled = sorted(set(ids) & lab.cancelled)
    report.check(not cancelled, _("none of the {count} cancelled orders (aborted input transactions) is in the "
                                  "output").format(count=len(lab.cancelled)),
                 _("{count} cancelled orders are in the output (e.g. order {example}): the shop aborted the "
                   "transactions that wrote them, but your consumer read them anyway. A consumer reads aborted "
                   "records unless its isolation.level is read_committed (the Java client's default, used here, is "
                   "read_uncommitted).").format(count=len(cancelled), example=cancelled[0] if cancelled else ""))
    missing = sorted(set(range(lab.orders)) - set(ids))
    twice = sorted(i for i, n in ids.items() if n > 1)
    if lab.input_commit.crashed:
        lost = _("{count} orders are missing from the committed output (e.g. order {example}). Your worker crashed "
                 "right after consumer.commit() returned and before commit_transaction(): the group had moved past "
                 "orders whose output transaction was then aborted. Commit the input offsets inside the transaction "
                 "(send_offsets_to_transaction), not with consumer.commit().")
    else:
        lost = _("{count} orders are missing from the committed output (e.g. order {example}). Were their offsets "
                 "committed before their output was? Commit both in one transaction.")
    report.check(not missing, _("every one of the {count} orders is in the committed output").format(count=lab.orders),
                 lost.format(count=len(missing), example=missing[0] if missing else ""))
    report.check(not twice, _("no order is in the committed output twice"),
                 _("{count} orders are in the output more than once (e.g. order {example}). A crash between writing "
                   "the output and committing the offsets repeats the batch: send the offsets to the producer's "
                   "transaction (send_offsets_to_transaction) and commit them together.").format(
                     count=len(twice), example=twice[0] if twice else ""))
    report.check(not wrong, _("every output record is the transformed order"),
                 _("{count} output records are not lab.transform(input) (e.g. {example}).").format(
                     count=len(wrong), example=wrong[0] if wrong else ""))


def _judge_transactions(report: Report, log: Written) -> None:
    if log.how == "segments":
        seen = _("{transactional} of its {data} data batches are transactional and {markers} commit or abort "
                 "markers follow them").format(transactional=log.transactional_batches, data=log.data_batches,
                                               markers=log.markers)
    else:
        seen = _("{markers} offsets hold commit or abort markers").format(markers=log.markers)
    report.check(log.in_transactions, _("the output was written in transactions ({seen})").format(seen=seen),
                 _("the output was not written in transactions: {seen}. Counting right in this run is not enough: "
                   "without a transaction, a crash between writing and committing leaves records that every reader "
                   "sees, and the offsets move separately from the output. Give the producer a transactional.id "
                   "and write each batch, with its input offsets, in one transaction.").format(seen=seen))
