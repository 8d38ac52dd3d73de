"""``minikafka console-consumer``: print the records of a topic, like
kafka-console-consumer.sh.

Without ``--group`` it joins a fresh group of its own (as Kafka's tool does), so it
gets every partition. ``--max-messages`` and ``--timeout-ms`` bound the run.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from typing import TYPE_CHECKING

from .common import add_bootstrap, describe_client_error, fail, parse_pairs, client_settings

if TYPE_CHECKING:
    from confluent_kafka import Message


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minikafka console-consumer", description="Print records of a topic.")
    add_bootstrap(p)
    p.add_argument("--topic", required=True)
    p.add_argument("--group", help="consumer group (default: a new one per run)")
    p.add_argument("--from-beginning", action="store_true", help="start at the earliest offset if the group has none")
    p.add_argument("--max-messages", type=int, help="exit after this many records")
    p.add_argument("--timeout-ms", type=int, help="exit when no record arrives for this long")
    p.add_argument("--isolation-level", choices=("read_committed", "read_uncommitted"), default="read_uncommitted")
    p.add_argument("--property", action="append", metavar="NAME=VALUE",
                   help="print.key, print.timestamp, print.partition, print.offset, print.headers, key.separator")
    p.add_argument("--consumer-property", action="append", metavar="NAME=VALUE")
    return p


def _flag(props: dict, name: str) -> bool:
    return props.get(name, "false").lower() == "true"


def render(msg: Message, props: dict) -> str:
    sep = props.get("key.separator", "\t")
    parts = []
    if _flag(props, "print.timestamp"):
        kind, ts = msg.timestamp()
        parts.append(f"{'CreateTime' if kind == 1 else 'LogAppendTime'}:{ts}")
    if _flag(props, "print.partition"):
        parts.append(f"Partition:{msg.partition()}")
    if _flag(props, "print.offset"):
        parts.append(f"Offset:{msg.offset()}")
    if _flag(props, "print.headers"):
        headers = msg.headers() or []  # (key, value) pairs; confluent's type also allows the dict produce() takes
        parts.append(",".join(f"{k}:{(v or b'').decode(errors='replace')}"  # type: ignore[str-unpack, union-attr]
                              for k, v in headers) or "NO_HEADERS")
    if _flag(props, "print.key"):
        key = msg.key()
        parts.append("null" if key is None else key.decode(errors="replace"))
    value = msg.value()
    parts.append("null" if value is None else value.decode(errors="replace"))
    return sep.join(parts)


def main(argv: list[str]) -> int:
    from confluent_kafka import Consumer
    args = build_parser().parse_args(argv)
    props = parse_pairs(args.property, "--property")
    conf = {**client_settings(args.bootstrap_server),
            "group.id": args.group or f"console-consumer-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest" if args.from_beginning else "latest",
            "isolation.level": args.isolation_level, "enable.partition.eof": False}
    conf.update(parse_pairs(args.consumer_property, "--consumer-property"))
    consumer = Consumer(conf)
    consumer.subscribe([args.topic])
    count, last = 0, time.monotonic()
    try:
        while args.max_messages is None or count < args.max_messages:
            msg = consumer.poll(0.2)
            if msg is None:
                if args.timeout_ms is not None and (time.monotonic() - last) * 1000 >= args.timeout_ms:
                    break
                continue
            if msg.error():
                fail(describe_client_error(Exception(msg.error())))
            print(render(msg, props), flush=True)
            count, last = count + 1, time.monotonic()
    finally:
        consumer.close()
    print(f"Processed a total of {count} messages", file=sys.stderr)
    return 0
