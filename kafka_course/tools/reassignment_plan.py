"""Kafka's reassignment JSON files and the rules behind ``minikafka reassign-partitions``.

A plan is ``{"version": 1, "partitions": [{"topic": T, "partition": P, "replicas": [...],
"log_dirs": [...]}]}`` (``log_dirs`` optional, ``"any"`` for no preference). ``spread`` is
Kafka's rack-unaware replica placement (as ``kafka-reassign-partitions.sh --generate``
proposes): partition ``p``'s first replica is broker ``(p + start) % n``, the others follow
at a shift that grows every ``n`` partitions, with a random start and shift.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .cluster_admin import CliError, partitions_of, read_json

if TYPE_CHECKING:
    from kafka.admin import KafkaAdminClient

__all__ = ["broker_list", "current_replicas", "ids", "in_progress", "name", "read_json", "read_plan", "spread",
           "throttled_replicas", "to_json", "topics_to_move", "verify_log_dirs"]

TopicPartition = tuple[str, int]


def name(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def ids(brokers: Iterable[int]) -> str:
    return ",".join(map(str, brokers))


def to_json(assignment: dict[TopicPartition, list[int]]) -> str:
    parts = [{"topic": t, "partition": p, "replicas": list(r), "log_dirs": ["any"] * len(r)}
             for (t, p), r in sorted(assignment.items())]
    return json.dumps({"version": 1, "partitions": parts}, separators=(",", ":"))


def topics_to_move(spec: Any) -> list[str]:
    topics = spec.get("topics") if isinstance(spec, dict) else None
    if not isinstance(topics, list) or not all(isinstance(t, dict) and isinstance(t.get("topic"), str)
                                               for t in topics):
        raise CliError('The topics-to-move file must look like {"topics": [{"topic": "orders"}], "version": 1}.')
    if not topics:
        raise CliError("The topics-to-move file names no topic.")
    return list(dict.fromkeys(t["topic"] for t in topics))


def broker_list(text: str) -> list[int]:
    try:
        brokers = [int(b) for b in text.split(",") if b.strip()]
    except ValueError:
        raise CliError(f"--broker-list {text!r} must be broker ids separated by commas, like 1,2,3.") from None
    if not brokers or len(set(brokers)) != len(brokers):
        raise CliError(f"--broker-list {text!r} must name each broker once.")
    return sorted(brokers)


def spread(partitions: int, replication_factor: int, brokers: list[int], rand: random.Random) -> list[list[int]]:
    """Kafka's rack-unaware placement of ``partitions`` partitions over ``brokers``."""
    n = len(brokers)
    if replication_factor > n:
        raise CliError(f"Replication factor: {replication_factor} larger than available brokers: {n}.")
    start, shift, out = rand.randrange(n), rand.randrange(n), []
    for p in range(partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start) % n
        others = [(first + 1 + (shift + j) % (n - 1)) % n for j in range(replication_factor - 1)]
        out.append([brokers[first]] + [brokers[i] for i in others])
    return out


def read_plan(path: str) -> tuple[dict[TopicPartition, list[int]], dict[tuple[str, int, int], str]]:
    """(partition -> target replicas, (topic, partition, broker) -> log dir) of a plan file."""
    spec = read_json(path, "reassignment file")
    entries = spec.get("partitions") if isinstance(spec, dict) else None
    if not isinstance(entries, list) or not entries:
        raise CliError(f"{path} has no partitions to reassign: it must look like "
                       '{"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2]}]}.')
    wanted: dict[TopicPartition, list[int]] = {}
    dirs: dict[tuple[str, int, int], str] = {}
    for entry in entries:
        tp, replicas, log_dirs = _entry(entry)
        if tp in wanted:
            raise CliError(f"Partition reassignment contains duplicate topic partitions: {name(tp)}.")
        wanted[tp] = replicas
        dirs.update({(tp[0], tp[1], b): d for b, d in zip(replicas, log_dirs) if d != "any"})
    return wanted, dirs


def _entry(entry: Any) -> tuple[TopicPartition, list[int], list[str]]:
    ok = (isinstance(entry, dict) and isinstance(entry.get("topic"), str) and isinstance(entry.get("partition"), int)
          and isinstance(entry.get("replicas"), list) and all(isinstance(b, int) for b in entry["replicas"]))
    if not ok:
        raise CliError(f"Each partition needs a topic, a partition number and a list of broker ids: {entry!r}.")
    tp, replicas = (entry["topic"], entry["partition"]), entry["replicas"]
    if not replicas:
        raise CliError(f"Partition {name(tp)} has an empty replica list.")
    if len(set(replicas)) != len(replicas):
        raise CliError(f"Partition replica lists may not contain duplicate entries: {name(tp)} has {replicas}.")
    log_dirs = entry.get("log_dirs", ["any"] * len(replicas))
    if not isinstance(log_dirs, list) or len(log_dirs) != len(replicas):
        raise CliError(f"Partition {name(tp)}: log_dirs must list one directory (or \"any\") per replica.")
    return tp, replicas, log_dirs


def current_replicas(admin: KafkaAdminClient, wanted: Iterable[TopicPartition]) -> dict[TopicPartition, list[int]]:
    """The replicas each partition of the plan has now; CliError for one that does not exist."""
    found = partitions_of(admin, sorted({t for t, _ in wanted}))
    out = {}
    for t, p in wanted:
        part = next((x for x in found[t] if x["partition_index"] == p), None)
        if part is None:
            raise CliError(f"Partition {t}-{p} does not exist (topic {t} has {len(found[t])} partitions).")
        out[(t, p)] = list(part["replica_nodes"])
    return out


def in_progress(admin: KafkaAdminClient) -> dict[TopicPartition, dict]:
    return {(tp.topic, tp.partition): state for tp, state in admin.list_partition_reassignments().items()}


def throttled_replicas(current: dict[TopicPartition, list[int]],
                       wanted: dict[TopicPartition, list[int]]) -> tuple[dict[str, str], dict[str, str]]:
    """Per topic, Kafka's leader list (the moving partitions' current replicas) and follower
    list (their new replicas), as ``partition:broker`` pairs."""
    leader: dict[str, list[str]] = {}
    follower: dict[str, list[str]] = {}
    for (t, p), target in sorted(wanted.items()):
        if target == current[(t, p)]:
            continue
        leader.setdefault(t, []).extend(f"{p}:{b}" for b in current[(t, p)])
        follower.setdefault(t, []).extend(f"{p}:{b}" for b in target if b not in current[(t, p)])
    return {t: ",".join(v) for t, v in leader.items()}, {t: ",".join(v) for t, v in follower.items()}


def verify_log_dirs(admin: KafkaAdminClient, dirs: dict[tuple[str, int, int], str]) -> bool:
    """Print where each replica asked to move between log directories is; True when all arrived."""
    by_broker: dict[int, dict] = {}
    for answer in admin.describe_log_dirs(brokers=sorted({b for _, _, b in dirs})):
        by_broker[answer["broker"]] = {(t["name"], p["partition_index"], p["is_future_key"]): d["log_dir"]
                                       for d in answer["log_dirs"] for t in d["topics"] for p in t["partitions"]}
    done = True
    for (t, p, b), wanted in sorted(dirs.items()):
        seen = by_broker.get(b, {})
        now, future = seen.get((t, p, False)), seen.get((t, p, True))
        if now == wanted:
            print(f"Reassignment of replica {t}-{p}-{b} completed successfully.")
            continue
        done = False
        print(f"Reassignment of replica {t}-{p}-{b} is still in progress (current log dir {now}, "
              f"future log dir {future}).")
    return done
