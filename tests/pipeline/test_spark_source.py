"""The Python Kafka source and sink for Spark: Spark's options and schema, exactly-once ranges across restarts."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from kafka_course.spark import SCHEMA

from .signups import START, create_topic, produce_signups

pytestmark = pytest.mark.slow


def read_batch(spark, fmt, bootstrap, topic, **options):
    reader = spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def test_batch_read_has_sparks_kafka_schema_and_every_record(spark, fmt, bootstrap):
    topic = create_topic(bootstrap)
    events = produce_signups(bootstrap, topic, 120, headers=True)
    df = read_batch(spark, fmt, bootstrap, topic, includeHeaders="true")
    assert df.schema.simpleString() == (
        "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,timestamp:timestamp,"
        "timestampType:int,headers:array<struct<key:string,value:binary>>>")
    rows = df.collect()
    assert sorted(json.loads(r.value)["user_id"] for r in rows) == sorted(e["user_id"] for e in events)
    assert all(r.key.decode() == json.loads(r.value)["user_id"] and r.topic == topic for r in rows)
    assert {r.timestampType for r in rows} == {0}  # CreateTime, as the Java client reports it
    assert all(r.headers[0].key == "source" and r.headers[0].value == b"tests" for r in rows)
    per_partition = Counter(r.partition for r in rows)
    assert set(per_partition) == {0, 1, 2}
    assert all(sorted(r.offset for r in rows if r.partition == p) == list(range(n))
               for p, n in per_partition.items())


def test_batch_read_between_json_offsets(spark, fmt, bootstrap):
    topic = create_topic(bootstrap, partitions=1)
    produce_signups(bootstrap, topic, 50)
    df = read_batch(spark, fmt, bootstrap, topic, startingOffsets=json.dumps({topic: {"0": 10}}),
                    endingOffsets=json.dumps({topic: {"0": 25}}), minPartitions="3")
    assert sorted(r.offset for r in df.select("offset").collect()) == list(range(10, 25))
    assert df.rdd.getNumPartitions() >= 3  # minPartitions splits one Kafka partition into several tasks


def run_available_now(spark, fmt, bootstrap, topic, checkpoint, seen: dict, max_per_trigger=None):
    """One availableNow run of a stream; each micro-batch's (partition, offset) pairs go to ``seen``."""
    stream = (spark.readStream.format(fmt).option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", topic).option("startingOffsets", "earliest"))
    if max_per_trigger:
        stream = stream.option("maxOffsetsPerTrigger", str(max_per_trigger))

    def collect(batch, batch_id):
        seen.setdefault(batch_id, []).append(sorted((r.partition, r.offset) for r in batch.collect()))

    query = (stream.load().select("partition", "offset").writeStream.foreachBatch(collect)
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
    assert query.awaitTermination(180), "the availableNow query did not finish in 180 s"
    assert query.exception() is None
    return query


def test_restart_from_checkpoint_reads_each_record_exactly_once(spark, fmt, bootstrap, tmp_path):
    topic = create_topic(bootstrap)
    produce_signups(bootstrap, topic, 150)
    seen: dict[int, list] = {}
    first = run_available_now(spark, fmt, bootstrap, topic, tmp_path / "ck", seen, max_per_trigger=60)
    assert [p["numInputRows"] for p in first.recentProgress if p["numInputRows"]] == [60, 60, 30]

    produce_signups(bootstrap, topic, 90, first=150)  # more records while the query is down
    run_available_now(spark, fmt, bootstrap, topic, tmp_path / "ck", seen, max_per_trigger=60)
    records = [pair for runs in seen.values() for pair in runs[0]]
    assert all(len(runs) == 1 for runs in seen.values())
    assert len(records) == len(set(records)) == 240, "a record was read twice or skipped across the restart"

    # A crash after the batch was planned (offset log written) but before it was committed:
    # Spark replays that batch from the checkpoint, and the source must give the same records.
    last = max(seen)
    for name in (str(last), f".{last}.crc"):  # the commit and its checksum file
        (tmp_path / "ck" / "commits" / name).unlink(missing_ok=True)
    run_available_now(spark, fmt, bootstrap, topic, tmp_path / "ck", seen, max_per_trigger=60)
    assert len(seen[last]) == 2 and seen[last][0] == seen[last][1]
    assert max(seen) == last, "nothing new was produced, so no new batch should run"


def test_available_now_ignores_records_that_arrive_later(spark, fmt, bootstrap, tmp_path):
    """prepareForTriggerAvailableNow fixes the target: a query started now ends at what exists now."""
    from kafka_course.spark.options import parse_source
    from kafka_course.spark.source import KafkaStreamReader
    from pyspark.sql.streaming.datasource import ReadAllAvailable
    from pyspark.sql.types import _parse_datatype_string
    topic = create_topic(bootstrap, partitions=2)
    produce_signups(bootstrap, topic, 20)
    options = parse_source({"kafka.bootstrap.servers": bootstrap, "subscribe": topic,
                            "startingOffsets": "earliest"}, streaming=True)
    reader = KafkaStreamReader(options, _parse_datatype_string(SCHEMA))
    start = reader.initialOffset()
    reader.prepareForTriggerAvailableNow()
    produce_signups(bootstrap, topic, 20, first=20)
    end = reader.latestOffset(start, ReadAllAvailable())
    assert sum(end[topic].values()) == 20
    assert reader.latestOffset(end, ReadAllAvailable()) == end
    reader.stop()


def test_streaming_window_counts_match_a_plain_python_count(spark, fmt, bootstrap, tmp_path):
    from pyspark.sql import functions as F
    topic = create_topic(bootstrap)
    events = produce_signups(bootstrap, topic, 200)
    schema = "user_id string, country string, registered_year int, signup_ts timestamp"
    signups = (spark.readStream.format(fmt).option("kafka.bootstrap.servers", bootstrap)
               .option("subscribe", topic).option("startingOffsets", "earliest")
               .option("maxOffsetsPerTrigger", "70").load()
               .select(F.from_json(F.col("value").cast("string"), schema).alias("u")).select("u.*"))
    counts = (signups.withWatermark("signup_ts", "10 seconds")
              .groupBy(F.window("signup_ts", "10 seconds"), "country").count()
              .select(F.col("window.start").cast("long").alias("start"), "country", "count"))
    query = (counts.writeStream.format("memory").queryName("window_counts").outputMode("complete")
             .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start())
    assert query.awaitTermination(180)
    got = {(r.start, r.country): r["count"] for r in spark.table("window_counts").collect()}
    expected = Counter((int(START + i * 0.25) // 10 * 10, e["country"]) for i, e in enumerate(events))
    assert got == dict(expected)


def test_sink_writes_key_value_headers_and_topic_column(spark, fmt, bootstrap, tmp_path):
    from pyspark.sql import functions as F
    source = create_topic(bootstrap)
    produce_signups(bootstrap, source, 60)
    out_a, out_b = create_topic(bootstrap, 1), create_topic(bootstrap, 1)
    parsed = read_batch(spark, fmt, bootstrap, source).select(
        F.col("key"), F.col("value"), F.get_json_object(F.col("value").cast("string"), "$.plan").alias("plan"))
    routed = parsed.select("key", "value", F.when(F.col("plan") == "free", out_a).otherwise(out_b).alias("topic"),
                           F.array(F.struct(F.lit("plan").alias("key"), F.col("plan").cast("binary").alias("value")))
                           .alias("headers"))
    routed.write.mode("append").format(fmt).option("kafka.bootstrap.servers", bootstrap).save()
    back = (read_batch(spark, fmt, bootstrap, f"{out_a},{out_b}", includeHeaders="true")
            .select("topic", F.col("headers")[0]["value"].cast("string").alias("plan")).collect())
    assert len(back) == 60
    assert all((r.plan == "free") == (r.topic == out_a) for r in back)

    # The streaming sink, with the topic option: an availableNow copy of the source topic.
    copy = create_topic(bootstrap, 1)
    query = (spark.readStream.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("subscribe", source)
             .option("startingOffsets", "earliest").load().select("key", "value").writeStream.format(fmt)
             .option("kafka.bootstrap.servers", bootstrap).option("topic", copy)
             .option("checkpointLocation", str(tmp_path / "copy")).trigger(availableNow=True).start())
    assert query.awaitTermination(180) and query.exception() is None
    copied = read_batch(spark, fmt, bootstrap, copy).select("key", "value").collect()
    original = read_batch(spark, fmt, bootstrap, source).select("key", "value").collect()
    assert sorted(map(tuple, copied)) == sorted(map(tuple, original))


def test_deleted_records_fail_the_query_unless_fail_on_data_loss_is_false(spark, fmt, bootstrap, tmp_path):
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient
    topic = create_topic(bootstrap, partitions=1)
    produce_signups(bootstrap, topic, 30)
    seen: dict[int, list] = {}
    run_available_now(spark, fmt, bootstrap, topic, tmp_path / "ck", seen)
    produce_signups(bootstrap, topic, 30, first=30)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.delete_records([TopicPartition(topic, 0, 40)])[TopicPartition(topic, 0, 40)].result(15)
    with pytest.raises(Exception, match="failOnDataLoss"):
        run_available_now(spark, fmt, bootstrap, topic, tmp_path / "ck", seen)
    later: dict[int, list] = {}
    stream = (spark.readStream.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
              .option("failOnDataLoss", "false").load().select("offset"))
    query = (stream.writeStream.foreachBatch(lambda b, i: later.setdefault(i, [r.offset for r in b.collect()]))
             .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start())
    assert query.awaitTermination(180) and query.exception() is None
    assert sorted(o for offs in later.values() for o in offs) == list(range(40, 60))
