"""``minikafka acls``: add, list and remove ACLs, shaped like Kafka's ``kafka-acls.sh``.

    minikafka acls --bootstrap-server B --command-config admin.properties \\
        --add --allow-principal User:alice --operation Write --operation Describe --topic orders
    minikafka acls --bootstrap-server B --add --allow-principal User:bob --consumer --topic orders --group billing
    minikafka acls --bootstrap-server B --list [--topic orders] [--principal User:alice]
    minikafka acls --bootstrap-server B --remove --allow-principal User:alice --operation Write --topic orders

Same options as Kafka's script: principals and hosts to allow or deny, operations
(``All`` when none is given), one or more resources (``--topic``, ``--group``,
``--transactional-id``, ``--cluster``) with ``--resource-pattern-type`` (``literal``
by default, ``prefixed``; ``--list`` and ``--remove`` also take ``any`` and ``match``),
and the ``--producer``/``--consumer`` shortcuts. It is a plain Kafka client (the
AdminClient's CreateAcls, DescribeAcls and DeleteAcls), so it works against any
cluster with an authorizer; ``--command-config`` gives it the login.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from .common import add_bootstrap, admin, describe_client_error

if TYPE_CHECKING:
    from confluent_kafka.admin import AclBinding, AdminClient

RESOURCE_OPTIONS = (("topic", "TOPIC"), ("group", "GROUP"), ("transactional_id", "TRANSACTIONAL_ID"))
OPERATIONS = ("All", "Read", "Write", "Create", "Delete", "Alter", "Describe", "ClusterAction", "DescribeConfigs",
              "AlterConfigs", "IdempotentWrite")


class CliError(Exception):
    """A problem the user can act on; printed as one sentence, exit status 1."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minikafka acls", description="Add, list and remove ACLs.")
    add_bootstrap(p)
    action = p.add_mutually_exclusive_group(required=True)
    for name in ("--add", "--remove", "--list"):
        action.add_argument(name, action="store_true")
    for name in ("--allow-principal", "--deny-principal", "--allow-host", "--deny-host", "--operation"):
        p.add_argument(name, action="append", default=[])
    p.add_argument("--principal", help="with --list: only this principal's ACLs")
    p.add_argument("--topic", action="append", default=[])
    p.add_argument("--group", action="append", default=[])
    p.add_argument("--transactional-id", action="append", default=[])
    p.add_argument("--cluster", action="store_true", help="the cluster resource (kafka-cluster)")
    p.add_argument("--resource-pattern-type", default=None, choices=("literal", "prefixed", "any", "match"),
                   type=str.lower)
    p.add_argument("--producer", action="store_true", help="Write, Describe and Create on the topics")
    p.add_argument("--idempotent", action="store_true", help="with --producer: IdempotentWrite on the cluster")
    p.add_argument("--consumer", action="store_true", help="Read and Describe on the topics, Read on the group")
    p.add_argument("--force", action="store_true", help="accepted for Kafka's scripts: nothing is asked here")
    return p


