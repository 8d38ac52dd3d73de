"""Snapshots of the metadata (KIP-630): the state at one offset, so the log before it can go.

A snapshot is named by its id, the end offset and epoch of the last record it covers:
``<end offset, 20 digits>-<epoch, 10 digits>.checkpoint`` in the partition directory, as Kafka
names them. Its content is record batches: a SnapshotHeaderRecord control record (type 3), the
records that rebuild the state (here a RegisterBrokerRecord per broker, then its fencing), and
a SnapshotFooterRecord (type 4). A follower whose fetch offset is below the leader's log start
gets the snapshot id in the Fetch answer and reads the snapshot with FetchSnapshot.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import records as kafka_records
from .records import MetadataRecord, decode

SNAPSHOT_HEADER, SNAPSHOT_FOOTER = 3, 4  # ControlRecordType


def file_name(end_offset: int, epoch: int) -> str:
    return f"{end_offset:020d}-{epoch:010d}.checkpoint"


def latest(directory: Path) -> tuple[int, int] | None:
    """The id (end offset, epoch) of the newest snapshot in ``directory``."""
    found = sorted(directory.glob("*.checkpoint"))
    if not found:
        return None
    end, epoch = found[-1].stem.split("-")
    return int(end), int(epoch)


def read(directory: Path, end_offset: int, epoch: int) -> bytes | None:
    path = directory / file_name(end_offset, epoch)
    return path.read_bytes() if path.exists() else None


def encode(records: list[kafka_records.Record], end_offset: int, epoch: int, now: int) -> bytes:
    """The snapshot's batches: header, the state's records, footer."""

    def control(kind: int, name: str) -> bytes:
        value = json.dumps({"type": name, "data": {"version": 0, "lastContainedLogTimestamp": now}}).encode()
        record = kafka_records.Record(0, now, kafka_records.control_record_key(kind), value)
        return kafka_records.build_batch([record], partition_leader_epoch=epoch, control=True)

    body = control(SNAPSHOT_HEADER, "SnapshotHeaderRecord")
    if records:
        for i, record in enumerate(records):
            record.offset = i
        body += kafka_records.build_batch(records, partition_leader_epoch=epoch)
    return body + control(SNAPSHOT_FOOTER, "SnapshotFooterRecord")


def write(directory: Path, end_offset: int, epoch: int, data: bytes) -> Path:
    """Write a snapshot whole (temporary file, fsync, rename), and drop the older ones."""
    path = directory / file_name(end_offset, epoch)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    for older in directory.glob("*.checkpoint"):
        if older.name < path.name:
            older.unlink(missing_ok=True)
    return path


def records_of(data: bytes) -> list[MetadataRecord]:
    """The state's records in a snapshot (header and footer left out)."""
    out: list[MetadataRecord] = []
    for batch in kafka_records.split_batches(data):
        if not kafka_records.BatchHeader.parse(batch).is_control:
            out.extend(decode(bytes(batch)))
    return out
