"""``minikafka reassign-partitions``: move partitions between brokers (kafka-reassign-partitions.sh).

The same verbs, flags and JSON files as Kafka's script, against any Kafka cluster::

    minikafka reassign-partitions --bootstrap-server B --generate \\
        --topics-to-move-json-file topics.json --broker-list 1,2,3    # propose a plan
    minikafka reassign-partitions --bootstrap-server B --execute \\
        --reassignment-json-file plan.json [--throttle BYTES_PER_S]    # start moving
    minikafka reassign-partitions --bootstrap-server B --verify --reassignment-json-file plan.json
    minikafka reassign-partitions --bootstrap-server B --cancel --reassignment-json-file plan.json
    minikafka reassign-partitions --bootstrap-server B --list

``topics.json`` is ``{"topics": [{"topic": "orders"}], "version": 1}``; a plan is
``{"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [2, 3],
"log_dirs": ["any", "any"]}]}``. ``--execute`` prints the current assignment to keep for
a rollback. ``--throttle`` limits the copy to new replicas (KIP-73) until ``--verify``
sees every move completed and removes the throttle.
"""

from __future__ import annotations

import argparse
import random
from typing import TYPE_CHECKING, TypeVar

from . import reassignment_plan as plan
from .cluster_admin import CliError, add_bootstrap, connect, error_text, partitions_of, run
from .reassignment_plan import TopicPartition

if TYPE_CHECKING:
    from kafka.admin import KafkaAdminClient

T = TypeVar("T")

RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
REPLICA_LISTS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minikafka reassign-partitions",
                                description="Move partition replicas between brokers (kafka-reassign-partitions.sh).")
    add_bootstrap(p)
    action = p.add_mutually_exclusive_group(required=True)
    for name, text in (("--generate", "propose a plan moving the topics of --topics-to-move-json-file"),
                       ("--execute", "start the moves of --reassignment-json-file"),
                       ("--verify", "report the moves of --reassignment-json-file; remove throttles when done"),
                       ("--cancel", "cancel the moves of --reassignment-json-file"),
                       ("--list", "list the moves in progress")):
        action.add_argument(name, action="store_true", help=text)
    p.add_argument("--topics-to-move-json-file", metavar="FILE", help='{"topics": [{"topic": "t"}], "version": 1}')
    p.add_argument("--broker-list", metavar="1,2,3", help="with --generate: the brokers to spread the replicas over")
    p.add_argument("--reassignment-json-file", metavar="FILE", help="a plan, as --generate prints it")
    p.add_argument("--throttle", type=int, default=-1, metavar="BYTES_PER_S",
                   help="with --execute: replication byte rate for the moving replicas")
    p.add_argument("--replica-alter-log-dirs-throttle", type=int, default=-1, metavar="BYTES_PER_S",
                   help="accepted for compatibility; log directory moves are not throttled")
    p.add_argument("--additional", action="store_true", help="with --execute: add to moves already in progress")
    p.add_argument("--preserve-throttles", action="store_true", help="with --verify/--cancel: keep the throttles")
    p.add_argument("--disable-rack-aware", action="store_true", help="accepted; racks are not considered")
    p.add_argument("--timeout", type=int, default=10000, help="accepted for compatibility (ms)")
    return p


def _need(value: T | None, flag: str, action: str) -> T:
    if not value:
        raise CliError(f"{action} needs {flag}.")
    return value


# -- --generate ------------------------------------------------------------------------------
def generate(admin: KafkaAdminClient, args: argparse.Namespace) -> None:
    spec = plan.read_json(_need(args.topics_to_move_json_file, "--topics-to-move-json-file", "--generate"),
                          "topics-to-move file")
    topics = plan.topics_to_move(spec)
    brokers = plan.broker_list(_need(args.broker_list, "--broker-list", "--generate"))
    current = partitions_of(admin, topics)
    proposed = {t: plan.spread(len(parts), len(parts[0]["replica_nodes"]), brokers, random.Random())
                for t, parts in current.items() if parts}
    print("Current partition replica assignment")
    print(plan.to_json({(t, p["partition_index"]): p["replica_nodes"] for t, ps in current.items() for p in ps}))
    print("\nProposed partition reassignment configuration")
    print(plan.to_json({(t, i): r for t, reps in proposed.items() for i, r in enumerate(reps)}))


