"""Consume-transform-produce with transactions survives being killed at random points:
the output holds every input record exactly once."""

from __future__ import annotations

import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time

from confluent_kafka import Producer

from tests.transactions.helpers import read_topic

INPUTS = 1000
KILLS = 5
PARTITIONS = 3


def start_worker(bootstrap: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.transactions.ctp_worker", bootstrap, "100000"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=os.getcwd())


def kill_mid_transaction(worker: subprocess.Popen, commits_first: int, timeout: float = 30) -> bool:
    """Let the worker commit ``commits_first`` transactions, then SIGKILL it as soon as the
    next one has written its output but not committed. False if it finished earlier."""
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line.strip()) for line in worker.stdout], daemon=True).start()
    commits, deadline = 0, time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        commits += line.startswith("committed")
        if line == "in-flight" and commits >= commits_first:
            worker.send_signal(signal.SIGKILL)
            worker.wait()
            return True
    worker.kill()
    worker.wait()
    return False


def test_killed_worker_never_loses_or_duplicates(cluster, bootstrap):
    cluster.create_topic("input", PARTITIONS)
    cluster.create_topic("output", PARTITIONS)
    p = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random"})
    for i in range(INPUTS):
        p.produce("input", b"record-%04d" % i, str(i))
    assert p.flush(30) == 0
    rng = random.Random(99)
    kills = sum(kill_mid_transaction(start_worker(bootstrap), rng.randint(1, 15)) for _ in range(KILLS))
    assert kills == KILLS, "every kill must land inside a transaction"
    committed = len(read_topic(bootstrap, "output", PARTITIONS, timeout=5))
    written = len(read_topic(bootstrap, "output", PARTITIONS, "read_uncommitted", timeout=5))
    assert 0 < committed < INPUTS and written > committed  # partial progress, and aborted output left behind
    worker = start_worker(bootstrap)  # a last, unharmed run finishes the backlog
    try:
        got, deadline = [], time.monotonic() + 60
        while time.monotonic() < deadline and len(got) < INPUTS:
            got = sorted(v for _, _, v in read_topic(bootstrap, "output", PARTITIONS, timeout=5))
    finally:
        worker.kill()
        worker.wait(10)
    assert got == sorted(b"RECORD-%04d" % i for i in range(INPUTS))  # every input once: none lost or doubled
