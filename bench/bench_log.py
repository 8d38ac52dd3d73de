"""Throughput of the partition log: append 200k 100-byte records, then fetch them back.

Run: ``python bench/bench_log.py [--batch-bytes N] [--fetch-bytes N]``. Prints MB/s for
appends (offset assignment + write to the OS) and for consumer fetches of
``--fetch-bytes`` at a time (index lookup + one contiguous read per fetch), on disk and
in memory. Numbers, not assertions: compare them between changes on the same machine.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from minikafka.log import PartitionLog
from minikafka.records import HEADER_SIZE, Record, build_batch

RECORDS = 200_000
VALUE = b"x" * 100


def make_batches(batch_bytes: int) -> list[bytes]:
    """Producer batches of about ``batch_bytes`` (built once, outside the timings)."""
    per_batch = max(1, (batch_bytes - HEADER_SIZE) // (len(VALUE) + 12))
    batches = []
    for start in range(0, RECORDS, per_batch):
        n = min(per_batch, RECORDS - start)
        batches.append(build_batch([Record(i, 1_700_000_000_000 + start, None, VALUE) for i in range(n)]))
    return batches


def bench(directory: pathlib.Path | None, batches: list[bytes], fetch_bytes: int) -> tuple[float, float, int]:
    log = PartitionLog(directory, {"segment.bytes": 64 << 20})
    total = sum(len(b) for b in batches)
    t0 = time.perf_counter()
    for batch in batches:
        log.append([batch])
    append_s = time.perf_counter() - t0
    log.high_watermark = log.log_end_offset
    offset, read_bytes, fetches, read_s = 0, 0, 0, 0.0
    while offset < log.high_watermark:
        t0 = time.perf_counter()
        data = log.read(offset, fetch_bytes, log.high_watermark)
        read_s += time.perf_counter() - t0  # the consumer's own parsing below is not the log's cost
        read_bytes += len(data)
        fetches += 1
        offset = _next_offset(data)
    log.close()
    assert read_bytes == total, (read_bytes, total)
    return total / append_s / 1e6, total / read_s / 1e6, fetches


def _next_offset(data: bytes) -> int:
    """What a consumer does: continue after the last batch of the response."""
    from minikafka.log.segment import whole_batches_end
    from minikafka.records import BatchHeader

    pos, last = 0, None
    end = whole_batches_end(data, None)
    while pos < end:
        last = BatchHeader.parse(data, pos)
        pos += last.size
    return last.last_offset + 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-bytes", type=int, default=1 << 20)
    parser.add_argument("--fetch-bytes", type=int, default=1 << 20)
    args = parser.parse_args()
    batches = make_batches(args.batch_bytes)
    total_mb = sum(len(b) for b in batches) / 1e6
    print(f"{RECORDS} records of {len(VALUE)} bytes in {len(batches)} batches of ~{args.batch_bytes} bytes "
          f"({total_mb:.1f} MB), fetching {args.fetch_bytes} bytes at a time")
    with tempfile.TemporaryDirectory() as tmp:
        for name, directory in (("disk", pathlib.Path(tmp) / "bench-0"), ("memory", None)):
            append_mbs, read_mbs, fetches = bench(directory, batches, args.fetch_bytes)
            print(f"  {name:6}  append {append_mbs:8.0f} MB/s   read {read_mbs:8.0f} MB/s   ({fetches} fetches)")


if __name__ == "__main__":
    main()
