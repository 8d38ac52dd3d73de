"""K consumers join K new groups at the same moment: the "join, broker's part" of bench/room.py
without the rest of the room, so that a change to the broker is measured in seconds.

    python bench/joins.py                          # K = 25 and 50, classic groups, `minikafka serve --in-memory`
    python bench/joins.py --joins 1 --cold 4       # the first join a fresh broker sees, 4 brokers
    python bench/joins.py --source /tmp/old        # also a broker from another checkout, in turns with this one
    python bench/joins.py --protocol consumer      # KIP-848 groups instead
    python bench/joins.py --bootstrap 127.0.0.1:9092   # any running cluster (with an initial delay of 0)

Each group is new, has one member and a 3-partition topic of its own; the K members are made in
threads (confluent-kafka, as the room's learners) and subscribe together. Two figures per join:
the broker's part (the round trips of JoinGroup and SyncGroup, or ConsumerGroupHeartbeat, that
librdkafka logs, counted as room.py counts them) and the whole time from ``subscribe`` to the
first assignment (with the client's own steps: finding the coordinator, connecting, metadata).
Under them, the CPU time the broker process used per join, which the machine's other load
changes much less than it changes latencies.

A fresh broker's first round (``--cold``) is reported apart: it is where one-time costs show
(a request version's first use, the creation of ``__consumer_offsets``), ``--settle`` seconds
after the broker started; the further rounds (``--rounds`` for each K) run on the last fresh
broker. The brokers the bench starts have
``group.initial.rebalance.delay.ms=0`` and run at niceness ``--broker-nice`` when allowed, as in
room.py. ``--source`` adds brokers run from other source trees (a directory holding a
``minikafka`` package, e.g. ``git archive <commit> minikafka | tar -x -C /tmp/old``); they
take turns with this checkout's, so both see the same machine.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _room_learner import QUIET, Member, Recorder

PARTITIONS = 3
ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def serve(source: Path, on_disk: bool, nice: int) -> Iterator[tuple[str, int]]:
    """(bootstrap, pid) of a ``minikafka serve`` run from ``source``, at niceness ``nice`` when allowed."""
    def priority() -> None:
        with contextlib.suppress(OSError):
            os.nice(nice)

    data = tempfile.mkdtemp(prefix="mk-joins-")
    store = ["--data-dir", data] if on_disk else ["--in-memory"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(source), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "minikafka.cli.main", "serve", "--port", "0", *store,
                             "--log-level", "WARNING", "--config", "group.initial.rebalance.delay.ms=0"],
                            stdout=subprocess.PIPE, text=True, env=env, cwd=source, preexec_fn=priority)
    try:
        line = proc.stdout.readline()
        if "listening on" not in line:
            raise SystemExit(f"broker did not start: {line!r}")
        yield line.split("listening on ")[1].split()[0], proc.pid
    finally:
        proc.terminate()
        proc.wait(20)
        shutil.rmtree(data, ignore_errors=True)


def create_topics(bootstrap: str, topics: list[str]) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap, **QUIET})
    for future in admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in topics]).values():
        future.result(30)


def one_round(bootstrap: str, topics: list[str], protocol: str, rec: Recorder) -> list[float]:
    """One member per topic joins a new group, all at once; the seconds from each ``subscribe``
    to its first assignment (the broker's part goes into ``rec``)."""
    run = uuid.uuid4().hex[:6]
    go, joined, lock = threading.Barrier(len(topics)), [], threading.Lock()
    members: list[Member] = []

    def join(index: int, topic: str) -> None:
        conf = {"bootstrap.servers": bootstrap, "group.id": f"joins-{run}-{index}", "group.protocol": protocol,
                "auto.offset.reset": "earliest", "round_trips": True, **QUIET}
        if protocol == "classic":
            conf.update({"heartbeat.interval.ms": 1000, "session.timeout.ms": 10000})
        go.wait()
        start = time.perf_counter()
        member = Member(rec, conf, topic)
        with lock:
            members.append(member)
        deadline = time.monotonic() + 30
        while not member.owned and time.monotonic() < deadline:
            time.sleep(0.001)
        if member.owned:
            with lock:
                joined.append(time.perf_counter() - start)
        else:
            rec.error("no assignment within 30 s")

    threads = [threading.Thread(target=join, args=(i, t)) for i, t in enumerate(topics)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for member in members:
        member.halt.set()
    for member in members:
        member.stop()
    return joined


def broker_cpu(pid: int) -> float:
    """CPU seconds (user and system) a process has used, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def line(name: str, values: list[float]) -> str:
    if not values:
        return f"{name:<40}{0:>6}"
    return (f"{name:<40}{len(values):>6}{1000 * statistics.median(values):>10.1f}"
            f"{1000 * percentile(values, 99):>10.1f}{1000 * max(values):>10.1f}")


def measure(bootstrap: str, pid: int | None, topics: list[str], rounds: int, protocol: str, name: str) -> int:
    """``rounds`` rounds of ``len(topics)`` joins; prints their figures, returns the error count."""
    rec, whole = Recorder(), []
    cpu = broker_cpu(pid) if pid else 0.0
    for _ in range(rounds):
        whole += one_round(bootstrap, topics, protocol, rec)
    print(line(f"{name}: broker's part", [v for vs in rec.samples.values() for v in vs]))
    print(line(f"{name}: subscribe to assigned", whole))
    if pid:
        print(f"{name}: broker CPU {1000 * (broker_cpu(pid) - cpu) / max(1, len(whole)):.1f} ms per join")
    for what, count in rec.errors.items():
        print(f"  error x{count}: {what}")
    return sum(rec.errors.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--joins", type=int, nargs="+", default=[25, 50], help="K: simultaneous joins per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds for each K, after the cold ones")
    parser.add_argument("--cold", type=int, default=2, help="fresh brokers, each with one round of the largest K")
    parser.add_argument("--settle", type=float, default=5.0,
                        help="seconds between a broker's start and its first round (room.py's learners take 6 s "
                             "to open their clients)")
    parser.add_argument("--protocol", choices=["classic", "consumer"], default="classic")
    parser.add_argument("--source", action="append", default=[], type=Path,
                        help="also run brokers from this source tree (repeatable), in turns with this checkout's")
    parser.add_argument("--bootstrap", help="a running cluster instead of brokers the bench starts")
    parser.add_argument("--on-disk", action="store_true", help="the broker keeps its log on disk (as in room.py)")
    parser.add_argument("--broker-nice", type=int, default=-10,
                        help="niceness of the brokers the bench starts (negative needs root; ignored otherwise)")
    args = parser.parse_args()

    print(f"{args.protocol + ' joins':<40}{'count':>6}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}")
    k = max(args.joins)
    if args.bootstrap:
        topics = [f"joins-{uuid.uuid4().hex[:6]}-{i}" for i in range(k)]
        create_topics(args.bootstrap, topics)
        return 1 if sum(measure(args.bootstrap, None, topics[:n], args.rounds, args.protocol, f"K={n}")
                        for n in args.joins) else 0
    sources = [ROOT, *args.source]
    errors, cold = 0, max(1, args.cold)
    for fresh in range(cold):
        for source in sources:
            tag = "" if len(sources) == 1 else f"[{source}] "
            with serve(source, args.on_disk, args.broker_nice) as (bootstrap, pid):
                started = time.monotonic()
                topics = [f"joins-{uuid.uuid4().hex[:6]}-{i}" for i in range(k)]
                create_topics(bootstrap, topics)
                time.sleep(max(0.0, started + args.settle - time.monotonic()))
                errors += measure(bootstrap, pid, topics, 1, args.protocol, f"{tag}cold #{fresh + 1} K={k}")
                if fresh == cold - 1:
                    for n in args.joins:
                        errors += measure(bootstrap, pid, topics[:n], args.rounds, args.protocol, f"{tag}K={n}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
