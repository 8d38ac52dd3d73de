"""Consume-transform-produce with transactions survives being killed at random points:
the output holds every input record exactly once."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

from confluent_kafka import Producer

from tests.transactions.helpers import read_topic

INPUTS = 1000
PARTITIONS = 3


def start_worker(bootstrap: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.transactions.ctp_worker", bootstrap, "100000"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=os.getcwd())


def test_killed_worker_never_loses_or_duplicates(cluster, bootstrap):
    cluster.create_topic("input", PARTITIONS)
    cluster.create_topic("output", PARTITIONS)
    p = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random"})
    for i in range(INPUTS):
        p.produce("input", b"record-%04d" % i, str(i))
    assert p.flush(30) == 0
    expected = sorted(b"RECORD-%04d" % i for i in range(INPUTS))
    rng = random.Random(99)
    kills, committed_before = 0, 0
    deadline = time.monotonic() + 150
    while time.monotonic() < deadline and (kills < 4 or committed_before < INPUTS // 2) and kills < 20:
        worker = start_worker(bootstrap)
        time.sleep(rng.uniform(1.0, 3.0))  # let it run a random while, then kill it mid-flight
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        kills += 1
        committed_before = len(read_topic(bootstrap, "output", PARTITIONS, timeout=5))
    # The killed workers made progress, and left records of unfinished transactions behind.
    written_before = len(read_topic(bootstrap, "output", PARTITIONS, "read_uncommitted", timeout=5))
    assert 0 < committed_before < INPUTS and written_before > committed_before
    worker = start_worker(bootstrap)  # a last, unharmed run finishes the backlog
    try:
        got = []
        while time.monotonic() < deadline + 60:
            got = sorted(v for _, _, v in read_topic(bootstrap, "output", PARTITIONS, timeout=5))
            if len(got) >= INPUTS:
                break
    finally:
        worker.terminate()
        worker.wait(10)
    assert kills >= 4
    assert got == expected  # every input once: nothing lost, nothing duplicated
