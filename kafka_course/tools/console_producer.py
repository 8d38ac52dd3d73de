"""``minikafka console-producer``: each line of stdin becomes one record.

Like kafka-console-producer.sh: ``--property parse.key=true --property
key.separator=:`` splits ``key:value`` lines. Every record is acknowledged before the
command exits, and a failed one is reported with its reason.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from .common import add_bootstrap, describe_client_error, fail, parse_pairs, client_settings

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Message


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minikafka console-producer", description="Produce lines from stdin.")
    add_bootstrap(p)
    p.add_argument("--topic", required=True)
    p.add_argument("--property", action="append", metavar="NAME=VALUE",
                   help="parse.key=true, key.separator=:, ignore.error=true (as in Kafka's tool)")
    p.add_argument("--producer-property", action="append", metavar="NAME=VALUE",
                   help="a librdkafka producer setting, e.g. acks=all, compression.type=lz4")
    return p


def main(argv: list[str]) -> int:
    from confluent_kafka import Producer
    args = build_parser().parse_args(argv)
    props = parse_pairs(args.property, "--property")
    parse_key = props.get("parse.key", "false").lower() == "true"
    ignore_error = props.get("ignore.error", "false").lower() == "true"
    sep = props.get("key.separator", "\t")
    if parse_key and not sep:
        fail("key.separator is empty: give the character between key and value, e.g. "
             "--property key.separator=:")
    conf = client_settings(args.bootstrap_server, partitioner="murmur2_random")
    conf.update(parse_pairs(args.producer_property, "--producer-property"))
    failures = []
    producer = Producer(conf)

    def on_delivery(err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            failures.append(err)

    def finish() -> None:
        left = producer.flush(30)
        if left:
            fail(f"{left} record(s) were not acknowledged within 30 s. Is the broker reachable?")
        if failures:
            fail(f"{len(failures)} record(s) failed: {describe_client_error(Exception(failures[0]))}")

    for lineno, line in enumerate(sys.stdin, 1):
        line = line.rstrip("\n")
        key = None
        if parse_key and sep in line:
            key, line = line.split(sep, 1)
        elif parse_key and not ignore_error:  # as Kafka's tool: stop here, keep what came before
            finish()
            fail(f"line {lineno} has no key separator {sep!r}: {line!r}. The {lineno - 1} line(s) before it were "
                 "sent; fix the line, or add --property ignore.error=true to send such lines without a key.")
        producer.produce(args.topic, value=line.encode(), key=key.encode() if key is not None else None,
                         on_delivery=on_delivery)
        producer.poll(0)
    finish()
    return 0
