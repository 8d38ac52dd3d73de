"""``minikafka topics``: kafka-topics.sh for any Kafka cluster (via the Admin API)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .common import add_bootstrap, admin, fail, parse_pairs, wait_all

if TYPE_CHECKING:
    from confluent_kafka.admin import AdminClient


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minikafka topics", description="Manage topics.")
    add_bootstrap(p)
    action = p.add_mutually_exclusive_group(required=True)
    for name in ("create", "list", "describe", "delete", "alter"):
        action.add_argument(f"--{name}", action="store_true")
    p.add_argument("--topic", help="topic name")
    p.add_argument("--partitions", type=int, help="number of partitions (create, or grow with --alter)")
    p.add_argument("--replication-factor", type=int, default=-1, help="replicas per partition (create)")
    p.add_argument("--config", action="append", metavar="NAME=VALUE", help="topic setting (create, alter)")
    p.add_argument("--if-not-exists", action="store_true", help="with --create: no error if it exists")
    p.add_argument("--exclude-internal", action="store_true", help="with --list/--describe: hide __ topics")
    return p


def _need_topic(args: argparse.Namespace) -> str:
    if not args.topic:
        fail("this action needs --topic NAME.")
    return args.topic


def create(client: AdminClient, args: argparse.Namespace) -> None:
    from confluent_kafka.admin import NewTopic
    name = _need_topic(args)
    if args.if_not_exists and name in client.list_topics(timeout=10).topics:
        return
    topic = NewTopic(name, args.partitions or -1, args.replication_factor, config=parse_pairs(args.config, "--config"))
    wait_all(client.create_topics([topic]))
    print(f"Created topic {name}.")


def list_topics(client: AdminClient, args: argparse.Namespace) -> None:
    for name in sorted(client.list_topics(timeout=10).topics):
        if not (args.exclude_internal and name.startswith("__")):
            print(name)


def describe(client: AdminClient, args: argparse.Namespace) -> None:
    from confluent_kafka.admin import ConfigResource
    meta = client.list_topics(topic=args.topic, timeout=10) if args.topic else client.list_topics(timeout=10)
    for name in sorted(meta.topics):
        t = meta.topics[name]
        if t.error is not None:
            fail(f"topic {name!r}: {t.error.str()}")
        if args.exclude_internal and name.startswith("__"):
            continue
        res = wait_all(client.describe_configs([ConfigResource("topic", name)]))
        overrides = [f"{k}={v.value}" for c in res.values() for k, v in sorted(c.items()) if v.source == 1]
        rf = len(t.partitions[0].replicas) if t.partitions else 0
        print(f"Topic: {name}\tPartitionCount: {len(t.partitions)}\tReplicationFactor: {rf}\t"
              f"Configs: {','.join(overrides)}")
        for pid in sorted(t.partitions):
            p = t.partitions[pid]
            print(f"\tTopic: {name}\tPartition: {pid}\tLeader: {p.leader}\t"
                  f"Replicas: {','.join(map(str, p.replicas))}\tIsr: {','.join(map(str, p.isrs))}")


def delete(client: AdminClient, args: argparse.Namespace) -> None:
    name = _need_topic(args)
    wait_all(client.delete_topics([name]))
    print(f"Deleted topic {name}.")


def alter(client: AdminClient, args: argparse.Namespace) -> None:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, NewPartitions
    name = _need_topic(args)
    if not args.partitions and not args.config:
        fail("--alter needs --partitions N or --config NAME=VALUE.")
    if args.partitions:
        wait_all(client.create_partitions([NewPartitions(name, args.partitions)]))
        print(f"Topic {name} now has {args.partitions} partitions.")
    if args.config:
        entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET)
                   for k, v in parse_pairs(args.config, "--config").items()]
        wait_all(client.incremental_alter_configs([ConfigResource("topic", name, incremental_configs=entries)]))
        print(f"Updated settings of topic {name}.")


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    client = admin(args.bootstrap_server)
    action = next(a for a in ("create", "list", "describe", "delete", "alter") if getattr(args, a))
    {"create": create, "list": list_topics, "describe": describe, "delete": delete, "alter": alter}[action](client,
                                                                                                            args)
    return 0
