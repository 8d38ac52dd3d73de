"""The share group half of ``minikafka consumer-groups`` (KIP-932, "queues for Kafka").

Kafka ships a separate ``kafka-share-groups.sh``; the course's tool shows share groups
next to consumer groups instead, in the same columns where they mean the same thing:
``--list`` names them (``--list --type`` shows each group's type and state), and
``--describe`` of a share group shows its members (``--members``), its coordinator and
state (``--state``), or, by default, where each share-partition starts (the SPSO) and
how many records there still wait (LAG). confluent-kafka 2.16's AdminClient has no call
for these, so they are asked over the wire (``wire``): it works against Kafka 4 too.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, cast

from . import wire
from .common import table

if TYPE_CHECKING:
    from confluent_kafka.admin import AdminClient

TYPE_NAMES = {"classic": "Classic", "consumer": "Consumer", "share": "Share"}


def _brokers(client: AdminClient) -> list[tuple[str, int]]:
    # confluent's BrokerMetadata declares host as None until set; a listed broker always has one
    return [(cast(str, b.host), b.port) for b in client.list_topics(timeout=wire.TIMEOUT).brokers.values()]


def groups(client: AdminClient) -> list[tuple[str, str, str]]:
    """(group id, type, state) of every consumer or share group (not Connect's, for instance)."""
    return [(g, TYPE_NAMES.get(kind, kind), state) for g, protocol, state, kind in wire.list_groups(_brokers(client))
            if protocol in ("consumer", "", "share")]


def find(client: AdminClient, group: str) -> tuple[tuple[int, str, int], Any] | None:
    """(coordinator (id, host, port), ShareGroupDescribe's group) of a share group, or None."""
    host, port = _brokers(client)[0]
    node = wire.coordinator(host, port, group)
    described = wire.describe_share_group(node[1], node[2], group)
    return (node, described) if described.error_code == 0 else None


def describe(client: AdminClient, group: str, args: argparse.Namespace) -> bool:
    """Print a share group as ``--describe`` asks; False when ``group`` is not a share group."""
    found = find(client, group)
    if found is None:
        return False
    (node_id, host, port), described = found
    if args.state:
        print(table(["GROUP", "COORDINATOR (ID)", "STATE", "#MEMBERS"],
                    [[group, f"{host}:{port} ({node_id})", described.group_state, len(described.members)]]))
        return True
    if not described.members:
        print(f"Share group {group!r} has no active members.\n")
    if args.members:
        print(_members(group, described, args.verbose))
    else:
        rows = [[group, t, p, start, "-" if lag < 0 else lag]
                for t, p, start, lag in wire.share_group_offsets(host, port, group)]
        print(table(["GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG"], rows))
    return True


def _members(group: str, described: Any, verbose: bool) -> str:
    headers = ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"] + (["ASSIGNMENT"] if verbose else [])
    rows = []
    for m in sorted(described.members, key=lambda m: m.member_id):
        tps = m.assignment.topic_partitions
        row = [group, m.member_id, m.client_host, m.client_id, sum(len(tp.partitions) for tp in tps)]
        if verbose:
            row.append(",".join(f"{tp.topic_name}({','.join(map(str, tp.partitions))})" for tp in tps) or "-")
        rows.append(row)
    return table(headers, rows)
