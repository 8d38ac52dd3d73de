"""Check for lab 08b: lock a cluster down so that each application can do its job and nothing else.

``prepare()`` finds the secured cluster (``kafka_course.secured``: the embedded twin, or the
compose file's ``kafka-secure``), removes every ACL left from an earlier run, and sets the
scene: the topics ``shop.orders``, ``shop.invoices`` and ``payroll`` with a record each, and
four SCRAM users: ``orders-app``, ``billing``, ``auditor`` and ``mallory`` (who should get
nothing). The learner adds ACLs with ``minikafka acls`` (``kafka-acls.sh``), logged in as the
administrator through ``lab.admin_config``.

``check()`` looks at no ACL. It logs in as each user with a real client and tries what the
shop needs (each must work) and what nobody asked for (each must be refused), and names
the likely mistake for every result that is wrong. Two topics, ``shop.refunds`` and
``shop.orders-archive``, are created only when the check runs: an auditor who can read
the first was given a prefix, not a list; anyone else who can reach the second was given
a prefix where one topic was asked for. Then it sweeps: every user against every topic of
the lab (write, read, see it listed: Describe) and every group of the lab (commit in it),
so that a grant wider than a user's job shows wherever it reaches.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..checks import Report
from ..i18n import _

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Message
from ..secured import (ADMIN, OK, SecuredCluster, secured_cluster, try_create_topic, try_read, try_write,
                       visible_topics)

TOPICS = ("shop.orders", "shop.invoices", "payroll")
LATE_TOPIC = "shop.refunds"  # created by the check: only a prefix covers it
ARCHIVE = "shop.orders-archive"  # created by the check: a prefix meant as shop.orders covers it
USERS = ("orders-app", "billing", "auditor", "mallory")
GROUPS = ("billing", "billing-reports", "audit-daily", "audit-refunds", "auditing", "analytics", "orders-app")
SHOP, AUDIT = "shop.", "audit-"  # the auditor's prefixes
_WAIT = 10  # seconds a try of the sweep may take before it counts as refused


def job(user: str) -> dict[str, Callable[[str], bool]]:
    """What ``user`` may do, and nothing more: for "write", "read", "describe" a test of a topic's
    name, for "group" a test of a group's name (Write and Read imply Describe, as in Kafka)."""
    def named(*names: str) -> Callable[[str], bool]:
        return lambda name: name in names
    nothing = named()
    rules = {"orders-app": {"write": named("shop.orders"), "read": nothing, "group": nothing},
             "billing": {"write": named("shop.invoices"), "read": named("shop.orders"), "group": named("billing")},
             "auditor": {"write": nothing, "read": lambda t: t.startswith(SHOP),
                         "group": lambda g: g.startswith(AUDIT)}}.get(user, {})
    write, read = rules.get("write", nothing), rules.get("read", nothing)
    return {"write": write, "read": read, "describe": lambda t: write(t) or read(t),
            "group": rules.get("group", nothing)}


@dataclass
class Lab:
    secure: SecuredCluster
    admin_config: Path

    @property
    def tool_options(self) -> str:
        """``--bootstrap-server ... --command-config ...``: the administrator's login for the tools."""
        return f"--bootstrap-server {self.secure.bootstrap()} --command-config {self.admin_config}"

    def login(self, user: str) -> dict:
        return self.secure.login(user, password(user))


def password(user: str) -> str:
    return f"{user}-secret"


def prepare() -> Lab | None:
    """The shop's secured cluster with no ACLs, its topics and its users; None (after a sentence) elsewhere."""
    secure = secured_cluster("Lab 08b")
    if secure is None:
        return None
    _remove_every_acl(secure)
    admin = secure.admin_login()
    for topic in (*TOPICS, LATE_TOPIC, ARCHIVE):
        _delete_topic(secure, topic)
    for topic in TOPICS:
        try_create_topic(admin, topic)
        try_write(admin, topic, b"the first record")
    for user in USERS:
        secure.add_user(user, password(user))
    config = secure.command_config(*ADMIN, Path(tempfile.mkdtemp(prefix="lab08b-")) / "admin.properties",
                                   mechanism="PLAIN")
    return Lab(secure, config)


