"""Check for lab 08c: operations with the command-line tools shaped like Kafka's scripts.

An on-call shift, done with ``minikafka topics``, ``configs`` and ``consumer-groups``
(``kafka-topics.sh``, ``kafka-configs.sh``, ``kafka-consumer-groups.sh`` on a real
cluster, with the same options). ``prepare()`` sets the scene:

* ``lab.orders``: three partitions of orders written over the last six hours, with two
  topic overrides (``retention.ms`` of a day, ``segment.ms`` of an hour);
* ``lab.group``: the billing service's group, which has read every order;
* ``lab.incident``: the moment a bad billing release went out, as a date-time.

The learner creates ``lab.audit`` (partitions and settings given), describes what is
there, raises the orders' retention and removes the segment override, and moves the
billing group back to the incident so it bills those orders again. ``check()`` reads
only the cluster's state through the Admin API: topics, partitions, overrides, the
group's committed offsets against the offsets for the incident's time (ListOffsets by
timestamp, the broker's time index), plus three answers read from ``--describe`` output.
"""

from __future__ import annotations

import datetime
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..checks import Report
from ..commands import shell  # noqa: F401 - the lab notebooks import it from here
from ..i18n import _

if TYPE_CHECKING:
    from confluent_kafka.admin import AdminClient

AUDIT_PARTITIONS = 4
AUDIT_CONFIGS = {"retention.ms": "259200000", "max.message.bytes": "2097152"}  # 3 days, 2 MiB
ORDERS_PARTITIONS = 3
ORDERS_CONFIGS = {"retention.ms": "86400000", "segment.ms": "3600000"}  # what prepare() sets
ORDERS_RETENTION_AFTER = "1209600000"  # 14 days
HISTORY_HOURS = 6
DYNAMIC_TOPIC_CONFIG = 1  # the source of a setting made on the topic itself (DescribeConfigs)


@dataclass
class Lab:
    bootstrap: str
    orders: str
    group: str
    audit: str
    incident: str  # e.g. "2026-05-01T09:40:00.000Z"
    per_partition: int

    @property
    def incident_ms(self) -> int:
        return int(datetime.datetime.fromisoformat(self.incident).timestamp() * 1000)


