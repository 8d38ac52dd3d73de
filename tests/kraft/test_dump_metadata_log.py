"""``minikafka dump-log`` on a KRaft metadata log and snapshot, written by the kraft package's own
log writer: control records are told apart by their key's type (LeaderChange, SnapshotHeader,
SnapshotFooter), not printed as transaction markers, and ``--cluster-metadata-decoder`` prints
the metadata records."""

from __future__ import annotations

import io
import subprocess
import sys

from minikafka.cli.dump_log import dump
from minikafka.kraft import snapshots
from minikafka.kraft.metadata_log import MetadataLog
from minikafka.kraft.records import REGISTER_BROKER, UNFENCE_BROKER, leader_change_record, metadata_record
from minikafka.records import Record, build_batch, control_record_key

from .quorum import REPO

NOW = 1_700_000_000_000


def _metadata_log(tmp_path) -> MetadataLog:
    log = MetadataLog(tmp_path)
    key, value = leader_change_record(2, [1, 2, 3])
    log.append_leader([Record(0, NOW, key, value)], 5, control=True)
    log.append_leader([metadata_record(REGISTER_BROKER, NOW, brokerId=7, brokerEpoch=1, fenced=True)], 5)
    log.append_leader([metadata_record(UNFENCE_BROKER, NOW, id=7, epoch=1)], 5)
    log.close()
    return log


def _dump(path, **flags) -> str:
    out = io.StringIO()
    dump(path, out, **flags)
    return out.getvalue()


def test_leader_change_is_no_transaction_marker(tmp_path):
    log = _metadata_log(tmp_path)
    text = _dump(log.path, print_data=True)
    assert "endTxnMarker" not in text
    assert ' LeaderChange: {"leaderId":2,"voters":[1,2,3]}' in text
    assert "isControl: true" in text and "partitionLeaderEpoch: 5" in text


def test_the_metadata_decoder_prints_the_broker_records(tmp_path):
    log = _metadata_log(tmp_path)
    plain = _dump(log.path, print_data=True)
    assert "REGISTER_BROKER_RECORD" not in plain  # without the decoder: the raw payload
    done = subprocess.run(
        [sys.executable, "-m", "minikafka", "dump-log", "--cluster-metadata-decoder", str(log.directory)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    records = [line for line in done.stdout.splitlines() if line.startswith("| offset:")]
    assert len(records) == 3  # the decoder implies --print-data-log
    assert records[1].endswith(
        ' payload: {"type":"REGISTER_BROKER_RECORD","data":{"brokerId":7,"brokerEpoch":1,"fenced":true}}'
    )
    assert records[2].endswith(' payload: {"type":"UNFENCE_BROKER_RECORD","data":{"id":7,"epoch":1}}')


def test_a_checkpoint_shows_its_snapshot_header_and_footer(tmp_path):
    body = snapshots.encode([metadata_record(UNFENCE_BROKER, NOW, id=7, epoch=1)], 3, 5, NOW)
    path = snapshots.write(tmp_path, 3, 5, body)
    text = _dump(path, metadata=True)
    assert text.splitlines()[1] == "Snapshot end offset: 3 epoch: 5"
    control = [line for line in text.splitlines() if "| offset:" in line]
    assert control[0].endswith(f' SnapshotHeader {{"version":0,"lastContainedLogTimestamp":{NOW}}}')
    assert '"type":"UNFENCE_BROKER_RECORD"' in control[1]
    assert control[2].endswith(f' SnapshotFooter {{"version":0,"lastContainedLogTimestamp":{NOW}}}')


def test_transaction_markers_and_unknown_control_types_still_read_right(tmp_path):
    marker = Record(0, NOW, control_record_key(1), b"\x00\x00\x00\x00\x00\x09")
    odd = Record(1, NOW, control_record_key(42), b"")
    segment = tmp_path / "00000000000000000000.log"
    segment.write_bytes(build_batch([marker, odd], control=True))
    text = _dump(segment, print_data=True)
    assert "endTxnMarker: COMMIT coordinatorEpoch: 9" in text
    assert "controlType: UNKNOWN(42)" in text
