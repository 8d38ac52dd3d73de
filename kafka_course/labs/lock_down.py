"""Check for lab 08b: lock a cluster down so that each application can do its job and nothing else.

``prepare()`` finds the secured cluster (``kafka_course.secured``: the embedded twin, or the
compose file's ``kafka-secure``), removes every ACL left from an earlier run, and sets the
scene: the topics ``shop.orders``, ``shop.invoices`` and ``payroll`` with a record each, and
four SCRAM users: ``orders-app``, ``billing``, ``auditor`` and ``mallory`` (who should get
nothing). The learner adds ACLs with ``minikafka acls`` (``kafka-acls.sh``), logged in as the
administrator through ``lab.admin_config``.

``check()`` looks at no ACL. It logs in as each user with a real client and tries what the
shop needs (each must work) and what nobody asked for (each must be refused), and names
the likely mistake for every result that is wrong. One topic, ``shop.refunds``, is created
only when the check runs: an auditor who can read it was given a prefix, not a list.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..checks import Report
from ..i18n import _
from ..secured import ADMIN, OK, SecuredCluster, secured_cluster, try_create_topic, try_read, try_write

TOPICS = ("shop.orders", "shop.invoices", "payroll")
LATE_TOPIC = "shop.refunds"  # created by the check: only a prefix covers it
USERS = ("orders-app", "billing", "auditor", "mallory")


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
    for topic in (*TOPICS, LATE_TOPIC):
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
    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                                  AclPermissionType.ANY)
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


def actions() -> list[Action]:
    def write(user: str, topic: str) -> Callable[[Lab], str]:
        return lambda lab: try_write(lab.login(user), topic)

    def read(user: str, topic: str, group: str) -> Callable[[Lab], str]:
        return lambda lab: try_read(lab.login(user), topic, group)

    late = {"topic": LATE_TOPIC}
    return [
        Action("orders-app", _("write shop.orders"), write("orders-app", "shop.orders"), True,
               _("orders-app needs Write (and Describe) on shop.orders: the --producer shortcut gives both.")),
        Action("billing", _("read shop.orders in the group billing"), read("billing", "shop.orders", "billing"),
               True, _("a consumer needs Read on the topic and Read on its group: --consumer with --group gives "
                       "both.")),
        Action("billing", _("write shop.invoices"), write("billing", "shop.invoices"), True,
               _("billing writes the invoices: it needs Write and Describe on shop.invoices.")),
        Action("auditor", _("read shop.orders in the group audit-daily"),
               read("auditor", "shop.orders", "audit-daily"), True,
               _("the auditor reads every shop. topic in groups named audit-...: Read and Describe on the topics, "
                 "Read on the groups.")),
        Action("auditor", _("read {topic}, a topic created after your ACLs, in the group audit-refunds").format(**late),
               read("auditor", LATE_TOPIC, "audit-refunds"), True,
               _("{topic} did not exist when you wrote the ACLs: only a prefixed pattern (--resource-pattern-type "
                 "prefixed) covers the shop's future topics and the auditor's future groups.").format(**late)),
        Action("orders-app", _("read shop.orders in the group orders-app"),
               read("orders-app", "shop.orders", "orders-app"), False,
               _("orders-app only writes: something gives it Read on shop.orders and on a group (--operation All, "
                 "--consumer, or a grant to everyone).")),
        Action("orders-app", _("write shop.invoices"), write("orders-app", "shop.invoices"), False,
               _("orders-app may write shop.orders only: a prefixed pattern such as shop. covers every shop "
                 "topic.")),
        Action("billing", _("write shop.orders"), write("billing", "shop.orders"), False,
               _("billing only reads the orders: something gives it Write on shop.orders (--producer, --operation "
                 "All, or a prefix).")),
        Action("billing", _("read shop.orders in the group analytics"), read("billing", "shop.orders", "analytics"),
               False, _("billing's group ACL is wider than its own group billing (a '*' group or a prefix).")),
        Action("billing", _("read shop.invoices in the group billing"), read("billing", "shop.invoices", "billing"),
               False, _("billing writes the invoices but has no reason to read them: --operation All or "
                        "--consumer on shop.invoices grants Read too.")),
        Action("auditor", _("write shop.orders"), write("auditor", "shop.orders"), False,
               _("the auditor only reads: something gives it Write (--operation All, --producer, or a grant to "
                 "everyone).")),
        Action("auditor", _("read payroll in the group audit-daily"), read("auditor", "payroll", "audit-daily"),
               False, _("payroll is not a shop. topic: is the auditor's prefix too short, or its topic the '*' "
                        "wildcard?")),
        Action("auditor", _("read shop.orders in the group billing"), read("auditor", "shop.orders", "billing"),
               False, _("the auditor's groups start with audit-: a '*' group or a shorter prefix lets it use "
                        "billing's group.")),
        Action("mallory", _("read shop.orders in the group audit-mallory"),
               read("mallory", "shop.orders", "audit-mallory"), False,
               _("mallory has no ACL of her own: an ACL for User:* (every principal) lets her in.")),
    ]


def check(lab: Lab | None) -> None:
    """Log in as each user and try what the shop needs and what nobody asked for."""
    if lab is None:
        print(_("Lab 08b's check needs the secured cluster that prepare() found; it is skipped here."))
        return
    admin = lab.secure.admin_login()
    _delete_topic(lab.secure, LATE_TOPIC)
    try_create_topic(admin, LATE_TOPIC)
    try_write(admin, LATE_TOPIC, b"a refund")
    with Report(_("Lab 08b · lock down the shop's cluster")) as report:
        for action in actions():
            result = action.run(lab)
            said = {"user": action.user, "what": action.what, "result": result, "hint": action.hint}
            if action.allowed:
                report.check(result == OK, _("{user} can {what}").format(**said),
                             _("{user} could not {what} ({result}): {hint}").format(**said))
            else:
                report.check(result != OK, _("{user} cannot {what} ({result})").format(**said),
                             _("{user} could {what}, which nobody asked for: {hint}").format(**said))
