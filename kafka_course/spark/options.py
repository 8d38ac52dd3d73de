"""The options of Spark's built-in Kafka source and sink, read and checked once.

The names and defaults are those of Spark's "Structured Streaming + Kafka
Integration Guide", so a query is written the same way for ``format("kafka")`` and
for this package's format. Options starting with ``kafka.`` are client settings;
they are handed to librdkafka, which understands the common Java names
(``bootstrap.servers``, ``security.protocol``, ``sasl.mechanism``...).

Every mistake becomes a ``ValueError`` with one sentence naming the option.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from . import offsets as off

# Settings the source or sink must own (Spark refuses them for the same reasons).
_OWNED = {"group.id", "auto.offset.reset", "enable.auto.commit", "key.deserializer", "value.deserializer",
          "key.serializer", "value.serializer", "interceptor.classes"}
# Java-client-only settings with no librdkafka equivalent: accepted and ignored.
_JAVA_ONLY = {"max.poll.records", "default.api.timeout.ms", "retry.backoff.max.ms"}
_SUBSCRIPTIONS = ("assign", "subscribe", "subscribePattern")
# Options of Spark's connector this source does not implement: refused rather than ignored.
_NOT_IMPLEMENTED = ("startingTimestamp", "startingOffsetsByTimestamp", "startingOffsetsByTimestampStrategy",
                    "endingTimestamp", "endingOffsetsByTimestamp", "minOffsetsPerTrigger", "maxTriggerDelay")


@dataclass
class SourceOptions:
    """What a Kafka source was asked to read, and how."""
    client: dict[str, str]
    subscribe: list[str] = field(default_factory=list)
    pattern: str | None = None
    assign: dict[str, list[int]] | None = None
    starting: str | off.Offsets = "latest"
    ending: str | off.Offsets = "latest"
    max_offsets_per_trigger: int | None = None
    min_partitions: int | None = None
    fail_on_data_loss: bool = True
    include_headers: bool = False
    poll_timeout_ms: int = 120_000

    def wants(self, topic: str) -> bool:
        """Is this topic part of the subscription?"""
        if self.assign is not None:
            return topic in self.assign
        if self.pattern is not None:
            return re.fullmatch(self.pattern, topic) is not None and not topic.startswith("__")
        return topic in self.subscribe


def client_settings(options: Mapping[str, str]) -> dict[str, str]:
    """The ``kafka.*`` options without their prefix; requires ``kafka.bootstrap.servers``."""
    settings = {k[len("kafka."):]: str(v) for k, v in options.items() if k.lower().startswith("kafka.")}
    if not settings.get("bootstrap.servers"):
        raise ValueError("Option kafka.bootstrap.servers is required: the address of a broker, "
                         "e.g. .option(\"kafka.bootstrap.servers\", \"127.0.0.1:9092\").")
    owned = sorted(set(settings) & _OWNED)
    if owned:
        raise ValueError(f"Option kafka.{owned[0]} is not supported: the Kafka source manages it itself "
                         "(use startingOffsets instead of auto.offset.reset; offsets live in the checkpoint).")
    return {k: v for k, v in settings.items() if k not in _JAVA_ONLY}


def parse_source(options: Mapping[str, str], *, streaming: bool) -> SourceOptions:
    """Check and convert the options of ``spark.read``/``spark.readStream`` on Kafka."""
    opts = {k.lower(): v for k, v in options.items()}
    missing = [name for name in _NOT_IMPLEMENTED if name.lower() in opts]
    if missing:
        raise ValueError(f"Option {missing[0]} of Spark's Kafka connector is not implemented by this Python "
                         "source; use startingOffsets with per-partition offsets instead, or Spark's connector jar.")
    given = [name for name in _SUBSCRIPTIONS if name.lower() in opts]
    if len(given) != 1:
        raise ValueError("Give exactly one of the options subscribe (a comma-separated list of topics), "
                         f"subscribePattern or assign; got {', '.join(given) or 'none'}.")
    parsed = SourceOptions(client=client_settings(options), starting="latest" if streaming else "earliest")
    _parse_subscription(parsed, given[0], opts[given[0].lower()])
    if "startingoffsets" in opts:
        parsed.starting = _offset_spec(opts["startingoffsets"], "startingOffsets", allow_latest=True)
    if "endingoffsets" in opts:
        if streaming:
            raise ValueError("Option endingOffsets is for batch queries (spark.read); a stream has no end. "
                             "Use trigger(availableNow=True) to stop at what exists now.")
        parsed.ending = _offset_spec(opts["endingoffsets"], "endingOffsets", allow_latest=True, allow_earliest=False)
    elif not streaming and parsed.starting == "latest":
        raise ValueError("startingOffsets=latest makes no sense for a batch query: it would read nothing.")
    parsed.max_offsets_per_trigger = _positive(opts, "maxoffsetspertrigger", "maxOffsetsPerTrigger")
    parsed.min_partitions = _positive(opts, "minpartitions", "minPartitions")
    parsed.poll_timeout_ms = _positive(opts, "kafkaconsumer.polltimeoutms", "kafkaConsumer.pollTimeoutMs") or 120_000
    parsed.fail_on_data_loss = _boolean(opts, "failondataloss", "failOnDataLoss", True)
    parsed.include_headers = _boolean(opts, "includeheaders", "includeHeaders", False)
    return parsed


def _parse_subscription(parsed: SourceOptions, name: str, value: str) -> None:
    if name == "subscribe":
        parsed.subscribe = [t.strip() for t in value.split(",") if t.strip()]
        if not parsed.subscribe:
            raise ValueError("Option subscribe needs at least one topic name, e.g. \"fakeusers\".")
    elif name == "subscribePattern":
        try:
            re.compile(value)
        except re.error as e:
            raise ValueError(f"Option subscribePattern {value!r} is not a valid regular expression: {e}.") from None
        parsed.pattern = value
    else:
        try:
            data = json.loads(value)
            parsed.assign = {str(t): [int(p) for p in ps] for t, ps in data.items()}
        except (ValueError, TypeError, AttributeError):
            raise ValueError(f"Option assign must be JSON like {{\"fakeusers\": [0, 1]}}, not {value!r}.") from None


def _offset_spec(value: str, name: str, *, allow_latest: bool, allow_earliest: bool = True) -> str | off.Offsets:
    text = value.strip()
    if text.lower() in ("earliest", "latest"):
        if text.lower() == "earliest" and not allow_earliest:
            raise ValueError(f"Option {name}=earliest is not allowed: use latest or per-partition offsets.")
        return text.lower()
    try:
        spec = off.from_json(json.loads(text))
    except ValueError as e:
        raise ValueError(f"Option {name} must be earliest, latest or JSON like "
                         f"{{\"fakeusers\": {{\"0\": 23, \"1\": -2}}}} (-2 earliest, -1 latest): {e}") from None
    if not allow_earliest and off.EARLIEST in spec.values():
        raise ValueError(f"Option {name} cannot use -2 (earliest) for a partition.")
    return spec


def _positive(opts: dict[str, str], key: str, name: str) -> int | None:
    if key not in opts:
        return None
    try:
        value = int(opts[key])
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"Option {name} must be a positive whole number, not {opts[key]!r}.")
    return value


def _boolean(opts: dict[str, str], key: str, name: str, default: bool) -> bool:
    text = str(opts.get(key, default)).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"Option {name} must be true or false, not {opts[key]!r}.")
    return text == "true"


@dataclass
class SinkOptions:
    """Where a Kafka sink writes."""
    client: dict[str, str]
    topic: str | None


def parse_sink(options: Mapping[str, str], column_names: list[str]) -> SinkOptions:
    """Check the options and columns of ``df.write``/``df.writeStream`` to Kafka."""
    opts = {k.lower(): v for k, v in options.items()}
    names = {c.lower() for c in column_names}
    if "value" not in names:
        raise ValueError("Writing to Kafka needs a column named value (string or binary), "
                         f"e.g. to_json(struct(*)) AS value; the columns are {', '.join(column_names)}.")
    unknown = sorted(names - {"key", "value", "topic", "partition", "headers"})
    if unknown:
        raise ValueError(f"Column {unknown[0]} cannot be written to Kafka: keep only key, value, topic, "
                         "partition and headers (select or drop the others first).")
    topic = opts.get("topic")
    if not topic and "topic" not in names:
        raise ValueError("Say where to write: set the option topic, or add a column named topic.")
    return SinkOptions(client=client_settings(options), topic=topic)


def group_id() -> str:
    """A group id nobody shares, like Spark's ``spark-kafka-source-<uuid>`` (never committed to)."""
    return f"spark-kafka-source-{uuid.uuid4()}"
