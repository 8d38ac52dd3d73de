"""The fault run of ``bench/faults.py`` against a ProcessCluster: three brokers and three KRaft
controllers, each its own process, every link between them through a netfault proxy.

    python bench/faults_processes.py --minutes 3 --seed 1

Idempotent acks=all producers write to an rf=3, min.insync.replicas=2 topic while the
nemesis picks at random: SIGKILL a broker (restarted at a later step), SIGKILL the active
controller (restarted at a later step; the time until a new leader answers is measured),
SIGSTOP a broker or a controller for a few seconds, cut a broker from every controller, cut
a broker from the other brokers (no replication either way; clients and controllers still reach
it), or cut or reset the client's link to a broker (healed at a later step). At most one broker and
one controller are out at any time, so a quorum of 3 and min.insync.replicas=2 stay possible.
Then everything is healed and restarted, the run waits until every ISR is full, reads every
partition from offset 0 and checks it with :mod:`minikafka.netfault.history`; the replicas'
logs are read from each broker's log directory (the segment files, as ``minikafka dump-log``
does) below the high watermark and compared.

The figures are printed as one JSON line; the exit status is 1 if the check failed.

Measured on 2 shared cores (``--minutes 3``); the nemesis is the same for a seed, the timing not.
Before four replica fixes found by this run and its 40-second form in CI (KIP-497's maximal ISR; a
diverging fetch resets the follower's known progress; a follower asked into the ISR keeps counting
while the AlterPartition answer is lost, and when the answer says the leadership moved to it),
seed 1 once lost 1,010 and seed 2 76 acknowledged records, and CI's short form 2. After them
(2026-11-28):

- seed 1: 274,877 writes, all acknowledged, 0 lost, 0 duplicated, replicas agree (128,846 /
  90,197 / 55,834 records per partition on each replica); 71 faults (6 broker kills, 10
  controller kills, 6 pauses, 6 broker-controller cuts, 2 broker-broker cuts, 9 client-link
  cuts), 12 partition leader changes, 13 controller elections, a new controller at most 3.98 s
  after a kill.
- seed 2: 296,605 writes, all acknowledged, 0 lost, 0 duplicated, replicas agree; 65 faults,
  6 leader changes, 14 controller elections, at most 3.56 s to a new controller.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import tempfile
import threading
import time
from pathlib import Path
from collections.abc import Sequence
from typing import Any

from bench.faults import TOPIC, run
from minikafka.log.segment import parse_base_offset, scan_batches
from minikafka.netfault.history import Check
from minikafka.processes import ProcessCluster, ask
from minikafka.protocol import codec
from minikafka.records import BatchHeader, CorruptRecordError, iter_records


def partitions_state(pc: ProcessCluster, topic: str = TOPIC) -> dict[int, Any]:
    """Each partition's Metadata entry (leader, leader_epoch, replica_nodes, isr_nodes), asked of a live broker."""
    request = codec.make(codec.request_class(3, 12), topics=None, allow_auto_topic_creation=False,
                         include_topic_authorized_operations=False)
    last: Exception | None = None
    for broker in pc.broker_ids:
        if not pc.alive(broker):
            continue
        try:
            answer = ask((pc.host, pc.ports[broker]), request)
        except OSError as e:
            last = e
            continue
        for t in answer.topics:
            if t.name == topic and t.error_code == 0:
                return {p.partition_index: p for p in t.partitions}
    raise OSError(f"no broker described topic {topic} ({last!r})")


class ProcessTarget:
    """What ``bench.faults.run`` needs of a cluster: a bootstrap address and topic creation."""

    def __init__(self, pc: ProcessCluster) -> None:
        self.pc = pc
        self.bootstrap_servers = pc.bootstrap_servers

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers})
        topic = NewTopic(name, partitions, replication_factor, config={"min.insync.replicas": "2"})
        admin.create_topics([topic])[name].result(30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # until every partition has a leader with a full ISR
            try:
                state = partitions_state(self.pc, name)
                if len(state) == partitions and all(len(p.isr_nodes) == replication_factor and p.leader_id >= 0
                                                    for p in state.values()):
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"topic {name} has no full ISR after 30 s")


