"""What the broker checks inside a produced batch: compressed records are decompressed
within a bound (a decompression bomb is refused without growing the broker), and a
compacted topic refuses records without a key (INVALID_RECORD, record by record)."""

from __future__ import annotations

import datetime
import struct
import subprocess
import sys

import cramjam
from confluent_kafka import KafkaError as CKError
from confluent_kafka import Producer
from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData

from minikafka import records
from tests.rawclient import RawClient


def compressed_batch(body: bytes, codec: int, record_count: int) -> bytes:
    """A v2 batch whose records section is ``body``, already compressed with ``codec``."""
    tail = struct.pack(">hiqqqhii", codec, record_count - 1, 0, 0, -1, -1, -1, record_count) + body
    crc = records._crc32c.crc32c(tail)
    return struct.pack(">qiibI", 0, len(tail) + 9, -1, 2, crc) + tail


def zstd_bomb(expanded_mib: int) -> bytes:
    """A few KB of zstd that expand to ``expanded_mib`` MiB of zeros."""
    compressor = cramjam.zstd.Compressor()
    chunk = bytes(1 << 20)
    for _ in range(expanded_mib):
        compressor.compress(chunk)
    return bytes(compressor.finish())


def produce_raw(bootstrap: str, topic: str, batch: bytes):
    req = ProduceRequest(transactional_id=None, acks=1, timeout=datetime.timedelta(seconds=10),
                         topic_data=(TopicProduceData(name=topic, partition_data=(
                             PartitionProduceData(index=0, records=batch),)),))
    with RawClient(bootstrap, timeout=60) as raw:
        return raw.request(req).responses[0].partition_responses[0]


def peak_rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        line = next(x for x in f if x.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def test_a_decompression_bomb_is_refused_and_the_broker_stays_small(tmp_path):
    bomb = compressed_batch(zstd_bomb(1024), records.COMPRESSION_ZSTD, 1)  # 1 GiB once expanded
    assert len(bomb) < 64 * 1024
    proc = subprocess.Popen([sys.executable, "-m", "minikafka.cli.main", "serve", "--port", "0", "--data-dir",
                             str(tmp_path), "--log-level", "CRITICAL", "--config", "log.cleanup.policy=compact"],
                            stdout=subprocess.PIPE, text=True)
    try:
        address = proc.stdout.readline().split("listening on ")[1].split()[0]
        p = Producer({"bootstrap.servers": address})
        p.produce("bombed", key=b"k", value=b"first")  # auto-creates the topic
        assert p.flush(10) == 0
        before = peak_rss_mib(proc.pid)
        resp = produce_raw(address, "bombed", bomb)
        assert resp.error_code == CKError.MSG_SIZE_TOO_LARGE, resp
        assert "expands to more than" in resp.error_message
        growth = peak_rss_mib(proc.pid) - before
        assert growth < 200, f"the broker grew by {growth:.0f} MiB"
        p.produce("bombed", key=b"k", value=b"after")
        assert p.flush(10) == 0
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(10)
    dump = subprocess.run([sys.executable, "-m", "minikafka.cli.main", "dump-log", str(tmp_path / "bombed-0"),
                           "--print-data-log"], capture_output=True, text=True, timeout=60)
    assert dump.returncode == 0 and "payload: first" in dump.stdout and "payload: after" in dump.stdout


def test_corrupt_compressed_records_are_refused(cluster, bootstrap, topic_name):
    cluster.create_topic(topic_name)
    resp = produce_raw(bootstrap, topic_name, compressed_batch(b"not zstd at all", records.COMPRESSION_ZSTD, 1))
    assert resp.error_code == CKError.INVALID_MSG  # CORRUPT_MESSAGE
    assert cluster.partition_offsets(topic_name)[0]["log_end_offset"] == 0


def test_records_without_a_key_are_refused_by_a_compacted_topic(cluster, bootstrap, topic_name):
    cluster.create_topic(topic_name, config={"cleanup.policy": "compact"})
    batch = records.build_batch([records.Record(0, 1, b"a", b"1"), records.Record(1, 1, None, b"2"),
                                 records.Record(2, 1, b"c", b"3"), records.Record(3, 1, None, b"4")])
    resp = produce_raw(bootstrap, topic_name, batch)
    assert resp.error_code == CKError.INVALID_RECORD
    assert [e.batch_index for e in resp.record_errors] == [1, 3]
    assert all("without a key" in e.batch_index_error_message for e in resp.record_errors)
    assert cluster.partition_offsets(topic_name)[0]["log_end_offset"] == 0
    errors = []  # a real client sees the same error
    p = Producer({"bootstrap.servers": bootstrap, "retries": 0})
    p.produce(topic_name, value=b"no key", on_delivery=lambda err, m: errors.append(err))
    p.flush(10)  # its own batch: a batch with one keyless record is refused whole
    p.produce(topic_name, key=b"k", value=b"keyed", on_delivery=lambda err, m: errors.append(err))
    p.flush(10)
    assert errors[0] is not None and errors[0].code() == CKError.INVALID_RECORD and errors[1] is None
