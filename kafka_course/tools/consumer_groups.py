"""``minikafka consumer-groups``: list, describe, reset and delete consumer groups.

Shaped like Kafka's ``kafka-consumer-groups.sh`` (same options, same columns), and
like it a plain Kafka client: it uses confluent-kafka's AdminClient (and, for what that
cannot ask, a few requests over the wire, ``wire``), so it works against any Kafka
cluster, not just minikafka::

    minikafka consumer-groups --bootstrap-server B --list [--type [classic|consumer|share ...] [--state]]
    minikafka consumer-groups --bootstrap-server B --describe --group G [--members [--verbose] | --state]
    minikafka consumer-groups --bootstrap-server B --reset-offsets --group G --topic T[:0,1]
        (--to-earliest | --to-latest | --to-offset N | --shift-by N | --to-datetime 2024-05-01T12:00:00.000)
        [--dry-run | --execute]
    minikafka consumer-groups --bootstrap-server B --delete --group G

LAG is the log end offset minus the committed offset: how far the group is behind.
A group is ``classic`` (JoinGroup/SyncGroup, the client assigns) or ``consumer`` (Kafka 4's
protocol, KIP-848: the broker assigns): ``--list --type`` says which, as Kafka 4's tool
does, and ``--members --verbose`` shows a consumer group member's current and target
assignments (they differ while partitions move).
Share groups (KIP-932) are listed and described too (``share_groups``): where each
share-partition starts, and the members, who all read every partition.
Offsets can only be reset, and groups deleted, while the group has no active members
(a running consumer would overwrite the new offsets with its next commit).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import TYPE_CHECKING, TypeVar

from . import share_groups, wire
from .common import add_bootstrap, describe_client_error, client_settings
from .common import table as _table

if TYPE_CHECKING:
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient, ConsumerGroupDescription, OffsetSpec

T = TypeVar("T")

TIMEOUT = 15  # seconds for each admin call
CONNECT_TIMEOUT = 8  # seconds to find a broker at the bootstrap address
STATE_NAMES = {"PREPARING_REBALANCING": "PreparingRebalance", "COMPLETING_REBALANCING": "CompletingRebalance",
               "STABLE": "Stable", "EMPTY": "Empty", "DEAD": "Dead", "UNKNOWN": "Unknown"}
TYPE_NAMES = {"CLASSIC": "Classic", "CONSUMER": "Consumer", "UNKNOWN": "Unknown"}


class CliError(Exception):
    """A problem the user can act on; printed as one sentence, exit status 1."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="minikafka consumer-groups",
                                     description="List, describe, reset and delete consumer groups.")
    add_bootstrap(parser)
    action = parser.add_mutually_exclusive_group(required=True)
    for name, text in (("--list", "list every group"), ("--describe", "show a group's offsets, lag and members"),
                       ("--reset-offsets", "move a group's committed offsets"), ("--delete", "delete a group")):
        action.add_argument(name, action="store_true", help=text)
    parser.add_argument("--group", action="append", default=[], help="group id (repeatable)")
    parser.add_argument("--members", action="store_true", help="with --describe: one line per member")
    parser.add_argument("--verbose", action="store_true", help="with --members: show each member's partitions")
    parser.add_argument("--state", action="store_true",
                        help="with --describe: coordinator, strategy and state; with --list --type: each group's state")
    parser.add_argument("--type", nargs="*", metavar="TYPE", choices=("classic", "consumer", "share"),
                        help="with --list: show each group's type (classic, consumer or share), or only these types")
    parser.add_argument("--topic", action="append", default=[], metavar="TOPIC[:P,P]", help="with --reset-offsets")
    parser.add_argument("--all-topics", action="store_true", help="with --reset-offsets: every committed topic")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--to-earliest", action="store_true")
    target.add_argument("--to-latest", action="store_true")
    target.add_argument("--to-offset", type=int, metavar="N")
    target.add_argument("--shift-by", type=int, metavar="N", help="move each committed offset by N (negative: back)")
    target.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:MM:SS[.sss]")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="show the new offsets only (the default)")
    mode.add_argument("--execute", action="store_true", help="apply the new offsets")
    return parser


