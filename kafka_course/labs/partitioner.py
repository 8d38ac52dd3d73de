"""Check for lab 02: implement Kafka's default key partitioner.

The learner writes ``murmur2(data) -> int`` and ``partition(key, num_partitions) -> int``.
The check compares them first with Kafka's algorithm on keys chosen to exercise every
branch (empty key, 1 to 3 leftover bytes, a negative hash, non-ASCII text), then with
reality: it produces keyed records with kafka-python, whose partitioner is the Java
client's, and asks whether each record is in the partition the learner predicted.
"""

from __future__ import annotations

from typing import Callable

from ..partitioner import murmur2 as kafka_murmur2
from ..partitioner import partition_for
from ..checks import Report, plural

SAMPLE_KEYS = [b"", b"a", b"ab", b"abc", b"abcd", b"abcde", b"kafka", b"customer-0", b"customer-42",
               "clé-ñ".encode(), b"\xff\xfe\xfd\xfc\xfb", bytes(range(32))]

TAIL_HINT = {
    0: "the whole-block loop (4 bytes at a time, little-endian)",
    1: "the tail: one leftover byte is XORed in, then multiplied by m",
    2: "the tail: two leftover bytes, the second one shifted left by 8",
    3: "the tail: three leftover bytes, the third one shifted left by 16",
}


def check(murmur2: Callable[[bytes], int], partition: Callable[[bytes, int], int], *,
          bootstrap: str | None = None, partitions: int = 6, keys: int = 200) -> None:
    """Run every check; raise ``CheckFailed`` naming the first thing to fix."""
    with Report("Lab 02 · Kafka's key partitioner") as report:
        if not _check_hash(report, murmur2):
            report.not_run("partition() against Kafka's rule")
            report.not_run("the records kafka-python sends, found where partition() predicts")
        elif not _check_partition(report, partition, partitions):
            report.not_run("the records kafka-python sends, found where partition() predicts")
        else:
            _check_against_broker(report, partition, bootstrap, partitions, keys)


def _check_hash(report: Report, murmur2) -> bool:
    for key in SAMPLE_KEYS:
        ok, got = report.attempt(murmur2, key, what=f"murmur2({key!r})")
        if not ok:
            return False
        want = kafka_murmur2(key)
        if got != want:
            hint = " It looks unsigned: turn the final 32 bits into a signed number." \
                if got == want & 0xFFFFFFFF else ""
            return report.check(False, "", f"murmur2({key!r}) should be {want}, yours returned {got}. "
                                           f"A key of {plural(len(key), 'byte')} exercises {_where(key)}.{hint}")
    return report.check(True, f"murmur2 agrees with Kafka's on {len(SAMPLE_KEYS)} sample keys, "
                              "including the empty key and every tail length", "")


def _where(key: bytes) -> str:
    if not key:
        return "the seed and the length (nothing else runs for an empty key)"
    if len(key) < 4:
        return TAIL_HINT[len(key)]
    return f"{TAIL_HINT[0]} and {TAIL_HINT[len(key) % 4]}"


def _check_partition(report: Report, partition, partitions: int) -> bool:
    for count in (1, 3, partitions, 7):
        for key in SAMPLE_KEYS:
            ok, got = report.attempt(partition, key, count, what=f"partition({key!r}, {count})")
            if not ok:
                return False
            want = partition_for(key, count)
            if got != want:
                hint = ""
                if kafka_murmur2(key) < 0:
                    hint = (f" murmur2({key!r}) is negative; Kafka clears the sign bit with "
                            "`& 0x7fffffff` (not abs()) before taking the remainder.")
                return report.check(False, "", f"partition({key!r}, {count}) should be {want}, "
                                               f"yours returned {got}.{hint}")
    return report.check(True, "partition() matches Kafka's rule for 1, 3, "
                              f"{partitions} and 7 partitions, negative hashes included", "")


def _check_against_broker(report: Report, partition, bootstrap, partitions: int, keys: int) -> None:
    from kafka import KafkaProducer

    from ..connection import current_bootstrap
    from ..clients import consume_all, new_topic
    topic = new_topic("lab02-keys", partitions=partitions, bootstrap=bootstrap)
    producer = KafkaProducer(bootstrap_servers=bootstrap or current_bootstrap())
    for i in range(keys):
        producer.send(topic, key=f"user-{i}".encode(), value=f"event {i}".encode())
    producer.flush(timeout=30)
    producer.close()
    stored = consume_all(topic, bootstrap=bootstrap, timeout=30)
    misplaced = [r for r in stored if partition(r.key, partitions) != r.partition]
    report.check(len(stored) == keys and not misplaced,
                 f"all {keys} records that kafka-python sent are in the partition your function predicts",
                 f"{len(misplaced)} of {len(stored)} stored records are not where your partition() says, "
                 f"e.g. key {misplaced[0].key!r} is in partition {misplaced[0].partition}"
                 if misplaced else f"only {len(stored)} of {keys} records came back from the broker")
