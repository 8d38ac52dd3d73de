"""``minikafka leader-election``: elect partition leaders (kafka-leader-election.sh).

The same flags as Kafka's script, against any Kafka cluster::

    minikafka leader-election --bootstrap-server B --election-type PREFERRED --all-topic-partitions
    minikafka leader-election --bootstrap-server B --election-type UNCLEAN --topic T --partition 0
    minikafka leader-election --bootstrap-server B --election-type PREFERRED --path-to-json-file parts.json

PREFERRED gives each partition back to its first replica (after a broker returned);
UNCLEAN gives a partition without a leader an out-of-sync one, accepting the loss of what
only the old leader had. ``parts.json`` is ``{"partitions": [{"topic": "t", "partition": 0}]}``.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .cluster_admin import CliError, add_bootstrap, connect, error_text, read_json, run

if TYPE_CHECKING:
    from kafka.admin import KafkaAdminClient

TYPES = {"PREFERRED": 0, "UNCLEAN": 1}
NOT_NEEDED = 84  # ELECTION_NOT_NEEDED


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minikafka leader-election",
                                description="Elect partition leaders, like kafka-leader-election.sh.")
    add_bootstrap(p)
    p.add_argument("--election-type", required=True, type=str.upper, choices=list(TYPES),
                   help="PREFERRED: the first replica leads again; UNCLEAN: a leaderless partition gets any replica")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--all-topic-partitions", action="store_true", help="every partition of the cluster")
    which.add_argument("--topic", help="one topic (with --partition)")
    which.add_argument("--path-to-json-file", metavar="FILE", help='{"partitions": [{"topic": "t", "partition": 0}]}')
    p.add_argument("--partition", type=int, help="with --topic: the partition")
    return p


def _partitions(args: argparse.Namespace) -> dict[str, list[int]] | None:
    """The partitions asked for, by topic; None for every partition."""
    if args.all_topic_partitions:
        return None
    if args.topic is not None:
        if args.partition is None:
            raise CliError("--topic needs --partition (or use --all-topic-partitions or --path-to-json-file).")
        return {args.topic: [args.partition]}
    spec = read_json(args.path_to_json_file, "partitions file")
    entries = spec.get("partitions") if isinstance(spec, dict) else None
    if not isinstance(entries, list) or not entries or not all(
            isinstance(e, dict) and isinstance(e.get("topic"), str) and isinstance(e.get("partition"), int)
            for e in entries):
        raise CliError(f'{args.path_to_json_file} must look like {{"partitions": [{{"topic": "t", "partition": 0}}]}}.')
    out: dict[str, list[int]] = {}
    for e in entries:
        out.setdefault(e["topic"], []).append(e["partition"])
    return out


def elect(admin: KafkaAdminClient, election: str, partitions: dict[str, list[int]] | None) -> int:
    from kafka.errors import for_code
    response = admin.elect_leaders(TYPES[election], partitions, raise_errors=False)
    if getattr(response, "error_code", 0):
        raise CliError(error_text(for_code(response.error_code)))
    done: list[tuple[str, int, str | None]] = []
    noop: list[tuple[str, int, str | None]] = []
    failed: list[tuple[str, int, str | None]] = []
    for result in response.replica_election_results:
        for p in result.partition_result:
            tp = f"{result.topic}-{p.partition_id}"
            code = p.error_code
            (done if code == 0 else noop if code == NOT_NEEDED else failed).append((tp, code, p.error_message))
    if done:
        print(f"Successfully completed leader election ({election}) for partitions {', '.join(t for t, *_ in done)}")
    if noop:
        print(f"Valid replica already elected for partitions {', '.join(t for t, *_ in noop)}")
    for tp, code, message in failed:
        print(f"Error completing leader election ({election}) for partition: {tp}: {error_text(code)}"
              + (f" ({message})" if message else ""))
    if failed:
        raise CliError(f"{len(failed)} replica(s) could not be elected.")
    return 0


def main(argv: list[str]) -> int:
    def body(args: argparse.Namespace) -> int:
        partitions = _partitions(args)
        admin = connect(args.bootstrap_server)
        try:
            return elect(admin, args.election_type, partitions)
        finally:
            admin.close()
    return run(build_parser(), argv, body)