# -- --execute ---------------------------------------------------------------------------------
def execute(admin: KafkaAdminClient, args: argparse.Namespace) -> None:
    wanted, dirs = plan.read_plan(_need(args.reassignment_json_file, "--reassignment-json-file", "--execute"))
    current = plan.current_replicas(admin, wanted)
    if admin.list_partition_reassignments() and not args.additional:
        raise CliError("Cannot execute because there is an existing partition assignment. Use --additional to "
                       "override this and create a new partition assignment in addition to the existing one.")
    print("Current partition replica assignment\n")
    print(plan.to_json(current))
    print("\nSave this to use as the --reassignment-json-file option during rollback")
    if args.throttle >= 0:
        _throttle(admin, current, wanted, args.throttle)
    _reassign(admin, wanted)
    names = ",".join(plan.name(tp) for tp in sorted(wanted))
    print(f"Successfully started partition reassignment{'s' if len(wanted) > 1 else ''} for {names}")
    if dirs:
        _move_log_dirs(admin, dirs)


def _reassign(admin: KafkaAdminClient, wanted: dict[TopicPartition, list[int]]) -> None:
    from kafka.structs import TopicPartition
    result = admin.alter_partition_reassignments({TopicPartition(t, p): r for (t, p), r in wanted.items()})
    failed = {(tp.topic, tp.partition): err for tp, err in result.items() if err is not None and err.errno}
    if failed:
        lines = "\n".join(f"{plan.name(tp)}: {error_text(err)}" for tp, err in sorted(failed.items()))
        raise CliError(f"Error reassigning partition(s):\n{lines}")


def _move_log_dirs(admin: KafkaAdminClient, dirs: dict[tuple[str, int, int], str]) -> None:
    result = admin.alter_replica_log_dirs({(t, p, b): d for (t, p, b), d in dirs.items()})
    failed = [f"{r.topic}-{r.partition}-{r.broker_id}: {error_text(e)}" for r, e in result.items() if e.errno]
    if failed:
        raise CliError("Error moving replica(s) between log directories:\n" + "\n".join(failed))
    print("Successfully started log directory move for: " +
          ",".join(f"{t}-{p}-{b}" for t, p, b in sorted(dirs)))


def _throttle(admin: KafkaAdminClient, current: dict[TopicPartition, list[int]],
              wanted: dict[TopicPartition, list[int]], rate: int) -> None:
    leader, follower = plan.throttled_replicas(current, wanted)
    brokers = sorted({b for tp in wanted for b in current[tp] + wanted[tp]})
    _alter(admin, "broker", {str(b): {name: str(rate) for name in RATES} for b in brokers})
    _alter(admin, "topic", {t: {REPLICA_LISTS[0]: leader[t], REPLICA_LISTS[1]: follower.get(t, "")}
                            for t in leader})
    print("Warning: You must run --verify periodically, until the reassignment completes, to ensure the "
          "throttle is removed.")
    print(f"The inter-broker throttle limit was set to {rate} B/s")


def _alter(admin: KafkaAdminClient, kind: str, changes: dict[str, dict]) -> None:
    from kafka.admin import ConfigResource, ConfigResourceType
    resource_type = ConfigResourceType.BROKER if kind == "broker" else ConfigResourceType.TOPIC
    resources = [ConfigResource(resource_type, name, configs) for name, configs in changes.items()]
    if not resources:
        return
    answer = admin.alter_configs(resources, incremental=True, raise_on_unknown=False)
    problems = [f"{kind} {name}: {err}" for name, err in answer.get(kind, {}).items() if err not in (None, "OK")]
    if problems:
        raise CliError("Could not change the throttle settings: " + "; ".join(problems))


