"""Server-side assignors of the consumer group protocol (KIP-848): ``uniform`` and ``range``.

With the classic protocol the group leader, a client, computes the assignment; with
KIP-848 the group coordinator does, whenever the group epoch moves past the target
assignment epoch. A broker offers the assignors named in ``group.consumer.assignors``
(the first one is the default) and a consumer may ask for one with
``group.remote.assignor``; the group uses the one most of its members ask for.

* **uniform** spreads partitions as evenly as the subscriptions allow and is *sticky*:
  a partition stays with its current owner unless balance needs it elsewhere, so a
  member joining or leaving moves as few partitions as possible.
* **range** gives each member contiguous ranges of every topic it subscribes to, members
  in a fixed order (instance id, else member id): when every member subscribes to the
  same co-partitioned topics, partition N of each topic goes to the same member.

An assignor is a plain function: the members' subscriptions, the partition count of
each topic and the previous target assignment in; the new target assignment out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

TopicPartition = tuple[str, int]
Assignment = dict[str, set[TopicPartition]]  # member id -> partitions


def _candidates(subscriptions: Mapping[str, set[str]], topics: Mapping[str, int]) -> dict[TopicPartition, list[str]]:
    """Every partition of a subscribed topic, with the members that may own it."""
    out: dict[TopicPartition, list[str]] = {}
    for member, subscribed in sorted(subscriptions.items()):
        for topic in sorted(subscribed):
            for index in range(topics.get(topic, 0)):
                out.setdefault((topic, index), []).append(member)
    return out


def uniform(subscriptions: Mapping[str, set[str]], topics: Mapping[str, int], previous: Mapping[str, set],
            order: Mapping[str, str] | None = None) -> Assignment:
    """Balanced and sticky: keep what may be kept, give the rest to the least loaded,
    then move partitions from the most to the least loaded until counts differ by one."""
    candidates = _candidates(subscriptions, topics)
    out: Assignment = {m: set() for m in subscriptions}
    for member, owned in previous.items():
        if member in out:
            out[member] = {tp for tp in owned if member in candidates.get(tp, ())}
    taken = {tp for owned in out.values() for tp in owned}
    for tp in sorted(set(candidates) - taken, key=lambda tp: (len(candidates[tp]), tp)):
        out[min(candidates[tp], key=lambda m: (len(out[m]), m))].add(tp)
    _even_out(out, candidates)
    return out


def _even_out(out: Assignment, candidates: Mapping[TopicPartition, list[str]]) -> None:
    """Move one partition at a time from a member with two more than another that may own it."""
    for _ in range(sum(len(v) for v in out.values()) + 1):  # each move lowers the imbalance: bounded
        move = next(((tp, giver, taker) for giver in sorted(out, key=lambda m: (-len(out[m]), m))
                     for tp in sorted(out[giver])
                     for taker in candidates[tp] if len(out[taker]) + 1 < len(out[giver])), None)
        if move is None:
            return
        tp, giver, taker = move
        out[giver].discard(tp)
        out[taker].add(tp)


def range_(subscriptions: Mapping[str, set[str]], topics: Mapping[str, int], previous: Mapping[str, set],
           order: Mapping[str, str] | None = None) -> Assignment:
    """Per topic, contiguous ranges over the subscribed members in a fixed order; the
    first ``partitions % members`` members get one partition more."""
    order = order or {}
    out: Assignment = {m: set() for m in subscriptions}
    for topic in sorted({t for subscribed in subscriptions.values() for t in subscribed}):
        members = sorted((m for m, s in subscriptions.items() if topic in s), key=lambda m: order.get(m, m))
        count = topics.get(topic, 0)
        if not members or not count:
            continue
        share, extra = divmod(count, len(members))
        start = 0
        for i, member in enumerate(members):
            size = share + (1 if i < extra else 0)
            out[member] |= {(topic, p) for p in range(start, start + size)}
            start += size
    return out


Assignor = Callable[..., Assignment]
ASSIGNORS: dict[str, Assignor] = {"uniform": uniform, "range": range_}
CLASS_NAMES = {  # group.consumer.assignors also takes Kafka's class names
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}


def assignor_names(setting: str) -> list[str]:
    """The short names of a ``group.consumer.assignors`` value, in order."""
    return [CLASS_NAMES.get(n.strip(), n.strip()) for n in setting.split(",") if n.strip()]