def main(argv: list[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # argparse already printed the problem
        return int(e.code or 0)
    try:
        client = _connect(args.bootstrap_server)
        if args.list:
            return _list(client, args.type, args.state)
        if not args.group:
            raise CliError("Name the group with --group.")
        run = _describe if args.describe else _reset if args.reset_offsets else _delete
        for group in args.group:
            run(client, group, args)
        return 0
    except CliError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1


# -- talking to the cluster ---------------------------------------------------------------------
def _connect(bootstrap: str) -> AdminClient:
    """An AdminClient that has reached a broker (librdkafka's own log lines are silenced:
    the problem is reported once, as a sentence)."""
    from confluent_kafka.admin import AdminClient
    client = AdminClient(client_settings(bootstrap, **{"socket.timeout.ms": TIMEOUT * 1000, "log_level": 0}))
    try:
        client.list_topics(timeout=CONNECT_TIMEOUT)
    except Exception as e:  # noqa: BLE001
        code = getattr(e.args[0], "code", lambda: 0)() if e.args else 0
        if code in (-195, -187, -185):  # transport failure, all brokers down, timed out
            raise CliError(f"Cannot reach a Kafka broker at {bootstrap}: is one running there?") from None
        raise CliError(describe_client_error(e)) from None
    return client


def _wait(future: Future[T], what: str) -> T:
    try:
        return future.result(timeout=TIMEOUT)
    except TimeoutError:
        raise CliError(f"Could not {what}: the cluster did not answer within {TIMEOUT} s.") from None
    except Exception as e:  # noqa: BLE001 - every client error becomes one sentence
        raise CliError(f"Could not {what}: {describe_client_error(e)}") from None


def _state(description: ConsumerGroupDescription) -> str:
    return STATE_NAMES.get(getattr(description.state, "name", str(description.state)), str(description.state))


def _group(client: AdminClient, group: str) -> ConsumerGroupDescription:
    description = _wait(client.describe_consumer_groups([group], request_timeout=TIMEOUT)[group],
                        f"describe group {group!r}")
    if _state(description) == "Dead":
        raise CliError(f"Consumer group {group!r} does not exist.")
    return description


def _committed(client: AdminClient, group: str) -> dict[tuple[str, int], int]:
    from confluent_kafka import ConsumerGroupTopicPartitions
    request = [ConsumerGroupTopicPartitions(group)]
    result = _wait(client.list_consumer_group_offsets(request, request_timeout=TIMEOUT)[group],
                   f"read the committed offsets of {group!r}")
    return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions if tp.offset >= 0}


def _offsets(client: AdminClient, partitions: list[tuple[str, int]], spec: OffsetSpec) -> dict[tuple[str, int], int]:
    """ListOffsets for each (topic, partition): earliest, latest or by timestamp."""
    from confluent_kafka import TopicPartition
    if not partitions:
        return {}
    futures = client.list_offsets({TopicPartition(t, p): spec for t, p in partitions}, request_timeout=TIMEOUT)
    return {(tp.topic, tp.partition): _wait(f, f"read the offsets of {tp.topic}-{tp.partition}").offset
            for tp, f in futures.items()}


# -- --list ----------------------------------------------------------------------------------------
def _type(description: ConsumerGroupDescription) -> str:
    kind = getattr(description, "type", None)
    return TYPE_NAMES.get(getattr(kind, "name", str(kind)), "Unknown")


def _list(client: AdminClient, types: list[str] | None, with_state: bool = False) -> int:
    if types is not None:  # Kafka 4's --list --type [--state]: ListGroups v5 knows every group's type
        wanted = {t.lower() for t in types}
        rows = [list(row) for row in _share_call(lambda: share_groups.groups(client), "list the groups")
                if not wanted or row[1].lower() in wanted]
        headers = ["GROUP", "TYPE", "STATE"] if with_state else ["GROUP", "TYPE"]
        print(_table(headers, [row[:len(headers)] for row in rows]))
        return 0
    result = _wait(client.list_consumer_groups(request_timeout=TIMEOUT), "list the groups")
    names = {listing.group_id for listing in result.valid}
    with contextlib.suppress(wire.WireError):  # share groups too, where the cluster knows group types (Kafka 4)
        names |= {g for g, kind, _ in share_groups.groups(client) if kind == "Share"}
    for name in sorted(names):
        print(name)
    return 0


def _share_call(fn: Callable[[], T], what: str) -> T:
    try:
        return fn()
    except wire.WireError as e:
        raise CliError(f"Could not {what}: {e}.") from None


# -- --describe --------------------------------------------------------------------------------------
def _describe(client: AdminClient, group: str, args: argparse.Namespace) -> None:
    try:
        description = _group(client, group)
    except CliError:
        if _share_call(lambda: share_groups.describe(client, group, args), f"describe group {group!r}"):
            return
        raise
    if args.state:
        node = description.coordinator
        print(_table(["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"],
                     [[group, f"{node.host}:{node.port} ({node.id})", description.partition_assignor or "",
                       _state(description), len(description.members)]]))
        return
    if not description.members:
        print(f"Consumer group {group!r} has no active members.\n")
    if args.members:
        print(_members_table(group, description, args.verbose))
    else:
        print(_offsets_table(client, group, description))


def _members_table(group: str, description: ConsumerGroupDescription, verbose: bool) -> str:
    consumer = _type(description) == "Consumer"  # KIP-848: the broker's target, reached member by member
    extra = (["CURRENT-ASSIGNMENT", "TARGET-ASSIGNMENT"] if consumer else ["ASSIGNMENT"]) if verbose else []
    rows = []
    for m in sorted(description.members, key=lambda m: m.member_id):
        tps = m.assignment.topic_partitions
        row = [group, m.member_id, m.host, m.client_id, len(tps)]
        if verbose:
            row.append(_compact(tps) or "-")
        if verbose and consumer:
            target = m.target_assignment.topic_partitions if m.target_assignment else []
            row.append(_compact(target) or "-")
        rows.append(row)
    return _table(["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", *extra], rows)


def _compact(tps: Iterable[TopicPartition]) -> str:
    by_topic: dict[str, list[int]] = {}
    for tp in tps:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ",".join(f"{t}({','.join(map(str, sorted(ps)))})" for t, ps in sorted(by_topic.items()))


def _offsets_table(client: AdminClient, group: str, description: ConsumerGroupDescription) -> str:
    """kafka-consumer-groups' main view: one row per partition the group reads or committed."""
    from confluent_kafka.admin import OffsetSpec
    owner = {(tp.topic, tp.partition): m for m in description.members for tp in m.assignment.topic_partitions}
    committed = _committed(client, group)
    partitions = sorted(set(owner) | set(committed))
    ends = _offsets(client, partitions, OffsetSpec.latest())
    rows = []
    for tp in partitions:
        current, end, m = committed.get(tp), ends.get(tp), owner.get(tp)
        lag = end - current if current is not None and end is not None and end >= 0 else "-"
        who = [m.member_id, m.host, m.client_id] if m else ["-", "-", "-"]
        rows.append([group, tp[0], tp[1], "-" if current is None else current, "-" if end is None else end, lag, *who])
    for m in sorted(description.members, key=lambda m: m.member_id):
        if not m.assignment.topic_partitions:  # an idle member: more consumers than partitions
            rows.append([group, "-", "-", "-", "-", "-", m.member_id, m.host, m.client_id])
    headers = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
               "CLIENT-ID"]
    return _table(headers, rows)


