"""The Kafka side of the Spark source and sink: ask for offsets, read a range, write rows.

Everything here is ordinary confluent-kafka (librdkafka) client code, so it works
against minikafka and real Kafka alike:

* ``OffsetQuery`` runs on the driver: which partitions a subscription covers, and
  their earliest and latest offsets (ListOffsets).
* ``read_range`` runs in a Spark task: it assigns one partition, seeks to the start
  of its range and reads until the end, returning Arrow record batches. It never
  joins a consumer group and never commits: where a query is lives in Spark's
  checkpoint, not in Kafka.
* ``write_batches`` runs in a Spark task of a sink and waits for every record's
  acknowledgement before the task reports success (at-least-once, like Spark's sink).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from . import offsets as off
from .options import SourceOptions, group_id

if TYPE_CHECKING:
    import pyarrow as pa
    from confluent_kafka import Consumer, KafkaError, Message, Producer

READ_CHUNK = 5_000  # records per consume() call and per Arrow batch
ERR_PARTITION_EOF, ERR_OFFSET_RESET = -191, -140
ERR_GONE = (3, -190)  # unknown topic or partition


class DataLoss(RuntimeError):
    """Records the query should have read are gone (retention, a deleted topic...)."""


def consumer_config(client: dict[str, str]) -> dict:
    """librdkafka settings for reading ranges: no group membership, no commits, no guessing."""
    conf = {"group.id": group_id(), "enable.auto.commit": False, "enable.partition.eof": True,
            "auto.offset.reset": "error", "isolation.level": "read_uncommitted", "log_level": 3}
    conf.update(client)
    return conf


def _consumer(client: dict[str, str]) -> Consumer:
    from confluent_kafka import Consumer
    try:
        return Consumer(consumer_config(client))
    except Exception as e:  # noqa: BLE001 - KafkaException, or ValueError for an unknown setting: one sentence
        raise ValueError(f"The Kafka client refused the kafka.* options: {e}") from None


class OffsetQuery:
    """Driver-side questions about the subscribed partitions (one consumer, reused)."""

    def __init__(self, options: SourceOptions, timeout: float = 30.0):
        self.options, self.timeout = options, timeout
        self._consumer: Consumer | None = None

    def partitions(self) -> list[off.TopicPartition]:
        """The partitions the subscription covers right now (topics that do not exist yet: none)."""
        metadata = self._client().list_topics(timeout=self.timeout)
        out = []
        for name, topic in metadata.topics.items():
            if topic.error is not None or not self.options.wants(name):
                continue
            wanted = self.options.assign.get(name) if self.options.assign is not None else None
            out += [(name, p) for p in topic.partitions if wanted is None or p in wanted]
        return sorted(out)

    def earliest_and_latest(self, partitions: Iterable[off.TopicPartition] | None = None) -> tuple[off.Offsets,
                                                                                                   off.Offsets]:
        """Log start offset and high watermark of each partition."""
        from confluent_kafka import TopicPartition
        earliest, latest = {}, {}
        for topic, partition in self.partitions() if partitions is None else partitions:
            low, high = self._client().get_watermark_offsets(TopicPartition(topic, partition),
                                                             timeout=self.timeout, cached=False)
            earliest[(topic, partition)], latest[(topic, partition)] = low, high
        return earliest, latest

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    def _client(self) -> Consumer:
        if self._consumer is None:
            self._consumer = _consumer(self.options.client)
        return self._consumer


def read_range(rng: off.OffsetRange, options: SourceOptions, arrow_schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Yield the records of ``rng`` as Arrow record batches of the Kafka source schema."""
    from confluent_kafka import TopicPartition
    consumer = _consumer(options.client)
    try:
        consumer.assign([TopicPartition(rng.topic, rng.partition, rng.from_offset)])
        rows = _Rows(rng, options.include_headers)
        for chunk in _messages(consumer, rng, options):
            rows.extend(chunk)
            if len(rows) >= READ_CHUNK:
                yield rows.batch(arrow_schema)
        if len(rows):
            yield rows.batch(arrow_schema)
    finally:
        consumer.close()


def _messages(consumer: Consumer, rng: off.OffsetRange, options: SourceOptions) -> Iterator[list]:
    """Lists of records of the range, in offset order, until its end (bounded by the poll timeout)."""
    from confluent_kafka import TopicPartition
    position, patience = rng.from_offset, options.poll_timeout_ms / 1000
    last_progress = time.monotonic()
    while position < rng.until_offset:
        batch = consumer.consume(num_messages=min(READ_CHUNK, rng.until_offset - position), timeout=0.5)
        records = []
        for msg in batch:
            error = msg.error()
            if error is None:  # a record: its offset is set (confluent types Message.offset() as optional)
                if msg.offset() >= rng.until_offset:  # type: ignore[operator]
                    position = rng.until_offset
                    break
                records.append(msg)
                position = msg.offset() + 1  # type: ignore[operator]
            elif error.code() == ERR_PARTITION_EOF:
                # the rest of the range holds no records (an EOF event carries the offset it reached)
                if msg.offset() >= rng.until_offset:  # type: ignore[operator]
                    position = rng.until_offset
            elif error.code() == ERR_OFFSET_RESET:
                _lost(options, f"{rng.topic}-{rng.partition}: offset {position} is no longer in the log "
                               "(deleted by retention?)")
                consumer.assign([TopicPartition(rng.topic, rng.partition, off.EARLIEST)])
            elif error.code() in ERR_GONE:
                _lost(options, f"{rng.topic}-{rng.partition} no longer exists")
                return
            elif error.fatal():
                raise RuntimeError(f"Reading {rng.topic}-{rng.partition} failed: {error.str()}")
            # anything else (a broker restarting, a leader moving) is retried until the poll timeout
        if records:
            last_progress = time.monotonic()
            yield records
        elif time.monotonic() - last_progress > patience:
            _lost(options, f"{rng.topic}-{rng.partition}: offsets {position}..{rng.until_offset - 1} could not "
                           f"be read within kafkaConsumer.pollTimeoutMs={options.poll_timeout_ms}")
            return