def _remove_every_acl(secure: SecuredCluster) -> None:
    from confluent_kafka.admin import (AclBindingFilter, AclOperation, AclPermissionType, ResourcePatternType,
                                       ResourceType)
    client = secure.admin()
    # confluent-kafka types a filter's name, principal and host as str (inherited from AclBinding), but None is
    # what matches any, as its documentation says: a gap in its annotations.
    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,  # type: ignore[arg-type]
                                  AclOperation.ANY, AclPermissionType.ANY)
    for future in client.delete_acls([everything], request_timeout=15).values():
        future.result(15)


def _delete_topic(secure: SecuredCluster, topic: str) -> None:
    import time
    client = secure.admin()
    if topic not in client.list_topics(timeout=10).topics:
        return
    client.delete_topics([topic], request_timeout=15)[topic].result(15)
    deadline = time.monotonic() + 15
    while topic in client.list_topics(timeout=10).topics and time.monotonic() < deadline:
        time.sleep(0.1)


@dataclass(frozen=True)
class Action:
    user: str
    what: str  # said to the learner: "write shop.orders"
    run: Callable[[Lab], str]  # "OK" or an error name
    allowed: bool
    hint: str  # the likely mistake when the result is wrong
    reaches: tuple[tuple[str, str], ...] = ()  # (kind, name) it tries: ("write", topic), ("read", topic), ("group", g)


def actions() -> list[Action]:
    Probe = tuple[Callable[[Lab], str], tuple[tuple[str, str], ...]]

    def write(user: str, topic: str) -> Probe:
        return (lambda lab: try_write(lab.login(user), topic)), (("write", topic),)

    def read(user: str, topic: str, group: str) -> Probe:
        return (lambda lab: try_read(lab.login(user), topic, group)), (("read", topic), ("group", group))

    def act(user: str, what: str, probe: Probe, allowed: bool, hint: str) -> Action:
        return Action(user, what, probe[0], allowed, hint, probe[1])

    late = {"topic": LATE_TOPIC}
    return [
        act("orders-app", _("write shop.orders"), write("orders-app", "shop.orders"), True,
               _("orders-app needs Write (and Describe) on shop.orders: the --producer shortcut gives both.")),
        act("billing", _("read shop.orders in the group billing"), read("billing", "shop.orders", "billing"),
               True, _("a consumer needs Read on the topic and Read on its group: --consumer with --group gives "
                       "both.")),
        act("billing", _("write shop.invoices"), write("billing", "shop.invoices"), True,
               _("billing writes the invoices: it needs Write and Describe on shop.invoices.")),
        act("auditor", _("read shop.orders in the group audit-daily"),
               read("auditor", "shop.orders", "audit-daily"), True,
               _("the auditor reads every shop. topic in groups named audit-...: Read and Describe on the topics, "
                 "Read on the groups.")),
        act("auditor", _("read {topic}, a topic created after your ACLs, in the group audit-refunds").format(**late),
               read("auditor", LATE_TOPIC, "audit-refunds"), True,
               _("{topic} did not exist when you wrote the ACLs: only a prefixed pattern (--resource-pattern-type "
                 "prefixed) covers the shop's future topics and the auditor's future groups.").format(**late)),
        act("orders-app", _("read shop.orders in the group orders-app"),
               read("orders-app", "shop.orders", "orders-app"), False,
               _("orders-app only writes: something gives it Read on shop.orders and on a group (--operation All, "
                 "--consumer, or a grant to everyone).")),
        act("orders-app", _("write shop.invoices"), write("orders-app", "shop.invoices"), False,
               _("orders-app may write shop.orders only: a prefixed pattern such as shop. covers every shop "
                 "topic.")),
        act("billing", _("write shop.orders"), write("billing", "shop.orders"), False,
               _("billing only reads the orders: something gives it Write on shop.orders (--producer, --operation "
                 "All, or a prefix).")),
        act("billing", _("read shop.orders in the group analytics"), read("billing", "shop.orders", "analytics"),
               False, _("billing's group ACL is wider than its own group billing (a '*' group or a prefix).")),
        act("billing", _("read shop.invoices in the group billing"), read("billing", "shop.invoices", "billing"),
               False, _("billing writes the invoices but has no reason to read them: --operation All or "
                        "--consumer on shop.invoices grants Read too.")),
        act("auditor", _("write shop.orders"), write("auditor", "shop.orders"), False,
               _("the auditor only reads: something gives it Write (--operation All, --producer, or a grant to "
                 "everyone).")),
        act("auditor", _("read payroll in the group audit-daily"), read("auditor", "payroll", "audit-daily"),
               False, _("payroll is not a shop. topic: is the auditor's prefix too short, or its topic the '*' "
                        "wildcard?")),
        act("auditor", _("read shop.orders in the group billing"), read("auditor", "shop.orders", "billing"),
               False, _("the auditor's groups start with audit-: a '*' group or a shorter prefix lets it use "
                        "billing's group.")),
        act("mallory", _("read shop.orders in the group audit-mallory"),
               read("mallory", "shop.orders", "audit-mallory"), False,
               _("mallory has no ACL of her own: an ACL for User:* (every principal) lets her in.")),
    ]


