"""The check of lab 11: registrations per decade, in tumbling event-time windows.

The learner writes ``per_decade(signups)``: from the parsed sign-up stream, a
streaming DataFrame with the columns ``window`` (10-second tumbling windows of
``signup_ts``), ``decade`` (``registered_year`` rounded down to a multiple of ten) and
``count``, with a 10-second watermark. ``check`` runs that function on the lab's topic
with ``trigger(availableNow=True)`` into a memory table, counts the same records in
plain Python straight from Kafka, and compares, printing a sentence per expectation.

    topic = lab_check.prepare(BOOTSTRAP)          # a topic full of seeded sign-ups
    lab_check.check(spark, per_decade, bootstrap=BOOTSTRAP, topic=topic)
"""

from __future__ import annotations

import json
import tempfile
import uuid
from collections import Counter
from datetime import datetime, timezone

from ..checks import Report

SIGNUP_SCHEMA = ("user_id string, name string, email string, country string, registered_year int, "
                 "plan string, channel string, signup_ts timestamp")
WINDOW_SECONDS = 10
TITLE = "Lab 11: registrations per decade in 10-second windows"


def prepare(bootstrap: str, count: int = 400, seed: int = 2024, interval: float = 0.1) -> str:
    """Create a 3-partition topic holding ``count`` seeded sign-ups; returns its name."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    from ..fakeusers import FakeUsers, key_of, serialize
    topic = f"lab11-signups-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(15)
    start = datetime(2025, 1, 1, 12, 0, 0, tzinfo=timezone.utc).timestamp()
    producer = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random", "linger.ms": 5})
    for event in FakeUsers(seed=seed, start=start, interval=interval).take(count):
        producer.produce(topic, key=key_of(event), value=serialize(event))
    if producer.flush(30):
        raise RuntimeError(f"could not write the lab's sign-ups to {bootstrap}")
    return topic


def signup_stream(spark, bootstrap: str, topic: str):
    """The parsed sign-up stream the learner's function receives."""
    from pyspark.sql import functions as F

    from ..spark.session import kafka_format
    raw = (spark.readStream.format(kafka_format(spark)).option("kafka.bootstrap.servers", bootstrap)
           .option("subscribe", topic).option("startingOffsets", "earliest").load())
    return raw.select(F.from_json(F.col("value").cast("string"), SIGNUP_SCHEMA).alias("s")).select("s.*")


def expected_counts(bootstrap: str, topic: str) -> Counter:
    """(window start in epoch seconds, decade) -> sign-ups, computed in plain Python from Kafka."""
    from ..clients import consume_all
    counts: Counter = Counter()
    for record in consume_all(topic, bootstrap=bootstrap):
        event = json.loads(record.value)
        ts = int(datetime.fromisoformat(event["signup_ts"]).timestamp())
        counts[(ts // WINDOW_SECONDS * WINDOW_SECONDS, event["registered_year"] // 10 * 10)] += 1
    return counts


def check(spark, per_decade, *, bootstrap: str, topic: str) -> None:
    """Run the learner's ``per_decade`` and compare with Python; raises AssertionError on a miss."""
    with Report(TITLE) as report:
        ok, result = report.attempt(per_decade, signup_stream(spark, bootstrap, topic), what="per_decade(signups)")
        if not ok or not _shape_ok(report, result):
            return
        report.check("EventTimeWatermark" in result._jdf.queryExecution().analyzed().toString(),
                     "the query sets a watermark on signup_ts",
                     "No watermark: add .withWatermark(\"signup_ts\", \"10 seconds\") before grouping, or the "
                     "state of old windows is kept forever.")
        got = _run(spark, result, report)
        if got is None:
            return
        _compare(report, got, expected_counts(bootstrap, topic))


def _shape_ok(report: Report, result) -> bool:
    from pyspark.sql import DataFrame
    if not report.check(isinstance(result, DataFrame) and result.isStreaming,
                        "per_decade returns a streaming DataFrame",
                        f"per_decade must return the streaming DataFrame it builds from signups, "
                        f"not {type(result).__name__}."):
        return False
    missing = [c for c in ("window", "decade", "count") if c not in result.columns]
    return report.check(not missing, "the result has the columns window, decade and count",
                        f"The result needs the columns window, decade and count; it has "
                        f"{', '.join(result.columns)} (missing {', '.join(missing)}). Group by "
                        "F.window(\"signup_ts\", \"10 seconds\") and a column named decade, then count().")


def _run(spark, result, report: Report) -> Counter | None:
    from pyspark.sql import functions as F
    name = f"lab11_{uuid.uuid4().hex[:8]}"
    try:
        query = (result.writeStream.format("memory").queryName(name).outputMode("complete")
                 .option("checkpointLocation", tempfile.mkdtemp(prefix="lab11-"))
                 .trigger(availableNow=True).start())
        query.awaitTermination(300)
        rows = spark.table(name).select(F.col("window.start").cast("long").alias("start"),
                                        F.col("decade").cast("long").alias("decade"), "count").collect()
    except Exception as e:  # noqa: BLE001 - an analysis error is the learner's to fix
        report.check(False, "", f"Spark could not run the query: {str(e).splitlines()[0]}")
        return None
    return Counter({(r.start, r.decade): r["count"] for r in rows})


def _compare(report: Report, got: Counter, expected: Counter) -> None:
    report.check(sum(got.values()) == sum(expected.values()),
                 f"all {sum(expected.values())} sign-ups are counted",
                 f"The counts add up to {sum(got.values())}, but the topic holds {sum(expected.values())} sign-ups.")
    decades = sorted({d for _, d in got})
    report.check(all(d % 10 == 0 and 1900 <= d <= 2100 for d in decades),
                 "decades are years rounded down to a multiple of ten",
                 f"Decades should look like 1970, 1980, ... (1987 -> 1980); yours are {decades[:6]}.")
    wrong = sorted(k for k in expected.keys() | got.keys() if got.get(k, 0) != expected.get(k, 0))
    if wrong:
        start, decade = wrong[0]
        when = datetime.fromtimestamp(start, timezone.utc).strftime("%H:%M:%S")
        detail = f"for the window starting at {when} and the {decade}s you counted {got.get(wrong[0], 0)}, " \
                 f"expected {expected.get(wrong[0], 0)}"
    report.check(not wrong, f"every (window, decade) count matches Python's ({len(expected)} of them)",
                 f"{len(wrong)} of {len(expected | got)} (window, decade) counts differ: {detail}." if wrong else "")
