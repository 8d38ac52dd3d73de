"""Writing a DataFrame to Kafka: ``df.write`` and ``df.writeStream`` with this format.

The rules are those of Spark's Kafka sink: a ``value`` column (string or binary),
optional ``key``, ``topic``, ``partition`` and ``headers`` columns, and a ``topic``
option that, when set, wins over the column. Each Spark task produces its rows with
its own producer and waits for every acknowledgement, so a batch that Spark marks as
committed is in Kafka. A batch retried after a failure may write some rows twice:
like Spark's sink, this is at-least-once (make consumers idempotent, or key records
so that a compacted topic keeps one copy).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from .kafka_io import write_batches
from .options import parse_sink

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass
class Written(WriterCommitMessage):
    """What one task reports: how many records Kafka acknowledged."""
    records: int


class _Producing:
    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        self.sink = parse_sink(options, schema.fieldNames())
        self.written = 0

    def write(self, iterator: Iterator[pa.RecordBatch]) -> Written:
        return Written(write_batches(iterator, self.sink.client, self.sink.topic))


class KafkaBatchWriter(_Producing, DataSourceArrowWriter):
    """``df.write.format(...).save()``: every row becomes one record."""

    # Spark hands commit() the messages write() returned, Written ones; its signature says any kind
    def commit(self, messages: list[Written | None]) -> None:  # type: ignore[override]
        self.written = sum(m.records for m in messages if m is not None)


class KafkaStreamWriter(_Producing, DataSourceStreamArrowWriter):
    """``df.writeStream.format(...)``: each micro-batch's rows become records (at-least-once)."""

    # (Written messages, as in KafkaBatchWriter.commit)
    def commit(self, messages: list[Written | None], batchId: int) -> None:  # type: ignore[override]
        self.written = sum(m.records for m in messages if m is not None)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Records already acknowledged stay in Kafka: a retry may write them again."""
