"""``minikafka dump-log PATH``: print the batches of segment files, like kafka-dump-log.sh.

PATH is a ``.log`` segment, a partition directory (every segment in offset order), an
``.index`` / ``.timeindex`` file, or a KRaft ``.checkpoint`` snapshot (KIP-630), which holds
record batches like a segment. The tool only reads: it never recovers or truncates,
so it shows a torn tail as Kafka's tool does ("Found N invalid bytes at the end").
Control records are told apart by their key's type (``control_records``): transaction
markers, and the KRaft quorum's LeaderChange, SnapshotHeader and SnapshotFooter.
``--cluster-metadata-decoder`` prints the metadata records of ``__cluster_metadata`` too.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
from typing import NamedTuple, TextIO

from ..log.index import OffsetIndex, TimeIndex
from ..log.segment import parse_base_offset, scan_batches
from ..records import (
    COMPRESSION_NAMES,
    BatchHeader,
    CorruptRecordError,
    crc_of,
    iter_records,
)
from .control_records import control_text, metadata_text


class DumpError(Exception):
    """The path cannot be dumped; the message is one sentence for the user."""


def dump(path: str | os.PathLike, out: TextIO, *, print_data: bool = False, metadata: bool = False) -> None:
    """Write the dump of ``path`` to ``out``; raise DumpError if it cannot be read. ``metadata``
    (``--cluster-metadata-decoder``) decodes KRaft metadata records and implies ``print_data``."""
    path = pathlib.Path(path)
    view = _View(print_data or metadata, metadata)
    if path.is_dir():
        segments = (p for p in path.glob("*.log") if parse_base_offset(p) is not None)
        files = sorted(segments, key=lambda p: parse_base_offset(p) or 0)  # every one has a base offset
        if not files:
            raise DumpError(f"{path} is a directory without any segment (.log) files.")
        for file in files:
            _dump_file(file, out, view)
    elif path.exists():
        _dump_file(path, out, view)
    else:
        raise DumpError(f"{path} does not exist.")


class _View(NamedTuple):
    print_data: bool  # --print-data-log: every record, not only the batches
    metadata: bool  # --cluster-metadata-decoder


def _dump_file(path: pathlib.Path, out: TextIO, view: _View) -> None:
    dumpers = {
        ".log": _dump_segment,
        ".checkpoint": _dump_segment,
        ".index": _dump_offset_index,
        ".timeindex": _dump_time_index,
    }
    if path.suffix not in dumpers:
        raise DumpError(f"{path} is not a .log, .index, .timeindex or .checkpoint file, nor a partition directory.")
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        raise DumpError(f"{path} cannot be read: {e.strerror}.") from None
    try:
        out.write(f"Dumping {path}\n")
        dumpers[path.suffix](fd, path, out, view)
    finally:
        os.close(fd)


def _dump_segment(fd: int, path: pathlib.Path, out: TextIO, view: _View) -> None:
    size = os.fstat(fd).st_size
    if path.suffix == ".checkpoint":
        end_offset, _, epoch = path.stem.partition("-")  # <end offset>-<epoch>.checkpoint (KIP-630)
        if end_offset.isdigit() and epoch.isdigit():
            out.write(f"Snapshot end offset: {int(end_offset)} epoch: {int(epoch)}\n")
    else:
        out.write(f"Log starting offset: {parse_base_offset(path) or 0}\n")
    end = 0
    try:
        for position, batch in scan_batches(lambda pos, n: os.pread(fd, n, pos), size):
            out.write(batch_line(batch, position) + "\n")
            if view.print_data:
                for line in record_lines(batch, metadata=view.metadata):
                    out.write(line + "\n")
            end = position + len(batch)
    except CorruptRecordError:
        pass
    if end < size:
        out.write(f"Found {size - end} invalid bytes at the end of {path.name}\n")


def _timestamp_label(header: BatchHeader) -> str:
    return "LogAppendTime" if header.timestamp_type == 1 else "CreateTime"


def batch_line(batch: bytes | memoryview, position: int) -> str:
    """One batch described the way kafka-dump-log.sh does."""
    h = BatchHeader.parse(batch)
    return (
        f"baseOffset: {h.base_offset} lastOffset: {h.last_offset} count: {h.record_count} "
        f"baseSequence: {h.base_sequence} lastSequence: {h.last_sequence} producerId: {h.producer_id} "
        f"producerEpoch: {h.producer_epoch} partitionLeaderEpoch: {h.partition_leader_epoch} "
        f"isTransactional: {str(h.is_transactional).lower()} isControl: {str(h.is_control).lower()} "
        f"position: {position} {_timestamp_label(h)}: {h.max_timestamp} size: {h.size} magic: {h.magic} "
        f"compresscodec: {COMPRESSION_NAMES.get(h.compression, h.compression)} crc: {h.crc} "
        f"isvalid: {str(crc_of(batch) == h.crc and h.magic == 2).lower()}"
    )


def record_lines(batch: bytes | memoryview, *, metadata: bool = False) -> list[str]:
    """The ``| offset: ...`` lines of --print-data-log for one batch (``metadata``: the data
    records are KRaft metadata records, as with --cluster-metadata-decoder)."""
    h = BatchHeader.parse(batch)
    try:
        records = list(iter_records(batch))
    except Exception as e:  # noqa: BLE001 - a damaged payload (any codec's error) must not stop the dump
        return [f"| cannot decode the records of this batch: {e}"]
    lines = []
    for r in records:
        ts = h.max_timestamp if h.timestamp_type == 1 else r.timestamp
        seq = -1 if h.base_sequence < 0 else (h.base_sequence + r.offset - h.base_offset) & 0x7FFFFFFF
        line = (
            f"| offset: {r.offset} {_timestamp_label(h)}: {ts} keySize: {_size(r.key)} "
            f"valueSize: {_size(r.value)} sequence: {seq} headerKeys: [{','.join(k for k, _ in r.headers)}]"
        )
        if h.is_control:
            line += control_text(r.key, r.value)
        else:
            line += (metadata and metadata_text(r.value)) or _data_text(r.key, r.value)
        lines.append(line)
    return lines


def _size(data: bytes | None) -> int:
    return -1 if data is None else len(data)


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _data_text(key: bytes | None, value: bytes | None) -> str:
    key_part = "" if key is None else f" key: {_text(key)}"
    return f"{key_part} payload: {'null' if value is None else _text(value)}"


def _dump_offset_index(fd: int, path: pathlib.Path, out: TextIO, view: _View) -> None:
    base = parse_base_offset(path) or 0
    index = OffsetIndex.from_bytes(_read_all(fd), log_size=2**31)
    if index is None:
        raise DumpError(f"{path} is not a valid offset index (entries out of order or cut short).")
    for rel, pos in zip(index.offsets, index.positions):
        out.write(f"offset: {base + rel} position: {pos}\n")


def _dump_time_index(fd: int, path: pathlib.Path, out: TextIO, view: _View) -> None:
    base = parse_base_offset(path) or 0
    index = TimeIndex.from_bytes(_read_all(fd))
    if index is None:
        raise DumpError(f"{path} is not a valid time index (entries out of order or cut short).")
    for ts, rel in zip(index.timestamps, index.offsets):
        out.write(f"timestamp: {ts} offset: {base + rel}\n")


def _read_all(fd: int) -> bytes:
    return os.pread(fd, os.fstat(fd).st_size, 0)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="minikafka dump-log", description="Print the record batches of a partition's segment files."
    )
    parser.add_argument("path", help="a .log/.index/.timeindex/.checkpoint file or a partition directory")
    parser.add_argument("--print-data-log", action="store_true", help="also print every record")
    parser.add_argument(
        "--cluster-metadata-decoder",
        action="store_true",
        help="decode the KRaft metadata records of __cluster_metadata (implies --print-data-log)",
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help or a usage error: argparse has already printed
        return int(e.code or 0)
    try:
        dump(args.path, sys.stdout, print_data=args.print_data_log, metadata=args.cluster_metadata_decoder)
    except DumpError as e:
        print(f"minikafka dump-log: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
