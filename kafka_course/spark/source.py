"""A Kafka source and sink for Spark, written on PySpark's Python Data Source API.

Spark's own connector (``format("kafka")``) is a jar fetched from Maven; without
the network (a laptop at a workshop, CI) it is not there. This data source takes
the same options and gives the same schema, so a query is written once:

    fmt = kafka_format(spark)         # "kafka" when the jar is there, else "minikafka-kafka"
    df = (spark.readStream.format(fmt)
          .option("kafka.bootstrap.servers", BOOTSTRAP)
          .option("subscribe", "fakeusers")
          .option("startingOffsets", "earliest")
          .load())

How a micro-batch works, in Spark's terms: the driver keeps a *stream reader*;
Spark asks it for the ``latestOffset`` (the high watermark of every partition,
capped by ``maxOffsetsPerTrigger``), writes the batch's ``[start, end)`` to the
checkpoint's offset log *before* reading, and asks for the ``partitions`` of that
range: one ``OffsetRange`` per Kafka partition. Spark tasks then ``read`` each range
with a plain assign-and-seek consumer. After a restart Spark replays the last
logged range, so every record is read once per batch and no record is skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from pyspark.sql.datasource import (DataSource, DataSourceReader, DataSourceStreamReader, InputPartition)
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import StructType

from . import offsets as off
from .kafka_io import DataLoss, OffsetQuery, read_range
from .options import SourceOptions, parse_source

if TYPE_CHECKING:
    from .sink import KafkaBatchWriter, KafkaStreamWriter

NAME = "minikafka-kafka"
SCHEMA = ("key binary, value binary, topic string, partition int, offset long, "
          "timestamp timestamp, timestampType int")
HEADERS = "headers array<struct<key: string, value: binary>>"

log = logging.getLogger(__name__)


class KafkaDataSource(DataSource):
    """``format("minikafka-kafka")``: Spark's Kafka source and sink options, in Python."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        include = str(self.options.get("includeHeaders", "false")).lower() == "true"
        return f"{SCHEMA}, {HEADERS}" if include else SCHEMA

    def reader(self, schema: StructType) -> KafkaBatchReader:
        return KafkaBatchReader(parse_source(self.options, streaming=False), schema)

    def streamReader(self, schema: StructType) -> KafkaStreamReader:
        return KafkaStreamReader(parse_source(self.options, streaming=True), schema)

    def writer(self, schema: StructType, overwrite: bool) -> KafkaBatchWriter:
        from .sink import KafkaBatchWriter
        return KafkaBatchWriter(self.options, schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> KafkaStreamWriter:
        from .sink import KafkaStreamWriter
        return KafkaStreamWriter(self.options, schema)


class RangePartition(InputPartition):
    """One Spark task's work: an ``OffsetRange`` (picklable, sent to the executors)."""

    def __init__(self, rng: off.OffsetRange):
        super().__init__(rng)
        self.range = rng


class _RangeReader:
    """What batch and streaming readers share: the query options, offsets, and ``read``."""

    def __init__(self, options: SourceOptions, schema: StructType):
        self.options, self.schema = options, schema
        self._query: OffsetQuery | None = None  # driver only; never pickled

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_query": None}

    @property
    def query(self) -> OffsetQuery:
        if self._query is None:
            self._query = OffsetQuery(self.options)
        return self._query

    def read(self, partition: InputPartition) -> Iterator:
        assert isinstance(partition, RangePartition), partition  # Spark hands back the partitions made here
        from pyspark.sql.pandas.types import to_arrow_schema
        arrow_schema = to_arrow_schema(self.schema, timezone="UTC")
        return read_range(partition.range, self.options, arrow_schema)

    def _ranges(self, start: off.Offsets, end: off.Offsets) -> list[RangePartition]:
        ranges = off.plan_ranges(start, end, self.options.min_partitions)
        return [RangePartition(r) for r in ranges]

    def _check_loss(self, start: off.Offsets, earliest: off.Offsets, latest: off.Offsets) -> off.Offsets:
        """Start positions that still exist; a gap is an error unless failOnDataLoss=false."""
        fixed = {}
        for tp, offset in start.items():
            if tp not in latest:
                self._lost(f"partition {tp[0]}-{tp[1]} is gone (was the topic deleted?)")
            elif offset < earliest[tp]:
                self._lost(f"{tp[0]}-{tp[1]} offsets {offset}..{earliest[tp] - 1} were deleted before "
                           "the query read them")
                fixed[tp] = earliest[tp]
            elif offset > latest[tp]:
                self._lost(f"{tp[0]}-{tp[1]} went back from offset {offset} to {latest[tp]} "
                           "(was the topic recreated?)")
                fixed[tp] = latest[tp]
            else:
                fixed[tp] = offset
        return fixed

    def _lost(self, what: str) -> None:
        if self.options.fail_on_data_loss:
            raise DataLoss(f"Some data may have been lost: {what}. If that is expected, set the option "
                           "failOnDataLoss to false to skip it and go on.")
        log.warning("Kafka source: %s; going on because failOnDataLoss=false", what)


class KafkaBatchReader(_RangeReader, DataSourceReader):
    """``spark.read``: from startingOffsets (default earliest) to endingOffsets (default latest)."""

    def partitions(self) -> list[RangePartition]:
        earliest, latest = self.query.earliest_and_latest()
        try:
            start = off.resolve(self.options.starting, earliest, latest, what="startingOffsets")
            end = off.resolve(self.options.ending, earliest, latest, what="endingOffsets")
        finally:
            self.query.close()
        return self._ranges(start, end)


class KafkaStreamReader(_RangeReader, DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream``: micro-batches of offset ranges, positions kept in the checkpoint."""

    def __init__(self, options: SourceOptions, schema: StructType):
        super().__init__(options, schema)
        self._target: off.Offsets | None = None  # set by Trigger.AvailableNow

    def initialOffset(self) -> dict:
        earliest, latest = self.query.earliest_and_latest()
        return off.to_json(off.resolve(self.options.starting, earliest, latest))

    def getDefaultReadLimit(self) -> ReadLimit:
        limit = self.options.max_offsets_per_trigger
        return ReadMaxRows(limit) if limit else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Remember what exists now: an availableNow query stops there, whatever arrives later."""
        self._target = self.query.earliest_and_latest()[1]

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        begin = off.from_json(start)
        earliest, latest = self.query.earliest_and_latest()
        if self._target is not None:  # never past what existed when the query started
            latest = {tp: min(o, self._target.get(tp, earliest[tp])) for tp, o in latest.items()}
        begin = self._check_loss(begin, earliest, latest)
        for tp in latest.keys() - begin.keys():  # a partition that appeared: read it from its start
            begin[tp] = earliest[tp]
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        return off.to_json(off.limit_offsets(begin, latest, max_rows))

    def reportLatestOffset(self) -> dict | None:
        return off.to_json(self.query.earliest_and_latest()[1])

    def partitions(self, start: dict, end: dict) -> list[RangePartition]:
        begin, stop = off.from_json(start), off.from_json(end)
        new = stop.keys() - begin.keys()
        if new:  # partitions found since the last batch start at their log start offset
            begin.update(self.query.earliest_and_latest(sorted(new))[0])
        if not self.options.fail_on_data_loss:
            earliest = self.query.earliest_and_latest(sorted(begin.keys() & stop.keys()))[0]
            begin = {tp: max(o, earliest.get(tp, o)) for tp, o in begin.items()}
        return self._ranges(begin, stop)

    def commit(self, end: dict) -> None:
        """Nothing to do: Spark's checkpoint, not Kafka, remembers how far the query got."""

    def stop(self) -> None:
        if self._query is not None:
            self._query.close()
