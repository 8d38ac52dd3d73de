"""Check for lab 02: implement Kafka's default key partitioner.

The learner writes ``murmur2(data) -> int`` and ``partition(key, num_partitions) -> int``.
The check first reads their code (``borrowed``): an answer that calls a partitioner that
already exists, the course's or a client's, is refused. Then it compares them with
Kafka's algorithm on keys chosen to exercise every branch (empty key, 1 to 3 leftover
bytes, a negative hash, non-ASCII text), then with reality: it produces keyed records
with kafka-python, whose partitioner is the Java client's, and asks whether each record
is in the partition the learner predicted.
"""

from __future__ import annotations

from collections.abc import Callable

from ..partitioner import murmur2 as kafka_murmur2
from ..partitioner import partition_for
from ..checks import Report, plural
from ..i18n import _
from .borrowed import borrowed

SAMPLE_KEYS = [b"", b"a", b"ab", b"abc", b"abcd", b"abcde", b"kafka", b"customer-0", b"customer-42",
               "clé-ñ".encode(), b"\xff\xfe\xfd\xfc\xfb", bytes(range(32))]

TAIL_HINT = {
    0: "the whole-block loop (4 bytes at a time, little-endian)",
    1: "the tail: one leftover byte is XORed in, then multiplied by m",
    2: "the tail: two leftover bytes, the second one shifted left by 8",
    3: "the tail: three leftover bytes, the third one shifted left by 16",
}  # English keys of the catalog: shown through _()


def check(murmur2: Callable[[bytes], int], partition: Callable[[bytes, int], int], *,
          bootstrap: str | None = None, partitions: int = 6, keys: int = 200) -> None:
    """Run every check; raise ``CheckFailed`` naming the first thing to fix."""
    later = [_("murmur2() against Kafka's hash"), _("partition() against Kafka's rule"),
             _("the records kafka-python sends, found where partition() predicts")]
    with Report(_("Lab 02 · Kafka's key partitioner")) as report:
        steps = [lambda: _check_own_work(report, murmur2, partition),
                 lambda: _check_hash(report, murmur2),
                 lambda: _check_partition(report, partition, partitions),
                 lambda: _check_against_broker(report, partition, bootstrap, partitions, keys)]
        for done, step in enumerate(steps):
            if not step():
                for what in later[done:]:
                    report.not_run(what)
                break


def _check_own_work(report: Report, murmur2: Callable[[bytes], int], partition: Callable[[bytes, int], int]) -> bool:
    found = borrowed(murmur2) or borrowed(partition)
    if found:
        return report.check(False, "", _("{found}. The lab asks you to write the hash yourself, following the steps "
                                         "above: calling a partitioner that already exists gives the right "
                                         "numbers, but proves nothing about yours.").format(found=found))
    stub = _constant(murmur2, [(key,) for key in SAMPLE_KEYS]) or _constant(
        partition, [(key, 7) for key in SAMPLE_KEYS])
    return report.check(stub is None, _("murmur2() and partition() compute the hash themselves"),
                        _("{function}() returns {value!r} for every sample key: it is still the starter's stub. "
                          "Write its body, following the steps above.").format(function=stub[0], value=stub[1])
                        if stub else "")


def _constant(fn: Callable[..., object], calls: list[tuple]) -> tuple[str, object] | None:
    """(name, value) when ``fn`` gives one and the same value for every call: a stub, not a hash.
    An error is left to the checks that follow, which say where it happened."""
    try:
        values = {fn(*args) for args in calls}
    except Exception:  # noqa: BLE001 - reported by the next checks, with its line
        return None
    return (getattr(fn, "__name__", "function"), values.pop()) if len(values) == 1 else None


def _check_hash(report: Report, murmur2: Callable[[bytes], int]) -> bool:
    for key in SAMPLE_KEYS:
        ok, got = report.attempt(murmur2, key, what=f"murmur2({key!r})")
        if not ok:
            return False
        want = kafka_murmur2(key)
        if got != want:
            unsigned = got == want & 0xFFFFFFFF
            where = _("It looks unsigned: turn the final 32 bits into a signed number (step 5).") if unsigned \
                else _("A key of {size} exercises {part}.").format(size=plural(len(key), _("byte"), _("bytes")),
                                                                    part=_where(key))
            return report.check(False, "", _("murmur2({key!r}) should be {want}, yours returned {got}. {where}").format(
                key=key, want=want, got=got, where=where))
    return report.check(True, _("murmur2 agrees with Kafka's on {count} sample keys, including the empty key and "
                                "every tail length").format(count=len(SAMPLE_KEYS)), "")


def _where(key: bytes) -> str:
    if not key:
        return _("the seed and the length (step 1), then the final mix and the sign (steps 4 and 5): an empty key "
                 "has no block and no tail")
    if len(key) < 4:
        return _(TAIL_HINT[len(key)])
    return _("{first} and {second}").format(first=_(TAIL_HINT[0]), second=_(TAIL_HINT[len(key) % 4]))


def _check_partition(report: Report, partition: Callable[[bytes, int], int], partitions: int) -> bool:
    for count in (1, 3, partitions, 7):
        for key in SAMPLE_KEYS:
            ok, got = report.attempt(partition, key, count, what=f"partition({key!r}, {count})")
            if not ok:
                return False
            want = partition_for(key, count)
            if got != want:
                return report.check(False, "", _("partition({key!r}, {count}) should be {want}, yours returned "
                                                 "{got}.").format(key=key, count=count, want=want, got=got)
                                    + _sign_hint(key, count, got))
    return report.check(True, _("partition() matches Kafka's rule for 1, 3, {partitions} and 7 partitions, negative "
                                "hashes included").format(partitions=partitions), "")


def _sign_hint(key: bytes, count: int, got: int) -> str:
    """Name the usual mistake with a negative hash: abs(), or Python's % on the signed number."""
    h = kafka_murmur2(key)
    if h >= 0:
        return ""
    mistake = _("abs() gives a different number") if got == abs(h) % count else \
        _("Python's % of a negative number is positive but not Java's answer") if got == h % count else \
        _("the sign bit must go before the remainder")
    return " " + _("murmur2({key!r}) is {hash}, a negative number, and {mistake}: Kafka clears the sign bit with "
                   "`& 0x7fffffff` before taking the remainder.").format(key=key, hash=h, mistake=mistake)


def _check_against_broker(report: Report, partition: Callable[[bytes, int], int], bootstrap: str | None,
                          partitions: int, keys: int) -> bool:
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
    # every record above was sent with a key (a consumed record's key is typed bytes | None)
    misplaced = [r for r in stored if partition(r.key, partitions) != r.partition]  # type: ignore[arg-type]
    return report.check(len(stored) == keys and not misplaced,
                        _("all {keys} records that kafka-python sent are in the partition your function "
                          "predicts").format(keys=keys),
                        _("{wrong} of {stored} stored records are not where your partition() says, e.g. key {key!r} "
                          "is in partition {partition}").format(wrong=len(misplaced), stored=len(stored),
                                                                 key=misplaced[0].key, partition=misplaced[0].partition)
                        if misplaced else _("only {stored} of {keys} records came back from the broker").format(
                            stored=len(stored), keys=keys))
