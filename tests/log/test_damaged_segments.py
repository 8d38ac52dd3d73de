"""Damaged segments, handled as Kafka handles them.

After a crash (no clean-shutdown marker) every segment is checked, CRCs included; the
log ends at the first bad batch and the segments after it are deleted. After a clean
shutdown old segments are not re-read: a flipped byte is served as it is, and the
consumer's CRC check reports it.
"""

from __future__ import annotations

import pytest
from confluent_kafka import Producer

TOPIC = "ledger"


def fill(cluster, count: int = 60) -> None:
    cluster.create_topic(TOPIC, config={"segment.bytes": 1024})
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 0})
    for i in range(count):
        p.produce(TOPIC, key=b"k%d" % i, value=b"record-%03d-" % i + b"x" * 80)
        p.flush(10)  # one batch per record


def segments(cluster) -> list:
    return sorted((cluster.data_dir / f"{TOPIC}-0").glob("*.log"))


def read_values(bootstrap: str) -> list[bytes]:
    from kafka import KafkaConsumer
    c = KafkaConsumer(TOPIC, bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=3000,
                      check_crcs=True)
    try:
        return [m.value[:10] for m in c]
    finally:
        c.close()


def damage(path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "flip":  # a byte of a record's value, which the batch's CRC covers
        data[data.index(b"xxxx", len(data) // 2)] ^= 0xFF
        path.write_bytes(bytes(data))
    elif how == "offset":  # the second batch's base offset, which the CRC does not cover
        second = 12 + int.from_bytes(data[8:12], "big")
        data[second + 1] ^= 0xFF
        path.write_bytes(bytes(data))
    else:
        path.write_bytes(bytes(data[: len(data) // 2]))


@pytest.mark.parametrize("how", ["flip", "offset", "truncate"])
def test_after_a_crash_the_log_ends_at_the_first_bad_batch(make_cluster, how):
    cluster = make_cluster()
    fill(cluster)
    files = segments(cluster)
    assert len(files) >= 4
    cluster.crash_broker(1)
    damage(files[1], how)
    cluster.start_broker(1)
    left = segments(cluster)
    assert left == files[:2], "the segments after the damaged one are deleted"
    end = cluster.partition_offsets(TOPIC)[0]["log_end_offset"]
    values = read_values(cluster.bootstrap_servers)
    assert 0 < len(values) == end < 60
    assert values == [b"record-%03d" % i for i in range(end)]  # a clean prefix, no hole
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    p.produce(TOPIC, key=b"k", value=b"record-new")
    assert p.flush(10) == 0
    assert cluster.partition_offsets(TOPIC)[0]["log_end_offset"] == end + 1


def test_after_a_clean_shutdown_a_flipped_byte_reaches_the_consumers_crc_check(make_cluster):
    from kafka.errors import CorruptRecordException
    cluster = make_cluster()
    fill(cluster)
    files = segments(cluster)
    cluster.stop_broker(1)
    damage(files[1], "flip")
    cluster.start_broker(1)
    assert segments(cluster) == files  # nothing re-read, nothing cut
    with pytest.raises(CorruptRecordException):
        read_values(cluster.bootstrap_servers)
