"""A classic group's rebalance completes as soon as every known member has rejoined: no broker
timer sits between a JoinGroup and its answer. ``group.initial.rebalance.delay.ms`` holds only an
empty group's first rebalance, as in Kafka. Measured with librdkafka's own protocol log: the round
trips of the JoinGroup and SyncGroup requests it sent (what bench/room.py counts as the broker's
part of a join)."""

from __future__ import annotations

import logging
import re
import threading
import time
import uuid

import pytest
from confluent_kafka import Consumer

from tests.groups.helpers import create_topic, wait_until

pytestmark = pytest.mark.timeout(90)

RESPONSE = re.compile(r"Received (JoinGroup|SyncGroup)Response .* rtt ([0-9.]+)ms")


class Member(threading.Thread):
    """A classic consumer polling in a thread; ``trips`` lists (request, round trip in ms) in order."""

    def __init__(self, bootstrap: str, group: str, topic: str, **config):
        super().__init__(daemon=True)
        self.trips: list[tuple[str, float]] = []
        self.owned: set[int] = set()
        self.halt = threading.Event()
        logger = logging.getLogger(f"join-trips.{uuid.uuid4().hex}")
        logger.propagate, logger.level = False, logging.DEBUG
        logger.addHandler(self._Handler(self.trips))
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "classic",
                                  "auto.offset.reset": "earliest", "debug": "protocol", "logger": logger,
                                  "log_level": 7, **config})
        self.consumer.subscribe([topic], on_assign=self._assigned)
        self.start()

    class _Handler(logging.Handler):
        def __init__(self, trips: list):
            super().__init__(logging.DEBUG)
            self.trips = trips

        def emit(self, record: logging.LogRecord) -> None:
            if found := RESPONSE.search(record.getMessage()):
                self.trips.append((found.group(1), float(found.group(2))))

    def _assigned(self, consumer, partitions) -> None:
        self.owned = {p.partition for p in partitions}

    def run(self) -> None:
        while not self.halt.is_set():
            self.consumer.poll(0.05)
        self.consumer.close()

    def stop(self) -> None:
        self.halt.set()
        self.join(30)


def test_a_new_groups_first_member_is_answered_without_a_broker_side_wait(make_cluster, topic_name):
    bootstrap = make_cluster(in_memory=True).bootstrap_servers  # group.initial.rebalance.delay.ms=0
    create_topic(bootstrap, topic_name, 3)
    member = Member(bootstrap, "no-wait", topic_name)
    try:
        wait_until(lambda: member.owned == {0, 1, 2}, 30, "the lone member to own the topic")
        names = [name for name, _ in member.trips]
        assert names[:3] == ["JoinGroup", "JoinGroup", "SyncGroup"], member.trips  # KIP-394: the id, then the join
        # the coordinator's timers (its longest sleep is 30 s; a tick-driven rebalance waits for the
        # next deadline) would show here; the answers themselves take a few ms
        assert sum(ms for _, ms in member.trips[:3]) < 1000, member.trips
    finally:
        member.stop()


def test_the_initial_delay_holds_only_an_empty_groups_first_rebalance(make_cluster, topic_name):
    bootstrap = make_cluster(in_memory=True, config={"group.initial.rebalance.delay.ms": 2000}).bootstrap_servers
    create_topic(bootstrap, topic_name, 2)
    quick = {"heartbeat.interval.ms": 200, "session.timeout.ms": 6000}
    first = Member(bootstrap, "delayed", topic_name, **quick)
    second = None
    try:
        wait_until(lambda: first.owned == {0, 1}, 30, "the first member to own the topic")
        joined = [ms for name, ms in first.trips if name == "JoinGroup"]
        assert max(joined) >= 1800, first.trips  # the empty group waited for more members
        start = time.monotonic()
        second = Member(bootstrap, "delayed", topic_name, **quick)
        wait_until(lambda: len(first.owned) == len(second.owned) == 1, 30, "one partition each")
        # the second rebalance ends once the first member rejoins (its next heartbeat, 200 ms),
        # not after another 2 s
        assert max(ms for name, ms in second.trips if name == "JoinGroup") < 1500, second.trips
        assert time.monotonic() - start < 10
    finally:
        for member in (first, second):
            if member is not None:
                member.stop()