class ProcessNemesis:
    """Kills, pauses and link cuts of a ProcessCluster, one broker and one controller out at most."""

    def __init__(self, pc: ProcessCluster, pause: tuple[float, float] = (1.0, 4.0), first: Sequence[str] = ()) -> None:
        """``first``: the kinds of the first faults (``kill-controller``...), before the random ones."""
        assert pc.network is not None, "ProcessNemesis needs links=True"
        self.pc, self.network, self.pause_for = pc, pc.network, pause
        self.first = list(first)
        self.broker_out: tuple[str, int] | None = None  # ("kill" | "cut", broker)
        self.controller_out: int | None = None  # a killed controller
        self.client_cut: int | None = None
        self.recoveries: list[float] = []  # seconds from a controller kill to a new leader answering
        self.elections = 0
        self._epochs_at_start: int | None = None
        self._leader: int | None = pc.active_controller()
        self._stop = threading.Event()
        self._watch = threading.Thread(target=self._watch_leader, name="leader-watch", daemon=True)
        self._watch.start()

    # -- observation -----------------------------------------------------------------------
    def _watch_leader(self) -> None:
        """Count changes of the active controller (each a won election)."""
        while not self._stop.wait(0.2):
            try:
                leader = self.pc.active_controller()
            except (OSError, ValueError):  # a process dies under our feet: ask again next time
                continue
            if leader is not None and leader != self._leader:
                if self._leader is not None:
                    self.elections += 1
                self._leader = leader

    def _epochs(self) -> int:
        return sum(p.leader_epoch for p in partitions_state(self.pc).values())

    def failovers(self) -> int:
        """Partition leader changes: the growth of the leader epochs."""
        try:
            return 0 if self._epochs_at_start is None else self._epochs() - self._epochs_at_start
        except OSError:
            return -1

    def figures(self) -> dict[str, Any]:
        return {
            "controller_elections": self.elections,
            "controller_kills": len(self.recoveries),
            "max_seconds_to_new_controller": round(max(self.recoveries, default=0.0), 2),
        }

    # -- faults -----------------------------------------------------------------------------
    def step(self, rng: random.Random) -> str:
        if self._epochs_at_start is None:
            self._epochs_at_start = self._epochs()
        undo = [f for f, on in (("broker", self.broker_out), ("controller", self.controller_out),
                                ("client", self.client_cut)) if on is not None]
        scripted = self.first.pop(0) if self.first else None
        if undo and not scripted and rng.random() < 0.5:
            return self._undo(rng.choice(undo))
        choices = []
        if self.broker_out is None:
            choices += ["kill-broker", "cut-broker", "cut-peers", "pause"]
        if self.controller_out is None:
            choices += ["kill-controller", "pause"]
        if self.client_cut is None:
            choices += ["cut-client"]
        if not choices:  # a broker and a controller are out already: bring one back
            return self._undo(rng.choice(undo))
        kind = scripted if scripted in choices else rng.choice(choices)
        if kind == "kill-broker":
            victim = rng.choice(self.pc.broker_ids)
            self.pc.kill(victim)
            self.broker_out = ("kill", victim)
            return f"kill-broker {victim}"
        if kind == "cut-broker":
            victim = rng.choice(self.pc.broker_ids)
            for c in self.pc.controller_ids:
                self.network.partition(self.pc.name(victim), self.pc.name(c))
            self.broker_out = ("cut", victim)
            return f"cut-broker {victim} from the controllers"
        if kind == "cut-peers":  # alive, heard by the controllers and the clients, but no replication either way
            victim = rng.choice(self.pc.broker_ids)
            for other in self.pc.broker_ids:
                if other != victim:
                    self.network.partition(self.pc.name(victim), self.pc.name(other))
            self.broker_out = ("peers", victim)
            return f"cut-peers {victim} from the other brokers"
        if kind == "kill-controller":
            return self._kill_controller()
        if kind == "cut-client":
            victim = rng.choice(self.pc.broker_ids)
            how = rng.choice(["partition", "reset"])
            getattr(self.network, how)("client", self.pc.name(victim))
            self.client_cut = victim
            return f"cut-client {how} client-b{victim}"
        # pause: a node that is not already out, for a few seconds (blocking the nemesis meanwhile)
        candidates = [*(self.pc.broker_ids if self.broker_out is None else ()),
                      *(self.pc.controller_ids if self.controller_out is None else ())]
        victim, seconds = rng.choice(candidates), rng.uniform(*self.pause_for)
        self.pc.pause(victim)
        time.sleep(seconds)
        self.pc.resume(victim)
        return f"pause {self.pc.name(victim)} {seconds:.1f}s"

    def _kill_controller(self) -> str:
        victim = self.pc.active_controller()
        if victim is None:
            return "skip kill-controller: no active controller right now"
        killed_at = time.monotonic()
        self.pc.kill(victim)
        self.controller_out = victim
        deadline = killed_at + 60
        while time.monotonic() < deadline:
            leader = self.pc.active_controller()
            if leader is not None and leader != victim:
                self.recoveries.append(time.monotonic() - killed_at)
                return f"kill-controller {victim} (new leader {leader} after {self.recoveries[-1]:.2f}s)"
            time.sleep(0.05)
        self.recoveries.append(float("inf"))
        return f"kill-controller {victim} (no new leader in 60 s)"

    def _undo(self, what: str) -> str:
        if what == "broker" and self.broker_out:
            how, victim = self.broker_out
            self.broker_out = None
            if how == "kill":
                self.pc.start_node(victim)
                return f"restart-broker {victim}"
            others = self.pc.controller_ids if how == "cut" else [b for b in self.pc.broker_ids if b != victim]
            for other in others:
                self.network.heal(self.pc.name(victim), self.pc.name(other))
            return f"heal-broker {victim}" if how == "cut" else f"heal-peers {victim}"
        if what == "controller" and self.controller_out:
            victim, self.controller_out = self.controller_out, None
            self.pc.start_node(victim)
            return f"restart-controller {victim}"
        victim, self.client_cut = self.client_cut, None
        self.network.heal("client", f"b{victim}")
        return f"heal-client b{victim}"

    def heal(self) -> None:
        self.network.heal()
        for node in (*self.pc.broker_ids, *self.pc.controller_ids):
            if self.pc.alive(node):
                self.pc.resume(node)
            else:
                self.pc.start_node(node)
        self.broker_out = self.controller_out = self.client_cut = None
        self.pc.wait_ready(90)
        self._stop.set()
        self._watch.join(5)