def check(lab: Lab | None) -> None:
    """Log in as each user and try what the shop needs and what nobody asked for."""
    if lab is None:
        print(_("Lab 08b's check needs the secured cluster that prepare() found; it is skipped here."))
        return
    admin = lab.secure.admin_login()
    for topic, record in ((LATE_TOPIC, b"a refund"), (ARCHIVE, b"an old order")):
        _delete_topic(lab.secure, topic)
        try_create_topic(admin, topic)
        try_write(admin, topic, record)
    with Report(_("Lab 08b · lock down the shop's cluster")) as report:
        named: set[tuple[str, str, str]] = set()  # (user, kind, name) of the wrong results already said
        for action in actions():
            result = action.run(lab)
            said = {"user": action.user, "what": action.what, "result": result, "hint": action.hint}
            if action.allowed:
                report.check(result == OK, _("{user} can {what}").format(**said),
                             _("{user} could not {what} ({result}): {hint}").format(**said))
            elif not report.check(result != OK, _("{user} cannot {what} ({result})").format(**said),
                                  _("{user} could {what}, which nobody asked for: {hint}").format(**said)):
                named.update((action.user, kind, name) for kind, name in action.reaches)
        for user in USERS:
            _sweep(report, lab, user, named)


# -- the sweep: every user, every topic and group of the lab, every operation ----------------------------
def _sweep(report: Report, lab: Lab, user: str, named: set[tuple[str, str, str]]) -> None:
    """One line per user: what it could do beyond its job (apart from what a line above said)."""
    topics, allowed = (*TOPICS, LATE_TOPIC, ARCHIVE), job(user)
    settings = lab.login(user)
    listed = [t for t in topics if t in visible_topics(settings)]
    hidden = dict.fromkeys(set(topics) - set(listed), "TOPIC_AUTHORIZATION_FAILED")  # Read and Write imply Describe
    found = {"write": {**hidden, **_write_each(settings, tuple(listed))},
             "read": {**hidden, **_read_each(settings, tuple(listed))},
             "describe": {t: OK if t in listed else "hidden" for t in topics},
             "group": _commit_each(settings, GROUPS)}
    extra = [(kind, name) for kind, results in found.items() for name, result in results.items()
             if result == OK and not allowed[kind](name) and (user, kind, name) not in named]
    tried = sum(len(results) for results in found.values())
    report.check(not extra, _("{user} can do nothing else: {tried} tries of every topic, group and operation of "
                              "the lab").format(user=user, tried=tried),
                 _("{user} could also {what}, which nobody asked for: {hints}").format(
                     user=user, what=", ".join(_said(kind, name) for kind, name in extra),
                     hints=" ".join(dict.fromkeys(_why(user, kind, name, extra) for kind, name in extra))))


def _said(kind: str, name: str) -> str:
    return {"write": _("write {name}"), "read": _("read {name}"), "describe": _("see {name} listed (Describe)"),
            "group": _("commit offsets in the group {name}")}[kind].format(name=name)