# -- --verify, --cancel, --list ------------------------------------------------------------------
def verify(admin: KafkaAdminClient, args: argparse.Namespace) -> None:
    wanted, dirs = plan.read_plan(_need(args.reassignment_json_file, "--reassignment-json-file", "--verify"))
    moving = plan.in_progress(admin)
    current = plan.current_replicas(admin, wanted)
    print("Status of partition reassignment:")
    done = True
    for tp in sorted(wanted):
        if tp in moving:
            done = False
            print(f"Reassignment of partition {plan.name(tp)} is still in progress.")
        elif current[tp] == wanted[tp]:
            print(f"Reassignment of partition {plan.name(tp)} is completed.")
        else:
            done = False
            print(f"There is no active reassignment of partition {plan.name(tp)}, but replica set is "
                  f"{plan.ids(current[tp])} rather than {plan.ids(wanted[tp])}.")
    if dirs:
        done &= plan.verify_log_dirs(admin, dirs)
    if done and not args.preserve_throttles:
        _clear_throttles(admin, sorted({t for t, _ in wanted}))


def _clear_throttles(admin: KafkaAdminClient, topics: list[str]) -> None:
    brokers = sorted(b["broker_id"] for b in admin.describe_cluster()["brokers"])
    print(f"\nClearing broker-level throttles on brokers {plan.ids(brokers)}")
    _alter(admin, "broker", {str(b): {name: ("DELETE", None) for name in RATES} for b in brokers})
    for topic in topics:
        print(f"Clearing topic-level throttles on topic {topic}")
    _alter(admin, "topic", {t: {name: ("DELETE", None) for name in REPLICA_LISTS} for t in topics})


def cancel(admin: KafkaAdminClient, args: argparse.Namespace) -> None:
    from kafka.structs import TopicPartition
    wanted, _ = plan.read_plan(_need(args.reassignment_json_file, "--reassignment-json-file", "--cancel"))
    result = admin.alter_partition_reassignments({TopicPartition(t, p): None for t, p in wanted})
    cancelled = sorted((tp.topic, tp.partition) for tp, err in result.items() if err is None or not err.errno)
    idle = sorted((tp.topic, tp.partition) for tp, err in result.items()
                  if err is not None and err.__name__ == "NoReassignmentInProgressError")
    failed = {(tp.topic, tp.partition): err for tp, err in result.items()
              if err is not None and err.errno and (tp.topic, tp.partition) not in idle}
    if cancelled:
        print("Successfully cancelled partition reassignment(s) for: " + ",".join(plan.name(tp) for tp in cancelled))
    if idle:
        print("No reassignment was in progress for: " + ",".join(plan.name(tp) for tp in idle))
    if failed:
        raise CliError("Error cancelling partition reassignment(s):\n" +
                       "\n".join(f"{plan.name(tp)}: {error_text(e)}" for tp, e in sorted(failed.items())))
    if not args.preserve_throttles:
        _clear_throttles(admin, sorted({t for t, _ in wanted}))


def list_moves(admin: KafkaAdminClient, args: argparse.Namespace) -> None:
    moving = plan.in_progress(admin)
    if not moving:
        print("No partition reassignments found.")
        return
    print("Current partition reassignments:")
    for tp, state in sorted(moving.items()):
        print(f"{plan.name(tp)}: replicas: {plan.ids(state['replicas'])}. "
              f"adding: {plan.ids(state['adding_replicas'])}. removing: {plan.ids(state['removing_replicas'])}.")


def main(argv: list[str]) -> int:
    def body(args: argparse.Namespace) -> int:
        admin = connect(args.bootstrap_server)
        try:
            action = next(a for a in ("generate", "execute", "verify", "cancel", "list") if getattr(args, a))
            {"generate": generate, "execute": execute, "verify": verify, "cancel": cancel,
             "list": list_moves}[action](admin, args)
        finally:
            admin.close()
        return 0
    return run(build_parser(), argv, body)