def _lost(options: SourceOptions, what: str) -> None:
    if options.fail_on_data_loss:
        raise DataLoss(f"Some data may have been lost: {what}. If that is expected, set the option "
                       "failOnDataLoss to false to skip it and go on.")


class _Rows:
    """Column lists for one partition's records, turned into an Arrow batch on demand."""

    def __init__(self, rng: off.OffsetRange, include_headers: bool):
        self.topic, self.partition, self.include_headers = rng.topic, rng.partition, include_headers
        self._reset()

    def _reset(self) -> None:
        self.keys: list[bytes | None] = []
        self.values: list[bytes | None] = []
        self.offsets: list[int | None] = []
        self.times: list[int | None] = []
        self.types: list[int] = []
        self.headers: list[list[dict[str, str | bytes | None]]] = []

    def __len__(self) -> int:
        return len(self.offsets)

    def extend(self, msgs: list) -> None:
        """Add records (confluent-kafka messages), one column at a time."""
        stamps = [m.timestamp() for m in msgs]
        self.keys += [m.key() for m in msgs]
        self.values += [m.value() for m in msgs]
        self.offsets += [m.offset() for m in msgs]
        self.times += [ms * 1000 if ms >= 0 else None for _, ms in stamps]
        self.types += [kind - 1 for kind, _ in stamps]  # librdkafka 0/1/2 -> Java's -1, 0 CreateTime, 1 LogAppendTime
        if self.include_headers:
            self.headers += [[{"key": k, "value": v} for k, v in m.headers() or []] for m in msgs]

    def batch(self, schema: pa.Schema) -> pa.RecordBatch:
        import pyarrow as pa
        n = len(self)
        columns = [pa.array(self.keys, pa.binary()), pa.array(self.values, pa.binary()),
                   pa.array([self.topic] * n, pa.string()), pa.array([self.partition] * n, pa.int32()),
                   pa.array(self.offsets, pa.int64()), pa.array(self.times, schema.field("timestamp").type),
                   pa.array(self.types, pa.int32())]
        if self.include_headers:
            columns.append(pa.array(self.headers, schema.field("headers").type))
        self._reset()
        return pa.RecordBatch.from_arrays(columns, schema=schema)


def write_batches(batches: Iterable, client: dict[str, str], topic: str | None) -> int:
    """Produce every row of Arrow batches (columns key, value, topic, partition, headers).

    Returns the number of records acknowledged; raises if any was not.
    """
    from confluent_kafka import Producer
    failures: list[str] = []

    def on_delivery(err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            failures.append(err.str())

    producer = Producer({"partitioner": "murmur2_random", "linger.ms": 5, "log_level": 3, **client})
    sent = 0
    for batch in batches:
        for row in _rows(batch, topic):
            _produce(producer, row, on_delivery)
            sent += 1
        producer.poll(0)
    left = producer.flush(60)
    if left or failures:
        reason = failures[0] if failures else f"{left} were still waiting after 60 s"
        raise RuntimeError(f"{len(failures) + left} of {sent} records were not written to Kafka: {reason}.")
    return sent


def _rows(batch: pa.RecordBatch, topic: str | None) -> Iterator[dict]:
    columns = {name.lower(): batch.column(i).to_pylist() for i, name in enumerate(batch.schema.names)}
    for i in range(batch.num_rows):
        yield {
            "topic": topic or columns["topic"][i],
            "key": _bytes(columns["key"][i]) if "key" in columns else None,
            "value": _bytes(columns["value"][i]),
            "partition": columns["partition"][i] if "partition" in columns else None,
            "headers": [(h["key"], _bytes(h["value"])) for h in columns["headers"][i] or []]
            if "headers" in columns else None,
        }


def _produce(producer: Producer, row: dict, on_delivery: Callable[[KafkaError | None, Message], None]) -> None:
    if not row["topic"]:
        raise ValueError("A row has no topic: set the option topic or fill the topic column.")
    extra = {"partition": row["partition"]} if row["partition"] is not None else {}
    if row["headers"]:
        extra["headers"] = row["headers"]
    while True:
        try:
            producer.produce(row["topic"], key=row["key"], value=row["value"], on_delivery=on_delivery, **extra)
            return
        except BufferError:  # the local queue is full: let deliveries finish first
            producer.poll(0.1)


def _bytes(value: Any) -> bytes | None:  # a key, value or header cell: None, bytes, str or a bytes-like
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return bytes(value)
