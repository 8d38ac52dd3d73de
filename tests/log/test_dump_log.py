"""``minikafka dump-log``: the kafka-dump-log.sh view of segment files."""

from __future__ import annotations

import io
import re

from kafka.record.default_records import DefaultRecordBatchBuilder

from minikafka.cli.dump_log import dump, main
from minikafka.log import PartitionLog
from minikafka.records import CONTROL_ABORT, Record, build_batch, control_record_key

BATCH_LINE = re.compile(
    r"baseOffset: (\d+) lastOffset: (\d+) count: (\d+) baseSequence: (-?\d+) lastSequence: (-?\d+) "
    r"producerId: (-?\d+) producerEpoch: (-?\d+) partitionLeaderEpoch: (-?\d+) isTransactional: (true|false) "
    r"isControl: (true|false) position: (\d+) (CreateTime|LogAppendTime): (-?\d+) size: (\d+) magic: 2 "
    r"compresscodec: (\w+) crc: (\d+) isvalid: (true|false)$"
)


def make_partition(path, **config) -> PartitionLog:
    log = PartitionLog(path, config)
    log.append([build_batch([Record(0, 1_000, b"user-1", b"hello"), Record(1, 1_001, None, b"world",
                                                                           [("trace", b"1")])],
                            producer_id=4, producer_epoch=0, base_sequence=0)])
    gzip = DefaultRecordBatchBuilder(2, 1, False, -1, -1, -1, 1 << 20)
    gzip.append(0, timestamp=2_000, key=b"k", value=b"zip" * 40, headers=[])  # worth compressing
    log.append([bytes(gzip.build())])
    marker = build_batch([Record(0, 3_000, control_record_key(CONTROL_ABORT), b"\x00\x00\x00\x00\x00\x05")],
                         producer_id=4, producer_epoch=0, transactional=True, control=True)
    log.append([marker])
    log.close()
    return log


def run(path, *flags) -> str:
    out = io.StringIO()
    dump(path, out, print_data="--print-data-log" in flags)
    return out.getvalue()


def test_each_batch_is_printed_like_kafka_dump_log(tmp_path):
    make_partition(tmp_path)
    lines = run(tmp_path / "00000000000000000000.log").splitlines()
    assert lines[0] == f"Dumping {tmp_path / '00000000000000000000.log'}"
    assert lines[1] == "Log starting offset: 0"
    batches = [BATCH_LINE.match(line) for line in lines[2:]]
    assert all(batches) and len(batches) == 3
    first, zipped, control = batches
    assert first.group(1, 2, 3, 4, 5, 6, 11, 12, 13) == ("0", "1", "2", "0", "1", "4", "0", "CreateTime", "1001")
    assert zipped.group(1, 15, 17) == ("2", "gzip", "true")
    assert control.group(9, 10) == ("true", "true")
    assert int(zipped.group(11)) == int(first.group(11)) + int(first.group(14))  # positions follow sizes


def test_print_data_log_shows_every_record(tmp_path):
    make_partition(tmp_path)
    records = [line for line in run(tmp_path, "--print-data-log").splitlines() if line.startswith("|")]
    assert records[0] == (
        "| offset: 0 CreateTime: 1000 keySize: 6 valueSize: 5 sequence: 0 headerKeys: [] key: user-1 payload: hello"
    )
    assert records[1] == ("| offset: 1 CreateTime: 1001 keySize: -1 valueSize: 5 sequence: 1 headerKeys: [trace] "
                          "payload: world")
    assert records[2].endswith("key: k payload: " + "zip" * 40)  # decompressed
    assert records[3].endswith("endTxnMarker: ABORT coordinatorEpoch: 5")


def test_log_append_time_batches_are_labelled(tmp_path):
    log = PartitionLog(tmp_path, {"message.timestamp.type": "LogAppendTime"})
    log.append([build_batch([Record(0, 1, b"k", b"v")])], append_time_ms=99_000)
    log.close()
    assert "LogAppendTime: 99000" in run(tmp_path)


def test_a_torn_tail_is_reported_not_repaired(tmp_path):
    make_partition(tmp_path)
    segment = tmp_path / "00000000000000000000.log"
    size = segment.stat().st_size
    with open(segment, "ab") as f:
        f.write(b"\x00" * 8 + b"\x00\x00\x01\x00" + b"partial")
    assert run(segment).splitlines()[-1] == "Found 19 invalid bytes at the end of 00000000000000000000.log"
    assert segment.stat().st_size == size + 19


def test_a_batch_with_a_bad_crc_is_shown_as_invalid(tmp_path):
    make_partition(tmp_path)
    segment = tmp_path / "00000000000000000000.log"
    data = bytearray(segment.read_bytes())
    data[70] ^= 0xFF
    segment.write_bytes(bytes(data))
    assert "isvalid: false" in run(segment).splitlines()[2]


def test_index_files_can_be_dumped(tmp_path):
    log = PartitionLog(tmp_path, {"index.interval.bytes": 1})
    for ts in (10, 20, 30):
        log.append([build_batch([Record(0, ts, b"k", b"v")])])
    log.close()
    assert run(tmp_path / "00000000000000000000.index").splitlines()[1:] == [
        "offset: 1 position: 70", "offset: 2 position: 140",  # the first batch needs no entry
    ]
    assert run(tmp_path / "00000000000000000000.timeindex").splitlines()[-1] == "timestamp: 30 offset: 2"


def test_main_prints_one_sentence_and_returns_2_for_an_unreadable_path(tmp_path, capsys):
    assert main([str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("does not exist.") and "\n" not in err
    (tmp_path / "notes.txt").write_text("hi")
    assert main([str(tmp_path / "notes.txt")]) == 2
    assert main([str(tmp_path)]) == 2  # a directory without segments
    assert "without any segment" in capsys.readouterr().err


def test_main_dumps_a_partition_directory(tmp_path, capsys):
    make_partition(tmp_path / "t-0", **{"segment.bytes": 100})  # a segment per batch
    assert main([str(tmp_path / "t-0"), "--print-data-log"]) == 0
    out = capsys.readouterr().out
    assert out.count("Dumping ") == 3 and "Log starting offset: 2" in out