def prepare(*, bootstrap: str | None = None, per_partition: int = 60) -> Lab:
    """The orders topic with six hours of history, and a billing group that has read it all."""
    from ..clients import new_topic
    from ..connection import current_bootstrap
    servers = bootstrap or current_bootstrap()
    suffix = uuid.uuid4().hex[:6]
    orders = new_topic("ops-orders", partitions=ORDERS_PARTITIONS, config=ORDERS_CONFIGS, bootstrap=servers)
    now = int(time.time() * 1000)
    start = now - HISTORY_HOURS * 3_600_000
    _write_history(servers, orders, per_partition, start, now - 600_000)
    group = f"billing-{suffix}"
    _commit_the_end(servers, group, orders)
    incident = _minute(start + (now - start) * 11 // 20)  # a little past the middle of the history
    return Lab(servers, orders, group, f"ops-audit-{suffix}", incident, per_partition)


def orders_in(partition: int, per_partition: int) -> int:
    """How many orders ``prepare()`` writes to ``partition``: ``per_partition`` on average, but
    not as many in each (keyed traffic is never even), so a move by a number of records lands
    elsewhere in each partition's time than a move to a time does."""
    return per_partition * (2 + partition) // 3


def _write_history(bootstrap: str, topic: str, per_partition: int, start: int, end: int) -> None:
    from confluent_kafka import Producer

    from ..client_logs import quiet
    producer = Producer(quiet({"bootstrap.servers": bootstrap, "linger.ms": 5}))
    for partition in range(ORDERS_PARTITIONS):
        count = orders_in(partition, per_partition)
        step = (end - start) // count
        for i in range(count):
            at = start + i * step + partition * 1000
            producer.produce(topic, f'{{"order": "{partition}-{i}", "amount": {10 + i % 90}}}'.encode(),
                             partition=partition, timestamp=at)
    if producer.flush(30):
        raise RuntimeError(f"the history of {topic} was not written")


def _commit_the_end(bootstrap: str, group: str, topic: str) -> None:
    from confluent_kafka import Consumer, TopicPartition

    from ..client_logs import quiet
    from ..clients import offsets
    consumer = Consumer(quiet({"bootstrap.servers": bootstrap, "group.id": group}))
    try:
        ends = [TopicPartition(topic, o.partition, o.high_watermark) for o in offsets(topic, bootstrap=bootstrap)]
        consumer.commit(offsets=ends, asynchronous=False)
    finally:
        consumer.close()


def _minute(ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC).replace(second=0, microsecond=0)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


# -- the check ---------------------------------------------------------------------------------------
def check(lab: Lab, answers: dict) -> None:
    """Compare the cluster's state with what the shift asked for."""
    with Report(_("Lab 08c · an on-call shift with the command-line tools")) as report:
        topics = _admin(lab).list_topics(timeout=10).topics
        _check_audit(report, lab, topics)
        _check_orders_configs(report, lab)
        expected = _check_replay(report, lab)
        _check_answers(report, lab, answers or {}, expected)


def _admin(lab: Lab) -> AdminClient:
    from ..clients import admin
    return admin(lab.bootstrap)


def _overrides(lab: Lab, topic: str) -> dict[str, str]:
    from confluent_kafka.admin import ConfigResource
    resource = ConfigResource("topic", topic)
    entries = _admin(lab).describe_configs([resource])[resource].result(10)
    return {name: e.value for name, e in entries.items() if e.source == DYNAMIC_TOPIC_CONFIG}


def _check_audit(report: Report, lab: Lab, topics: dict) -> None:
    info = topics.get(lab.audit)
    if not report.check(info is not None, _("the topic {topic} exists").format(topic=lab.audit),
                        _("there is no topic {topic}: create it with the topics tool.").format(topic=lab.audit)) \
            or info is None:
        return
    count = len(info.partitions)
    report.check(count == AUDIT_PARTITIONS,
                 _("{topic} has {partitions} partitions").format(topic=lab.audit, partitions=AUDIT_PARTITIONS),
                 _("{topic} has {count} partition(s), not {partitions}. Without --partitions a topic gets the "
                   "broker's default (num.partitions).").format(topic=lab.audit, count=count,
                                                                partitions=AUDIT_PARTITIONS))
    found = _overrides(lab, lab.audit)
    wrong = {k: found.get(k) for k, v in AUDIT_CONFIGS.items() if found.get(k) != v}
    seen = ", ".join(_("{name} is not set on it").format(name=k) if v is None else
                     _("{name} is {value}").format(name=k, value=v) for k, v in wrong.items())
    report.check(not wrong, _("{topic} is created with {configs}").format(topic=lab.audit,
                                                                          configs=_pairs(AUDIT_CONFIGS)),
                 _("{topic} should carry {configs} as its own settings; {seen}.").format(
                     topic=lab.audit, configs=_pairs(AUDIT_CONFIGS), seen=seen))


def _pairs(configs: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in configs.items())


def _check_orders_configs(report: Report, lab: Lab) -> None:
    found = _overrides(lab, lab.orders)
    retention = found.get("retention.ms")
    report.check(retention == ORDERS_RETENTION_AFTER, _("{topic} keeps its orders 14 days").format(topic=lab.orders),
                 _("{topic}'s retention.ms is {retention}, not {wanted} (14 days in milliseconds).").format(
                     topic=lab.orders, retention=retention, wanted=ORDERS_RETENTION_AFTER))
    segment = found.get("segment.ms")
    report.check(segment is None,
                 _("{topic} has no segment.ms override any more: the broker's default applies").format(
                     topic=lab.orders),
                 _("{topic} still sets segment.ms={segment} on itself. Setting a value, even the default one, keeps "
                   "an override; deleting the setting removes it, so the broker's value applies again.").format(
                     topic=lab.orders, segment=segment))


def _check_replay(report: Report, lab: Lab) -> dict[int, int]:
    from ..clients import committed, offsets
    expected = _offsets_at(lab, lab.incident_ms)
    ends = {o.partition: o.high_watermark for o in offsets(lab.orders, bootstrap=lab.bootstrap)}
    now = committed(lab.group, lab.orders, bootstrap=lab.bootstrap)
    wrong = {p: now.get(p) for p in expected if now.get(p) != expected[p]}
    report.check(not wrong, _("{group} starts again at the first order at or after {incident} in every partition "
                              "({offsets})").format(group=lab.group, incident=lab.incident,
                                                    offsets=_partition_list(expected)),
                 _replay_mistake(lab, wrong, expected, ends))
    return {p: ends[p] - expected[p] for p in expected}


def _offsets_at(lab: Lab, ms: int, ends: dict[int, int] | None = None) -> dict[int, int]:
    """For each partition, the first offset whose timestamp is at or after ``ms`` (the end if none)."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec
    client = _admin(lab)
    asked = {TopicPartition(lab.orders, p): OffsetSpec.for_timestamp(ms) for p in range(ORDERS_PARTITIONS)}
    found = {tp.partition: f.result(10).offset for tp, f in client.list_offsets(asked).items()}
    if ends is None:
        latest = {TopicPartition(lab.orders, p): OffsetSpec.latest() for p in range(ORDERS_PARTITIONS)}
        ends = {tp.partition: f.result(10).offset for tp, f in client.list_offsets(latest).items()}
    return {p: found[p] if found[p] >= 0 else ends[p] for p in sorted(found)}


def _partition_list(offsets: dict[int, int]) -> str:
    return ", ".join(_("partition {partition} at {offset}").format(partition=p, offset=o)
                     for p, o in sorted(offsets.items()))


def _replay_mistake(lab: Lab, wrong: dict, expected: dict, ends: dict) -> str:
    if all(wrong.get(p, expected[p]) == ends[p] for p in expected) and len(wrong) == len(expected):
        return _("{group}'s committed offsets are still at the end of {topic}. The reset tool only shows the new "
                 "offsets (a dry run) until you add --execute.").format(group=lab.group, topic=lab.orders)
    if all(v == 0 for v in wrong.values()) and len(wrong) == len(expected):
        return _("{group} is back at offset 0 everywhere: it would bill all {hours} hours again. Reset to the "
                 "incident's time, {incident}, instead of the earliest offset.").format(
                     group=lab.group, hours=HISTORY_HOURS, incident=lab.incident)
    untouched = sorted(p for p, v in wrong.items() if v == ends[p])
    if untouched and len(untouched) < len(expected):
        return _("partition(s) {partitions} of {topic} are still at the end while the others moved: reset every "
                 "partition of the topic, not only some.").format(partitions=", ".join(map(str, untouched)),
                                                                   topic=lab.orders)
    details = "; ".join(_("partition {partition} is at {offset}, expected {expected}").format(
        partition=p, offset=v, expected=expected[p]) for p, v in sorted(wrong.items()))
    said = {"group": lab.group, "incident": lab.incident, "details": details}
    now = {p: wrong.get(p, expected[p]) for p in expected}
    if _zone_shift(lab, now, ends) is not None:
        return _("{group} should start again at the first order at or after {incident}: {details}. A date-time "
                 "without a time zone is read as this machine's local time; the incident's time is in UTC (the "
                 "Z).").format(**said)
    back = {ends[p] - o for p, o in now.items()}
    if len(back) == 1:
        return _("{group} should start again at the first order at or after {incident}: {details}. Every partition "
                 "moved back by the same {count} orders, as --shift-by does, but the partitions did not receive the "
                 "same number of orders since the incident: reset to the incident's time (--to-datetime), not by a "
                 "count.").format(count=back.pop(), **said)
    return _("{group} should start again at the first order at or after {incident}: {details}. The reset to "
             "{incident} (--to-datetime) puts each partition there.").format(**said)


def _zone_shift(lab: Lab, now: dict[int, int], ends: dict[int, int]) -> int | None:
    """The minutes (a multiple of 15, up to 14 hours either way) by which the group's offsets are
    the incident's time read in another time zone; None if no such shift explains them all."""
    for minutes in sorted(range(-14 * 60, 14 * 60 + 1, 15), key=abs):
        if minutes and _offsets_at(lab, lab.incident_ms + minutes * 60_000, ends) == now:
            return minutes
    return None


def _check_answers(report: Report, lab: Lab, answers: dict, replay: dict[int, int]) -> None:
    truth = {"orders_partitions": ORDERS_PARTITIONS, "orders_retention_ms_before": int(ORDERS_CONFIGS["retention.ms"]),
             "orders_to_bill_again": sum(replay.values())}
    where = {"orders_partitions": "topics --describe",
             "orders_retention_ms_before": _("configs --describe (before your change)"),
             "orders_to_bill_again": _("the LAG column of consumer-groups --describe, after the reset")}
    for key, value in truth.items():
        given = answers.get(key)
        report.check(_as_int(given) == value, f"ANSWERS[{key!r}] = {value}",
                     _("ANSWERS[{key!r}] is {given!r}; read it from {where}.").format(
                         key=key, given=given, where=where[key]))


def _as_int(value: Any) -> int | None:  # an answer the learner wrote: any type at all
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