def main(argv: list[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    try:
        client = admin(args.bootstrap_server)
        if args.list:
            return _list(client, args)
        bindings = _bindings(args)
        (_add if args.add else _remove)(client, bindings)
        return 0
    except CliError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1


# -- what the options mean -------------------------------------------------------------------------
def _resources(args: argparse.Namespace, default_pattern: str) -> list[tuple[str, str, str]]:
    """(resource type, name, pattern type) of every resource named."""
    pattern = (args.resource_pattern_type or default_pattern).upper()
    found = [(kind, name, pattern) for option, kind in RESOURCE_OPTIONS for name in getattr(args, option)]
    if args.cluster or (args.producer and args.idempotent):
        found.append(("BROKER", "kafka-cluster", "LITERAL"))
    return found


def _operations(args: argparse.Namespace, kind: str) -> list[str]:
    """What the shortcuts mean for each resource type, as Kafka's script defines them."""
    if args.producer or args.consumer:
        ops = set()
        if args.producer:
            ops |= {"TOPIC": {"WRITE", "DESCRIBE", "CREATE"}, "TRANSACTIONAL_ID": {"WRITE", "DESCRIBE"},
                    "BROKER": {"IDEMPOTENT_WRITE"}}.get(kind, set())
        if args.consumer:
            ops |= {"TOPIC": {"READ", "DESCRIBE"}, "GROUP": {"READ"}}.get(kind, set())
        return sorted(ops)
    return [_operation(o) for o in args.operation] or ["ALL"]


def _operation(text: str) -> str:
    by_name = {o.lower(): o for o in OPERATIONS}
    if text.lower() not in by_name:
        raise CliError(f"{text!r} is not an operation; use one of {', '.join(OPERATIONS)}.")
    name = by_name[text.lower()]
    return {"ClusterAction": "CLUSTER_ACTION", "DescribeConfigs": "DESCRIBE_CONFIGS",
            "AlterConfigs": "ALTER_CONFIGS", "IdempotentWrite": "IDEMPOTENT_WRITE"}.get(name, name.upper())


def _principals(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """(principal, host, ALLOW|DENY) pairs; hosts default to every host, ``*``."""
    out = []
    for permission, principals, hosts in (("ALLOW", args.allow_principal, args.allow_host),
                                          ("DENY", args.deny_principal, args.deny_host)):
        for principal in principals:
            if ":" not in principal:
                raise CliError(f"{principal!r} is not a principal: write it as User:name.")
            out += [(principal, host, permission) for host in hosts or ["*"]]
    return out


def _bindings(args: argparse.Namespace) -> list[AclBinding]:
    from confluent_kafka.admin import AclBinding
    principals, resources = _principals(args), _resources(args, "literal")
    if not principals:
        raise CliError("Name who the ACL is for with --allow-principal or --deny-principal.")
    if not resources:
        raise CliError("Name a resource: --topic, --group, --transactional-id or --cluster.")
    if args.add and any(pattern in ("ANY", "MATCH") for _, _, pattern in resources):
        raise CliError("--add takes --resource-pattern-type literal or prefixed.")
    if args.consumer and not args.group and args.add:
        raise CliError("--consumer needs the group the consumers use: add --group.")
    return [AclBinding(kind, name, pattern, principal, host, op, permission)
            for kind, name, pattern in resources for op in _operations(args, kind)
            for principal, host, permission in principals]


# -- the three actions ------------------------------------------------------------------------------
def _wait(futures: dict[Any, Future] | list[Future]) -> list:
    results = []
    for future in (futures.values() if isinstance(futures, dict) else futures):
        try:
            results.append(future.result(timeout=30))
        except Exception as e:  # noqa: BLE001 - a sentence for the user
            raise CliError(describe_client_error(e)) from None
    return results


def _add(client: AdminClient, bindings: list[AclBinding]) -> None:
    _wait(client.create_acls(bindings))
    _print("Adding ACLs for resource", bindings)


def _remove(client: AdminClient, bindings: list[AclBinding]) -> None:
    from confluent_kafka.admin import AclBindingFilter
    filters = [AclBindingFilter(b.restype, b.name, b.resource_pattern_type, b.principal, b.host, b.operation,
                                b.permission_type) for b in bindings]
    removed = [b for result in _wait(client.delete_acls(filters)) for b in result]
    _print("Removed ACLs for resource", removed) if removed else print("No ACL matched; nothing was removed.")


def _list(client: AdminClient, args: argparse.Namespace) -> int:
    from confluent_kafka.admin import AclBindingFilter
    _require_describe(client)
    resources: list[tuple[str, str | None, str]] = [*_resources(args, "any")] or [("ANY", None, "ANY")]
    principal = args.principal
    found = []
    for kind, name, pattern in resources:
        # confluent-kafka types a filter's name and host as str (inherited from AclBinding), but None is
        # what matches any, as its documentation says: a gap in its annotations.
        acl_filter = AclBindingFilter(kind, name, pattern, principal, None, "ANY", "ANY")  # type: ignore[arg-type]
        [result] = _wait([client.describe_acls(acl_filter)])
        found += result
    _print("Current ACLs for resource", found)
    return 0


def _require_describe(client: AdminClient) -> None:
    """Refuse, as Kafka's tool does, a login that may not describe the cluster's ACLs.

    Kafka answers DescribeAcls from such a login with CLUSTER_AUTHORIZATION_FAILED, but
    confluent-kafka 2.16 hands back an empty list instead of the error, which would print
    as "no ACLs". DescribeCluster's authorized operations (KIP-430) tell the two apart: a
    login that may not describe the cluster gets none.
    """
    from confluent_kafka.admin import AclOperation
    try:
        described = client.describe_cluster(include_authorized_operations=True, request_timeout=15).result(15)
    except Exception:  # noqa: BLE001 - an older cluster without DescribeCluster: DescribeAcls answers alone
        return
    allowed = described.authorized_operations
    if allowed is None or not ({AclOperation.DESCRIBE, AclOperation.ALTER, AclOperation.ALL} & set(allowed)):
        raise CliError("CLUSTER_AUTHORIZATION_FAILED: this login may not list ACLs; that takes Describe on the "
                       "cluster (--operation Describe --cluster), which administrators have.")


def _print(title: str, bindings: Iterable[Any]) -> None:
    # AclBindings; Any because confluent-kafka types their fields as the enum, str or int given to the
    # constructor, while a binding holds the enum (.name) once made
    by_resource = defaultdict(list)
    for b in bindings:
        key = (b.restype.name.replace("BROKER", "CLUSTER"), b.name, b.resource_pattern_type.name)
        by_resource[key].append(b)
    for (kind, name, pattern), entries in sorted(by_resource.items()):
        print(f"{title} `ResourcePattern(resourceType={kind}, name={name}, patternType={pattern})`:")
        for b in sorted(entries, key=lambda b: (b.principal, b.operation.name, b.permission_type.name)):
            print(f" \t(principal={b.principal}, host={b.host}, operation={b.operation.name}, "
                  f"permissionType={b.permission_type.name})")
        print()
