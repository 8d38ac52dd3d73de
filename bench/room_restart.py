"""Restart at room scale: fill a `minikafka serve` data directory with a room's data, SIGKILL the
broker, start it again on the same directory, time how long until it answers, and check that
every acknowledged record is still there.

    python bench/room_restart.py                        # ~1.5 GB over 3,000 partitions
    python bench/room_restart.py --gb 0.2 --partitions 600   # a quick one

The data: one topic per learner (3 partitions each), keyed records of about 1 KB produced with
acks=all and idempotence; every record whose delivery was acknowledged is remembered by
(topic, partition, offset) and its key. Consumer groups commit offsets on a tenth of the topics.
After the restart: the time until the process prints that it listens, until it answers an
ApiVersions request, and until a Metadata request shows every partition with a leader; then a
consumer reads every partition from the start and every acknowledged record must be found at its
offset with its key, and every committed offset must be back.

SIGKILL stops the process, not the machine: what the broker wrote reached the page cache, so
this checks minikafka's recovery of an unclean shutdown (logs, indexes, producer state,
__consumer_offsets), not the disk's (minikafka does not fsync each write, like Kafka by default).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from room import api_keys, free_port

VALUE = 1000


def serve(data: str, port: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "minikafka.cli.main", "serve", "--port", str(port),
                             "--data-dir", data, "--log-level", "WARNING"], stdout=subprocess.PIPE, text=True)


def fill(bootstrap: str, topics: list[str], records: int) -> dict[tuple[str, int], dict[int, bytes]]:
    """Produce ``records`` keyed records over the topics; the acknowledged ones, by partition."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for start in range(0, len(topics), 100):
        futures = admin.create_topics([NewTopic(t, 3, 1) for t in topics[start:start + 100]])
        for future in futures.values():
            future.result(60)
    acked: dict[tuple[str, int], dict[int, bytes]] = {}
    failed = 0

    def delivered(err, msg) -> None:
        nonlocal failed
        if err is not None:
            failed += 1
        else:
            acked.setdefault((msg.topic(), msg.partition()), {})[msg.offset()] = msg.key()

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                         "linger.ms": 20, "batch.size": 1 << 20, "queue.buffering.max.kbytes": 1 << 20})
    value = os.urandom(VALUE)
    per_topic = records // len(topics)
    for i in range(per_topic * len(topics)):  # a learner's records come together: batches fill up
        while True:
            try:
                producer.produce(topics[i // per_topic], key=b"k%d" % i, value=value, on_delivery=delivered)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10000 == 0:
            producer.poll(0)
    records = per_topic * len(topics)
    producer.flush(300)
    print(f"produced {records:,} records of {VALUE} B; acknowledged {sum(map(len, acked.values())):,}, "
          f"failed {failed}")
    return acked


def commit_groups(bootstrap: str, topics: list[str]) -> dict[str, dict[tuple[str, int], int]]:
    """One group per tenth topic commits an offset on each partition (as a consumer would)."""
    from confluent_kafka import Consumer, TopicPartition
    committed = {}
    for n, topic in enumerate(topics[::10]):
        group = f"room-restart-g{n}"
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
        offsets = {(topic, p): 1 + p for p in range(3)}
        consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()], asynchronous=False)
        consumer.close()
        committed[group] = offsets
    return committed


def wait_answers(proc: subprocess.Popen, port: int, topics: list[str], started: float) -> dict[str, float]:
    from confluent_kafka.admin import AdminClient
    line = proc.stdout.readline()
    if "listening on" not in line:
        raise SystemExit(f"the broker did not restart: {line!r}")
    times = {"listening": time.monotonic() - started}
    while True:
        try:
            api_keys(f"127.0.0.1:{port}")
            break
        except OSError:
            time.sleep(0.01)
    times["answers ApiVersions"] = time.monotonic() - started
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"})
    wanted = set(topics)
    while True:
        listed = admin.list_topics(timeout=30).topics
        if wanted <= set(listed) and all(p.leader >= 0 and p.error is None
                                         for t in wanted for p in listed[t].partitions.values()):
            break
        time.sleep(0.05)
    times["every partition has a leader (Metadata)"] = time.monotonic() - started
    return times


def verify(bootstrap: str, acked: dict[tuple[str, int], dict[int, bytes]], committed: dict) -> tuple[int, int]:
    """(records found, acknowledged records missing or changed) and checks the committed offsets."""
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "room-restart-verify",
                         "enable.auto.commit": False, "fetch.queue.backoff.ms": 0})
    consumer.assign([TopicPartition(t, p, 0) for t, p in acked])
    remaining = {tp: dict(offsets) for tp, offsets in acked.items()}
    found, deadline = 0, time.monotonic() + 600
    while any(remaining.values()) and time.monotonic() < deadline:
        for msg in consumer.consume(10000, 1.0):
            if msg.error() is not None:
                continue
            want = remaining.get((msg.topic(), msg.partition()), {})
            if want.get(msg.offset()) == msg.key():
                del want[msg.offset()]
                found += 1
    consumer.close()
    lost = sum(map(len, remaining.values()))
    bad_commits = 0
    for group, offsets in committed.items():
        checker = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
        got = checker.committed([TopicPartition(t, p) for t, p in offsets], timeout=30)
        bad_commits += sum(1 for tp in got if tp.offset != offsets[(tp.topic, tp.partition)])
        checker.close()
    return found, lost + bad_commits


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gb", type=float, default=1.5, help="how much record data to write")
    parser.add_argument("--partitions", type=int, default=3000, help="a multiple of 3: one 3-partition topic each")
    parser.add_argument("--data-dir", help="keep the data here (default: a temporary directory, removed)")
    args = parser.parse_args()
    data = args.data_dir or tempfile.mkdtemp(prefix="mk-room-restart-")
    port = free_port()
    bootstrap = f"127.0.0.1:{port}"
    topics = [f"room-l{i}-events" for i in range(args.partitions // 3)]
    records = int(args.gb * 1e9 / VALUE)
    proc = serve(data, port)
    try:
        proc.stdout.readline()
        started = time.monotonic()
        acked = fill(bootstrap, topics, records)
        committed = commit_groups(bootstrap, topics)
        print(f"filled in {time.monotonic() - started:.0f} s: {len(topics) * 3:,} partitions, "
              f"{du(data) / 1e9:.2f} GB on disk in {data}")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        started = time.monotonic()
        proc = serve(data, port)
        times = wait_answers(proc, port, topics, started)
        for what, seconds in times.items():
            print(f"restart after SIGKILL -> {what}: {seconds:.2f} s")
        found, lost = verify(bootstrap, acked, committed)
        print(f"read back {found:,} acknowledged records; missing or changed: {lost} "
              f"(records and the {sum(map(len, committed.values()))} committed offsets)")
        print("PASS  nothing acknowledged was lost" if lost == 0 else "FAIL  acknowledged data was lost")
        return 0 if lost == 0 else 1
    finally:
        proc.terminate()
        proc.wait(60)
        if not args.data_dir:
            shutil.rmtree(data, ignore_errors=True)


def du(path: str) -> int:
    return sum(f.stat().st_blocks * 512 for f in Path(path).rglob("*") if f.is_file())


if __name__ == "__main__":
    sys.exit(main())
