"""One simulated learner of bench/room.py: the clients a notebook opens (an idempotent acks=all
producer, a transactional producer, an admin client, consumers of a group that come and go, a
share consumer) driven in cells, with pauses between them like a person reading, and a burst
whenever the instructor says "run the next cell".

Each operation's latency goes into ``Recorder`` (seconds), each failure into its error count."""

from __future__ import annotations

import logging
import random
import re
import threading
import time
from collections import defaultdict

QUIET = {"log_level": 0}  # librdkafka's own log lines are not figures; errors are counted from error_cb


class Recorder:
    """Latencies and errors of one worker process, merged by room.py at the end."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.samples: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.notes: set[str] = set()

    def add(self, op: str, seconds: float) -> None:
        with self.lock:
            self.samples[op].append(seconds)

    def error(self, what: str) -> None:
        with self.lock:
            self.errors[what[:120]] += 1

    def timed(self, op: str, call, *args, **kwargs):
        start = time.perf_counter()
        try:
            result = call(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - every failure of a client call is a figure of the room
            self.error(f"{op}: {type(exc).__name__}: {exc}")
            return None
        self.add(op, time.perf_counter() - start)
        return result


class RoundTrips(logging.Handler):
    """The broker's part of a join, from librdkafka's own protocol log (``debug=protocol``): the
    round-trip times of the group requests it sent until the member got its partitions
    (JoinGroup and SyncGroup, or ConsumerGroupHeartbeat). The client's own steps in between
    (connecting to the coordinator, its timers) are left out."""

    PATTERN = re.compile(r"Received (JoinGroup|SyncGroup|ConsumerGroupHeartbeat)Response .* rtt ([0-9.]+)ms")

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.total_ms, self.counting = 0.0, True

    def emit(self, record: logging.LogRecord) -> None:
        if self.counting and (found := self.PATTERN.search(record.getMessage())):
            self.total_ms += float(found.group(2))


class Member(threading.Thread):
    """A group consumer polling in its own thread (as a notebook's loop would); ``owned`` is its
    current assignment."""

    def __init__(self, rec: Recorder, conf: dict, topic: str):
        # the consumer protocol hands partitions out one by one; classic (range) hands over a whole set
        super().__init__(daemon=True)
        from confluent_kafka import Consumer
        self.rec, self.owned, self.halt = rec, frozenset(), threading.Event()
        self.incremental = conf["group.protocol"] == "consumer"
        self.trips: RoundTrips | None = None
        if conf.pop("round_trips", False):
            self.trips = RoundTrips()
            logger = logging.getLogger(f"room.{id(self)}")
            logger.propagate, logger.level = False, logging.DEBUG
            logger.addHandler(self.trips)
            conf = {**conf, "debug": "protocol", "logger": logger, "log_level": 7}
        self.consumer = Consumer(conf)
        # the callbacks, not assignment() after poll: poll serves a rebalance and goes on waiting
        self.consumer.subscribe([topic], on_assign=self._assigned, on_revoke=self._revoked, on_lost=self._revoked)
        self.start()

    def _assigned(self, consumer, partitions) -> None:
        got = frozenset(tp.partition for tp in partitions)
        if self.trips is not None and got and self.trips.counting:
            self.trips.counting = False
            self.rec.add(f"join, broker's part ({'consumer' if self.incremental else 'classic'})",
                         self.trips.total_ms / 1000)
        self.owned = self.owned | got if self.incremental else got

    def _revoked(self, consumer, partitions) -> None:
        gone = frozenset(tp.partition for tp in partitions)
        self.owned = self.owned - gone if self.incremental else frozenset()

    def run(self) -> None:
        while not self.halt.is_set():
            msg = self.consumer.poll(0.1)
            if msg is not None and msg.error() is not None and msg.error().code() != -191:  # -191: partition EOF
                self.rec.error(f"consume: {msg.error().name()}")
        self.consumer.close()

    def stop(self) -> None:
        self.halt.set()
        self.join(30)


class Learner:
    PARTITIONS = 3

    def __init__(self, rec: Recorder, bootstrap: str, run: str, index: int, share: bool, consumer_protocol: bool):
        self.rec, self.bootstrap, self.index = rec, bootstrap, index
        self.name = f"room-{run}-l{index}"
        self.topic = f"{self.name}-events"
        self.share = share
        self.protocol = "consumer" if consumer_protocol and index % 2 else "classic"
        self.members: list[Member] = []
        self.group_round = 0
        self.group = ""
        self.rng = random.Random(index)

    def _base(self) -> dict:
        return {"bootstrap.servers": self.bootstrap, "error_cb": self._client_error, **QUIET}

    def _client_error(self, err) -> None:
        self.rec.error(f"client: {err.name()}")

    # setup: what the first cells of a notebook do
    def open(self) -> None:
        from confluent_kafka import Producer
        from confluent_kafka.admin import AdminClient
        self.admin = AdminClient(self._base())
        self.create_topic(self.topic, "create_topic (a new admin client)")
        self.producer = Producer({**self._base(), "enable.idempotence": True, "acks": "all"})
        self.txn = Producer({**self._base(), "transactional.id": f"{self.name}-txn"})
        self.rec.timed("init_transactions", self.txn.init_transactions, 30)
        self.share_consumer = self._open_share() if self.share else None

    def _open_share(self):
        from confluent_kafka import ShareConsumer
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
        group = f"{self.name}-share"
        entry = ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
        resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[entry])
        try:
            self.admin.incremental_alter_configs([resource])[resource].result(30)
            consumer = ShareConsumer({**self._base(), "group.id": group})
            consumer.subscribe([self.topic])
        except Exception as exc:  # noqa: BLE001 - a broker without share groups: the room runs without them
            self.rec.notes.add(f"share groups skipped: {type(exc).__name__}: {exc}")
            self.share = False
            return None
        return consumer

    def create_topic(self, topic: str, op: str = "create_topic") -> None:
        from confluent_kafka.admin import NewTopic
        futures = self.admin.create_topics([NewTopic(topic, self.PARTITIONS, 1)], operation_timeout=30)
        self.rec.timed(op, futures[topic].result, 30)

    # the cells
    def cell(self) -> None:
        kind = self.rng.choices(["produce", "group", "txn", "admin", "metadata", "share", "new_topic"],
                                [30, 20, 12, 12, 10, 10 if self.share else 0, 6])[0]
        getattr(self, f"cell_{kind}")()

    def cell_produce(self, topic: str | None = None, count: int = 0, op: str = "produce") -> None:
        topic = topic or self.topic
        for i in range(count or self.rng.randint(5, 40)):
            start = time.perf_counter()
            self.producer.produce(topic, key=f"user-{i % 7}", value=b"x" * self.rng.randint(20, 400),
                                  on_delivery=lambda err, msg, start=start: self._delivered(err, start, op))
        self.producer.flush(30)

    def _delivered(self, err, start: float, op: str) -> None:
        if err is not None:
            self.rec.error(f"{op}: {err.name()}")
        else:
            self.rec.add(op, time.perf_counter() - start)

    def cell_txn(self) -> None:
        def one_transaction() -> None:
            self.txn.begin_transaction()
            for i in range(self.rng.randint(2, 10)):
                self.txn.produce(self.topic, key=f"order-{i}", value=b'{"total": 12.5}')
            self.txn.commit_transaction(30)
        self.rec.timed("transaction", one_transaction)

    def cell_admin(self) -> None:
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
        resource = ConfigResource(ResourceType.TOPIC, self.topic)
        self.rec.timed("describe_configs", lambda: self.admin.describe_configs([resource])[resource].result(30))
        entry = ConfigEntry("retention.ms", str(self.rng.randint(3_600_000, 86_400_000)),
                            incremental_operation=AlterConfigOpType.SET)
        change = ConfigResource(ResourceType.TOPIC, self.topic, incremental_configs=[entry])
        self.rec.timed("alter_configs", lambda: self.admin.incremental_alter_configs([change])[change].result(30))
        if self.group:
            self.rec.timed("describe_group",
                           lambda: self.admin.describe_consumer_groups([self.group])[self.group].result(30))

    def cell_metadata(self) -> None:
        self.rec.timed("metadata", self.admin.list_topics, self.topic, timeout=30)

    def cell_new_topic(self) -> None:
        topic = f"{self.name}-t{self.rng.randrange(10**6)}"
        self.create_topic(topic)
        self.cell_produce(topic, 10, "produce to a new topic")  # includes the client's metadata lookup

    def cell_share(self) -> None:
        self.cell_produce(count=5)
        start, deadline = time.perf_counter(), time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                messages = self.share_consumer.poll(0.1)
            except Exception as exc:  # noqa: BLE001 - a failed poll is counted, not raised
                self.rec.error(f"share: {type(exc).__name__}: {exc}")
                return
            if messages:
                self.rec.add("share_poll", time.perf_counter() - start)
                return
        self.rec.notes.add("share: a poll got nothing within 15 s (the group starts at the latest offset)")

    # consumer groups: members come and go
    def cell_group(self) -> None:
        size = 2 + self.index % 2
        if not self.members:
            self.group_round += 1
            self.group = f"{self.name}-g{self.group_round}"
            self._add_member("join")
        elif (len(self.members) < size and self.group_round % 3 != 0) or len(self.members) == 1:
            self._add_member("rebalance")
        else:
            self.members.pop(self.rng.randrange(len(self.members))).stop()
            self._settle("rebalance")
            if self.rng.random() < 0.4:
                self.close_group()

    def _add_member(self, op: str) -> None:
        conf = {**self._base(), "group.id": self.group, "group.protocol": self.protocol,
                "auto.offset.reset": "earliest", "enable.partition.eof": False}
        if self.protocol == "classic":
            conf.update({"heartbeat.interval.ms": 1000, "session.timeout.ms": 10000})
        if op == "join":
            conf["round_trips"] = True
        start = time.perf_counter()
        self.members.append(Member(self.rec, conf, self.topic))
        self._settle(op, start)

    def _settle(self, op: str, start: float | None = None) -> None:
        """Time until every member owns partitions and together they own the topic, once."""
        start = start or time.perf_counter()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            owned = [m.owned for m in self.members]
            whole = len(frozenset().union(*owned)) == self.PARTITIONS == sum(map(len, owned))
            if all(owned) and whole:
                self.rec.add(f"{op} ({self.protocol})", time.perf_counter() - start)
                return
            time.sleep(0.002)
        self.rec.error(f"{op} ({self.protocol}): the group did not settle within 60 s")

    def close_group(self) -> None:
        for member in self.members:
            member.halt.set()
        for member in self.members:
            member.stop()
        self.members = []

    def close(self) -> None:
        self.close_group()
        self.producer.flush(10)
        if self.share_consumer is not None:
            self.share_consumer.close()


def live(learner: Learner, start_at: float, stop_at: float, burst_every: float, think: float) -> None:
    """Cells until ``stop_at`` (wall clock, shared by all processes): a pause of ``think`` seconds
    on average between cells, and every ``burst_every`` seconds the whole room runs a cell at once
    (within half a second)."""
    rng = random.Random(learner.index * 7919)
    time.sleep(max(0.0, start_at - time.time()))
    while time.time() < stop_at:
        now = time.time()
        next_burst = start_at + burst_every * (int((now - start_at) / burst_every) + 1) + rng.uniform(0, 0.5)
        wake = min(next_burst, now + rng.expovariate(1 / think))
        if wake >= stop_at:
            break
        time.sleep(max(0.0, wake - time.time()))
        try:
            learner.cell()
        except Exception as exc:  # noqa: BLE001 - a cell that fails is an error of the room, counted
            learner.rec.error(f"cell: {type(exc).__name__}: {exc}")
