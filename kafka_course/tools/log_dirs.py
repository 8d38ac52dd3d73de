"""``minikafka log-dirs``: the log directories of brokers and their sizes (kafka-log-dirs.sh).

The same flags and JSON as Kafka's script, against any Kafka cluster::

    minikafka log-dirs --bootstrap-server B --describe [--broker-list 1,2] [--topic-list t1,t2]

For each broker, each log directory with its partitions: size in bytes (of the segment
files), offset lag, and whether it is a *future* log (a replica moving to that directory).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from .cluster_admin import CliError, add_bootstrap, connect, run

if TYPE_CHECKING:
    from kafka.admin import KafkaAdminClient

# The Java exception class kafka-log-dirs.sh names for a directory's error.
JAVA_ERRORS = {56: "org.apache.kafka.common.errors.KafkaStorageException",
               57: "org.apache.kafka.common.errors.LogDirNotFoundException"}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minikafka log-dirs",
                                description="Describe the log directories of brokers, like kafka-log-dirs.sh.")
    add_bootstrap(p)
    p.add_argument("--describe", action="store_true", required=True, help="describe the log directories")
    p.add_argument("--broker-list", metavar="1,2", help="only these brokers (default: all)")
    p.add_argument("--topic-list", metavar="t1,t2", help="only these topics (default: all)")
    return p


def _ids(text: str | None, known: list[int]) -> list[int]:
    if not text:
        return known
    try:
        wanted = [int(b) for b in text.split(",") if b.strip()]
    except ValueError:
        raise CliError(f"--broker-list {text!r} must be broker ids separated by commas, like 1,2.") from None
    missing = [b for b in wanted if b not in known]
    if missing:
        raise CliError(f"The given brokers do not exist from --broker-list: {','.join(map(str, missing))}. "
                       f"Current existent brokers: {','.join(map(str, known))}")
    return wanted


def _log_dir(d: dict, topics: set[str] | None) -> dict:
    parts = [{"partition": f"{t['name']}-{p['partition_index']}", "size": p["partition_size"],
              "offsetLag": p["offset_lag"], "isFuture": p["is_future_key"]}
             for t in d["topics"] if topics is None or t["name"] in topics for p in t["partitions"]]
    error = JAVA_ERRORS.get(d["error_code"], f"error {d['error_code']}") if d["error_code"] else None
    return {"logDir": d["log_dir"], "error": error, "partitions": parts}


def describe(admin: KafkaAdminClient, args: argparse.Namespace) -> None:
    known = sorted(b["broker_id"] for b in admin.describe_cluster()["brokers"])
    brokers = _ids(args.broker_list, known)
    topics = {t for t in args.topic_list.split(",") if t} if args.topic_list else None
    print("Querying brokers for log directories information")
    answers = admin.describe_log_dirs(topic_partitions=sorted(topics) if topics else None, brokers=brokers)
    print(f"Received log directory information from brokers {','.join(map(str, brokers))}")
    out = {"version": 1, "brokers": [{"broker": a["broker"], "logDirs": [_log_dir(d, topics) for d in a["log_dirs"]]}
                                     for a in answers]}
    print(json.dumps(out, separators=(",", ":")))


def main(argv: list[str]) -> int:
    def body(args: argparse.Namespace) -> int:
        admin = connect(args.bootstrap_server)
        try:
            describe(admin, args)
        finally:
            admin.close()
        return 0
    return run(build_parser(), argv, body)