def settled(pc: ProcessCluster, timeout: float = 90.0) -> bool:
    """Until every partition's ISR holds all its replicas (``minikafka`` brokers read from Metadata)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = partitions_state(pc)
            if all(sorted(p.isr_nodes) == sorted(p.replica_nodes) for p in state.values()):
                return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


def high_watermarks(pc: ProcessCluster, partitions: int) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": pc.bootstrap_servers, "group.id": "jepsen-hw", "log_level": 2})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=20)[1] for p in range(partitions)}
    finally:
        consumer.close()


def disk_records(directory: Path, below: int) -> list[tuple[int, bytes]]:
    """The data records of a partition directory's segment files below offset ``below``."""
    out: list[tuple[int, bytes]] = []
    segments = sorted((p for p in directory.glob("*.log") if parse_base_offset(p) is not None),
                      key=lambda p: parse_base_offset(p) or 0)
    for path in segments:
        data = path.read_bytes()
        try:
            for _, batch in scan_batches(lambda pos, n, d=data: d[pos:pos + n], len(data)):  # type: ignore[misc]
                if BatchHeader.parse(batch).is_control:
                    continue
                out.extend((r.offset, r.value or b"") for r in iter_records(batch) if r.offset < below)
        except CorruptRecordError:  # a batch being appended at the end: above the high watermark
            pass
    return out


def replica_disks(pc: ProcessCluster, partitions: int) -> dict[int, dict[int, list[tuple[int, bytes]]]]:
    """Each partition's replicas' records below the high watermark, read from their log dirs."""
    hws = high_watermarks(pc, partitions)
    state = partitions_state(pc)
    return {p: {b: disk_records(pc.log_dir(b) / f"{TOPIC}-{p}", hws[p]) for b in state[p].replica_nodes}
            for p in range(partitions)}


def run_processes(data_dir: str | Path, seconds: float, seed: int, producers: int = 3, partitions: int = 3,
                  interval: tuple[float, float] = (1.0, 3.0), verbose: bool = False,
                  first: Sequence[str] = ()) -> tuple[Check, dict[str, Any]]:
    with ProcessCluster(brokers=3, controllers=3, data_dir=data_dir, links=True,
                        config={"min.insync.replicas": 2}) as pc:
        nemesis = ProcessNemesis(pc, first=first)
        read: dict[int, dict[int, list[tuple[int, bytes]]]] = {}

        def replicas() -> dict[int, dict[int, list[tuple[int, bytes]]]]:
            read.update(replica_disks(pc, partitions))
            return read

        result, figures = run(ProcessTarget(pc), seconds, seed, producers, partitions, interval, nemesis,
                              log=(lambda line: print(f"{time.strftime('%H:%M:%S')} {line}", flush=True))
                              if verbose else (lambda line: None),
                              settled=lambda: settled(pc), replicas=replicas)
    # how many records each replica held on disk below the high watermark (the comparison is not vacuous)
    figures["replica_records"] = {p: sorted({len(log) for log in logs.values()}) for p, logs in read.items()}
    return result, figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--producers", type=int, default=3)
    parser.add_argument("--verbose", action="store_true", help="print each fault as it happens")
    parser.add_argument("--data-dir", help="keep the nodes' logs and outputs here (default: a temporary directory)")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        data = args.data_dir or stack.enter_context(tempfile.TemporaryDirectory(prefix="mk-pfaults-"))
        result, figures = run_processes(data, args.minutes * 60, args.seed, args.producers, verbose=args.verbose)
    print(json.dumps(figures))
    for attempt in result.lost[:10]:
        print("lost:", attempt)
    for value, places in list(result.duplicated.items())[:10]:
        print(f"duplicated: {value!r} at (partition, offset) {places}")
    for line in [*result.reordered[:10], *result.diverged[:10]]:
        print(line)
    for error in figures["producer_fatal_errors"]:
        print("fatal producer error:", error)
    raise SystemExit(0 if result.ok and not figures["producer_fatal_errors"] else 1)


if __name__ == "__main__":
    main()
