"""``minikafka fakeusers``: produce fake sign-up events to a topic, at a steady rate.

The producer of the course's ``fakeusers`` pipeline as a command. Each record is a
JSON sign-up event from ``kafka_course.fakeusers`` keyed by its user id, sent with
confluent-kafka and the Java client's partitioner (murmur2), so the same key lands
in the same partition as with Kafka's own tools.

    minikafka fakeusers --topic fakeusers --count 1000 --rate 50 --seed 7
    minikafka fakeusers --topic fakeusers --locale es_ES        # until Ctrl-C, 5 per second

It works against any Kafka cluster. Every record is acknowledged before it exits. The records
go to stdout, one JSON object a line, and nothing else does: the live rate (on a terminal) and
the one closing summary go to stderr.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from .common import add_bootstrap, fail, parse_pairs, client_settings

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Message, Producer


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minikafka fakeusers",
                                description="Produce fake sign-up events (JSON, keyed by user id).")
    add_bootstrap(p)
    p.add_argument("--topic", default="fakeusers", help="topic to write to (default: fakeusers)")
    p.add_argument("--count", type=int, metavar="N", help="how many records to send (default: until Ctrl-C)")
    p.add_argument("--rate", type=float, default=5.0, metavar="R",
                   help="records per second (default: 5; 0 sends as fast as possible)")
    p.add_argument("--seed", type=int, help="make the users reproducible (same seed, same people)")
    p.add_argument("--locale", metavar="LOCALE[,LOCALE...]",
                   help="Faker locale(s), e.g. es_ES (default: a mix of seven countries)")
    p.add_argument("--quiet", action="store_true", help="do not print each record")
    p.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                   help="how long to wait for the broker (default: 10)")
    p.add_argument("--producer-property", action="append", metavar="NAME=VALUE",
                   help="a librdkafka producer setting, e.g. acks=all, linger.ms=20")
    return p


def check_arguments(args: argparse.Namespace) -> dict[str, int]:
    """Validate what argparse cannot; returns the locale weights."""
    from ..fakeusers import parse_locales
    if args.count is not None and args.count < 0:
        fail(f"--count must be 0 or more, not {args.count}.")
    if args.rate < 0:
        fail(f"--rate must be 0 (as fast as possible) or a positive number of records per second, not {args.rate:g}.")
    try:
        return parse_locales(args.locale)
    except ValueError as e:
        fail(str(e))


def connect(args: argparse.Namespace) -> Producer:
    """A producer that has already reached the cluster, or a one-sentence failure."""
    from confluent_kafka import KafkaException, Producer
    problems: list[str] = []
    conf = {**client_settings(args.bootstrap_server), "partitioner": "murmur2_random", "linger.ms": 5,
            "log_level": 0, "error_cb": lambda err: problems.append(err.str())}
    conf.update(parse_pairs(args.producer_property, "--producer-property"))
    try:
        producer = Producer(conf)
        producer.list_topics(args.topic, timeout=args.timeout)
    except KafkaException as e:
        reason = problems[-1] if problems else e.args[0].str()
        fail(f"Cannot reach a broker at {args.bootstrap_server} within {args.timeout:g} s ({reason}); "
             f"is Kafka running there?")
    except ValueError as e:  # an unknown librdkafka setting
        fail(f"Bad producer setting: {e}.")
    return producer


class Status:
    """A one-line live display of the rate on stderr, rewritten in place. Only on a terminal, and only
    when the records do not go to that terminal too: there it would land in the middle of the JSON."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.last = 0.0
        self.width = 0

    @classmethod
    def for_run(cls, records_printed: bool) -> Status:
        return cls(sys.stderr.isatty() and not (records_printed and sys.stdout.isatty()))

    def update(self, sent: int, rate: float) -> None:
        now = time.monotonic()
        if self.enabled and now - self.last >= 1.0:
            self.last = now
            line = f"sent {sent:,} records, {rate:,.1f} records/s"
            self.width = max(self.width, len(line))
            print(f"\r{line:<{self.width}}", end="", file=sys.stderr, flush=True)

    def clear(self) -> None:
        """Erase the live line: the summary that follows is the only one."""
        if self.enabled and self.width:
            print(f"\r{' ' * self.width}\r", end="", file=sys.stderr, flush=True)


def send(producer: Producer, topic: str, key: bytes, value: bytes,
         on_delivery: Callable[[KafkaError | None, Message], None], patience: float = 30.0) -> None:
    """Produce one record, waiting for room when the producer's queue is full."""
    deadline = time.monotonic() + patience
    while True:
        try:
            producer.produce(topic, key=key, value=value, on_delivery=on_delivery)
            producer.poll(0)
            return
        except BufferError:  # full queue: let deliveries complete, then try again
            if time.monotonic() > deadline:
                fail(f"The producer's queue stayed full for {patience:g} s: the broker is not taking records.")
            producer.poll(0.1)


def main(argv: list[str]) -> int:
    from ..fakeusers import FakeUsers, Pacer, key_of, serialize
    args = build_parser().parse_args(argv)
    locales = check_arguments(args)
    producer = connect(args)
    failures: list[str] = []

    def on_delivery(err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            failures.append(err.str())

    users = FakeUsers(seed=args.seed, locales=locales)
    pacer, status = Pacer(args.rate), Status.for_run(records_printed=not args.quiet)
    sent = 0
    try:
        while args.count is None or sent < args.count:
            pacer.wait(sent)
            event = next(users)
            send(producer, args.topic, key_of(event), serialize(event), on_delivery)
            sent += 1
            if not args.quiet:
                print(serialize(event).decode("utf-8"), flush=args.rate > 0)
            status.update(sent, pacer.measured(sent))
    except KeyboardInterrupt:
        pass  # Ctrl-C is how an endless run stops: deliver what was sent, then report
    left = producer.flush(30)
    status.clear()
    if left:
        fail(f"{left} of {sent} record(s) were not acknowledged within 30 s. Is the broker still reachable?")
    if failures:
        fail(f"{len(failures)} of {sent} record(s) failed: {failures[0]}.")
    print(f"Sent {sent:,} records to {args.topic} ({pacer.measured(sent):,.1f} records/s).", file=sys.stderr)
    return 0