def _why(user: str, kind: str, name: str, extra: list[tuple[str, str]]) -> str:
    """The likely over-broad grant behind one result."""
    allowed = job(user)
    if user == "mallory":
        return _("mallory has no ACL of her own: an ACL for User:* (every principal) lets her in.")
    if kind == "group":
        stem = next((g for g in GROUPS if allowed["group"](g) and name.startswith(g) and name != g), None)
        if stem:
            return _("A prefixed group ACL for {stem} (--resource-pattern-type prefixed, which --consumer applies to "
                     "--group too) opens every group whose name starts with {stem}, those created later included: "
                     "give the group as a literal name.").format(stem=stem)
        return _("{user}'s group ACL is wider than its job (a '*' group, a prefix too short, or a grant to "
                 "User:*).").format(user=user)
    stem = next((t for t in (*TOPICS, LATE_TOPIC) if allowed["describe"](t) and name.startswith(t) and name != t),
                None)
    if stem:
        return _("A prefixed topic ACL for {stem} covers every topic whose name starts with {stem}, like {name}, "
                 "created after your ACLs: give one topic as a literal name.").format(stem=stem, name=name)
    if kind == "describe" and ("read", name) not in extra and ("write", name) not in extra:
        return _("Describe on topics beyond {user}'s own (a '*' topic, or a grant to User:*) shows their names and "
                 "partitions to {user}: grant Describe with the user's own topics only.").format(user=user)
    return _("Look at the ACLs that name {user}, User:*, a '*' resource or a prefix: one grants more than {user}'s "
             "job.").format(user=user)


def _write_each(settings: dict, topics: tuple[str, ...]) -> dict[str, str]:
    """Produce one record to each topic with one producer: topic -> "OK" or the error's name."""
    import time

    from confluent_kafka import Producer
    if not topics:
        return {}
    producer = Producer({**settings, "message.timeout.ms": _WAIT * 1000})
    results: dict[str | None, str] = {}  # keyed by Message.topic(), which confluent types as optional

    def delivered(err: KafkaError | None, msg: Message) -> None:
        results[msg.topic()] = OK if err is None else err.name()
    for topic in topics:
        producer.produce(topic, b"probe", on_delivery=delivered)
    deadline = time.monotonic() + _WAIT
    while len(results) < len(topics) and time.monotonic() < deadline:
        producer.poll(0.1)
    producer.purge()
    producer.flush(1)
    return {t: results.get(t, "_TIMED_OUT") for t in topics}


def _read_each(settings: dict, topics: tuple[str, ...]) -> dict[str, str]:
    """Fetch the first record of each topic, assigned without a group: topic -> "OK" or the error's name."""
    import time

    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
    if not topics:
        return {}
    consumer = Consumer({**settings, "group.id": "lab08b-sweep", "enable.auto.commit": False,
                         "error_cb": lambda error: None})
    results: dict[str, str] = {}
    try:
        consumer.assign([TopicPartition(t, 0, OFFSET_BEGINNING) for t in topics])
        deadline = time.monotonic() + _WAIT
        while len(results) < len(topics) and time.monotonic() < deadline:
            msg = consumer.poll(0.1)
            topic = None if msg is None else msg.topic()
            if msg is not None and topic is not None and topic in topics and topic not in results:
                error = msg.error()
                if error is None or error.code() >= 0:
                    results[topic] = OK if error is None else error.name()
    finally:
        consumer.close()
    return {t: results.get(t, "_TIMED_OUT") for t in topics}


def _commit_each(settings: dict, groups: tuple[str, ...]) -> dict[str, str]:
    """Commit offset 0 of shop.orders in each group (OffsetCommit needs Read on the group): group ->
    "OK" when the group let the commit through (the topic may still refuse it), else the error's name."""
    from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException, TopicPartition
    from confluent_kafka.admin import AdminClient
    client = AdminClient({**settings})
    results: dict[str, str] = {}
    for group in groups:
        request = [ConsumerGroupTopicPartitions(group, [TopicPartition("shop.orders", 0, 0)])]
        try:
            answer = client.alter_consumer_group_offsets(request, request_timeout=_WAIT)[group].result(_WAIT)
            error = answer.topic_partitions[0].error
            results[group] = error.name() if error is not None and error.name() == _GROUP_DENIED else OK
        except KafkaException as e:
            results[group] = e.args[0].name()
        except Exception as e:  # noqa: BLE001 - a timeout or a refusal: not a grant
            results[group] = type(e).__name__
    return results


_GROUP_DENIED = "GROUP_AUTHORIZATION_FAILED"