# -- --reset-offsets ---------------------------------------------------------------------------------
def _require_inactive(client: AdminClient, group: str, verb: str, *, new_ok: bool = False) -> None:
    """Refuse a group with members; with ``new_ok`` a group the cluster does not know yet is fine."""
    if new_ok:
        description = _wait(client.describe_consumer_groups([group], request_timeout=TIMEOUT)[group],
                            f"describe group {group!r}")
    else:
        description = _group(client, group)
    if description.members:
        raise CliError(f"Cannot {verb} group {group!r} while it has {len(description.members)} active member(s) "
                       f"(state {_state(description)}); stop its consumers first.")


def _reset(client: AdminClient, group: str, args: argparse.Namespace) -> None:
    if not any((args.to_earliest, args.to_latest, args.to_offset is not None, args.shift_by is not None,
                args.to_datetime)):
        raise CliError("Say where to reset to: --to-earliest, --to-latest, --to-offset N, --shift-by N "
                       "or --to-datetime.")
    # As Kafka's tool: a group that does not exist yet gets these offsets (it starts there when it first runs).
    _require_inactive(client, group, "reset the offsets of", new_ok=True)
    partitions = _partitions_to_reset(client, group, args)
    targets = _targets(client, group, partitions, args)
    print(_table(["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], [[group, t, p, o] for (t, p),
                                                                 o in sorted(targets.items())]))
    if not args.execute:
        print("(dry run: nothing changed; add --execute to apply these offsets)", file=sys.stderr)
        return
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    request = [ConsumerGroupTopicPartitions(group, [TopicPartition(t, p, o) for (t, p), o in sorted(targets.items())])]
    result = _wait(client.alter_consumer_group_offsets(request, request_timeout=TIMEOUT)[group],
                   f"reset the offsets of {group!r}")
    failed = [tp for tp in result.topic_partitions if tp.error]
    if failed:
        raise CliError(f"{failed[0].topic}-{failed[0].partition} was not reset: {failed[0].error.str()}.")


def _partitions_to_reset(client: AdminClient, group: str, args: argparse.Namespace) -> list[tuple[str, int]]:
    if args.all_topics:
        return sorted(_committed(client, group))
    if not args.topic:
        raise CliError("Name the topics to reset with --topic TOPIC[:PARTITIONS] or --all-topics.")
    out = []
    for spec in args.topic:
        topic, _, listed = spec.partition(":")
        known = _partition_ids(client, topic)
        wanted = [int(p) for p in listed.split(",") if p.strip()] if listed else known
        unknown = sorted(set(wanted) - set(known))
        if unknown:
            raise CliError(f"Topic {topic!r} has no partition {unknown[0]} (it has {len(known)}).")
        out += [(topic, p) for p in wanted]
    return out


def _partition_ids(client: AdminClient, topic: str) -> list[int]:
    try:  # metadata of every topic: asking for one by name may create it where auto-creation is on
        metadata = client.list_topics(timeout=TIMEOUT)
    except Exception as e:  # noqa: BLE001
        raise CliError(f"Could not read the metadata of {topic!r}: {describe_client_error(e)}") from None
    info = metadata.topics.get(topic)
    if info is None or info.error is not None or not info.partitions:
        raise CliError(f"Topic {topic!r} does not exist.")
    return sorted(info.partitions)


def _targets(client: AdminClient, group: str, partitions: list[tuple[str, int]],
             args: argparse.Namespace) -> dict[tuple[str, int], int]:
    from confluent_kafka.admin import OffsetSpec
    earliest = _offsets(client, partitions, OffsetSpec.earliest())
    latest = _offsets(client, partitions, OffsetSpec.latest())
    if args.to_earliest:
        return earliest
    if args.to_latest:
        return latest
    if args.to_offset is not None:  # kept inside the log, as Kafka's tool does
        return {tp: min(max(args.to_offset, earliest[tp]), latest[tp]) for tp in partitions}
    if args.shift_by is not None:
        current = _committed(client, group)
        missing = [tp for tp in partitions if tp not in current]
        if missing:
            raise CliError(f"Cannot shift the offset of {missing[0][0]}-{missing[0][1]}: group {group!r} has no "
                           "committed offset there. Use --to-offset, --to-earliest or --to-datetime for it.")
        return {tp: min(max(current[tp] + args.shift_by, earliest[tp]), latest[tp]) for tp in partitions}
    found = _offsets(client, partitions, OffsetSpec.for_timestamp(_millis(args.to_datetime)))
    return {tp: found[tp] if found[tp] >= 0 else latest[tp] for tp in partitions}


def _millis(text: str) -> int:
    """An ISO date-time; without a time zone it is local time, as in kafka-consumer-groups.sh."""
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise CliError(f"{text!r} is not a date-time like 2024-05-01T12:00:00 or 2024-05-01T12:00:00.000.") from None
    return int(moment.timestamp() * 1000)


# -- --delete -------------------------------------------------------------------------------------------
def _delete(client: AdminClient, group: str, args: argparse.Namespace) -> None:
    _require_inactive(client, group, "delete")
    _wait(client.delete_consumer_groups([group], request_timeout=TIMEOUT)[group], f"delete group {group!r}")
    print(f"Deletion of requested consumer groups ('{group}') was successful.")
