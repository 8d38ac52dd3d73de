"""Offset arithmetic of the Spark Kafka source: ranges, read limits, offset specs (no Spark, no broker)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_course.spark import offsets as off
from kafka_course.spark.options import parse_sink, parse_source

T = "fakeusers"
BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": T}


def test_offsets_round_trip_through_sparks_json_shape():
    position = {(T, 0): 5, (T, 1): 0, ("other", 2): 9}
    as_json = off.to_json(position)
    assert as_json == {"fakeusers": {"0": 5, "1": 0}, "other": {"2": 9}}
    assert off.from_json(json.loads(json.dumps(as_json))) == position


def test_resolve_earliest_latest_and_per_partition_specs():
    earliest, latest = {(T, 0): 2, (T, 1): 0}, {(T, 0): 10, (T, 1): 7}
    assert off.resolve("earliest", earliest, latest) == earliest
    assert off.resolve("latest", earliest, latest) == latest
    # -2 is earliest, -1 latest; partitions left out start at earliest
    assert off.resolve({(T, 0): -1}, earliest, latest) == {(T, 0): 10, (T, 1): 0}
    assert off.resolve({(T, 0): 4, (T, 1): -2}, earliest, latest) == {(T, 0): 4, (T, 1): 0}
    with pytest.raises(ValueError, match="fakeusers-5"):
        off.resolve({(T, 5): 0}, earliest, latest)


def test_max_offsets_per_trigger_is_shared_in_proportion_to_backlog():
    start = {(T, 0): 0, (T, 1): 0, (T, 2): 100}
    latest = {(T, 0): 300, (T, 1): 100, (T, 2): 100}
    end = off.limit_offsets(start, latest, 100)
    assert end == {(T, 0): 75, (T, 1): 25, (T, 2): 100}
    assert off.limit_offsets(start, latest, None) == latest
    assert off.limit_offsets(start, latest, 10_000) == latest


def test_a_new_partition_starts_from_the_given_start_or_latest():
    assert off.limit_offsets({}, {(T, 0): 4}, None) == {(T, 0): 4}


@given(st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 1000)), min_size=1, max_size=8),
       st.integers(1, 3000))
def test_limited_batches_read_exactly_the_limit_and_never_pass_latest(pairs, limit):
    start = {(T, p): min(a, b) for p, (a, b) in enumerate(pairs)}
    latest = {(T, p): max(a, b) for p, (a, b) in enumerate(pairs)}
    end = off.limit_offsets(start, latest, limit)
    backlog = sum(latest[tp] - start[tp] for tp in latest)
    assert sum(end[tp] - start[tp] for tp in latest) == min(limit, backlog)
    assert all(start[tp] <= end[tp] <= latest[tp] for tp in latest)


@given(st.lists(st.tuples(st.integers(0, 500), st.integers(0, 500)), min_size=1, max_size=6),
       st.one_of(st.none(), st.integers(1, 20)))
def test_planned_ranges_cover_each_offset_exactly_once(pairs, min_partitions):
    start = {(T, p): min(a, b) for p, (a, b) in enumerate(pairs)}
    end = {(T, p): max(a, b) for p, (a, b) in enumerate(pairs)}
    ranges = off.plan_ranges(start, end, min_partitions)
    covered = sorted((r.partition, o) for r in ranges for o in range(r.from_offset, r.until_offset))
    expected = sorted((p, o) for (_, p) in end for o in range(start[(T, p)], end[(T, p)]))
    assert covered == expected
    assert all(r.size > 0 for r in ranges)
    nonempty = sum(1 for tp in end if end[tp] > start[tp])
    if min_partitions and nonempty:
        assert len(ranges) >= min(min_partitions, sum(end[tp] - start[tp] for tp in end))


def test_restarted_batch_plans_the_same_ranges():
    """Spark replays a logged batch by asking again for the partitions of (start, end)."""
    start, end = {(T, 0): 3, (T, 1): 0}, {(T, 0): 9, (T, 1): 4}
    assert off.plan_ranges(start, end, 4) == off.plan_ranges(dict(start), dict(end), 4)


def test_source_options_match_sparks_names_and_defaults():
    stream = parse_source(BASE, streaming=True)
    assert stream.subscribe == [T] and stream.starting == "latest" and stream.fail_on_data_loss
    batch = parse_source({**BASE, "subscribe": "a, b", "endingOffsets": '{"a": {"0": -1}}'}, streaming=False)
    assert batch.subscribe == ["a", "b"] and batch.starting == "earliest" and batch.ending == {("a", 0): -1}
    opts = parse_source({**BASE, "maxOffsetsPerTrigger": "50", "startingOffsets": '{"fakeusers": {"0": 7}}',
                         "failOnDataLoss": "false", "kafka.security.protocol": "PLAINTEXT"}, streaming=True)
    assert opts.max_offsets_per_trigger == 50 and opts.starting == {(T, 0): 7} and not opts.fail_on_data_loss
    assert opts.client == {"bootstrap.servers": "127.0.0.1:9092", "security.protocol": "PLAINTEXT"}
    pattern = parse_source({"kafka.bootstrap.servers": "x", "subscribePattern": "fake.*"}, streaming=True)
    assert pattern.wants("fakeusers") and not pattern.wants("users") and not pattern.wants("__consumer_offsets")


@pytest.mark.parametrize("options, words", [
    ({"subscribe": T}, "kafka.bootstrap.servers is required"),
    ({**BASE, "subscribePattern": "x"}, "exactly one of"),
    ({**BASE, "maxOffsetsPerTrigger": "0"}, "maxOffsetsPerTrigger must be a positive"),
    ({**BASE, "startingOffsets": "yesterday"}, "startingOffsets must be earliest, latest or JSON"),
    ({**BASE, "endingOffsets": "latest"}, "endingOffsets is for batch queries"),
    ({**BASE, "kafka.group.id": "g"}, "kafka.group.id is not supported"),
    ({**BASE, "failOnDataLoss": "maybe"}, "failOnDataLoss must be true or false"),
    ({**BASE, "startingTimestamp": "1700000000000"}, "startingTimestamp of Spark's Kafka connector is not"),
])
def test_bad_source_options_are_one_sentence(options, words):
    with pytest.raises(ValueError, match=words):
        parse_source(options, streaming=True)


def test_sink_needs_a_value_column_and_a_topic():
    assert parse_sink({"kafka.bootstrap.servers": "x", "topic": "out"}, ["key", "value"]).topic == "out"
    assert parse_sink({"kafka.bootstrap.servers": "x"}, ["value", "topic"]).topic is None
    with pytest.raises(ValueError, match="column named value"):
        parse_sink({"kafka.bootstrap.servers": "x", "topic": "t"}, ["key", "payload"])
    with pytest.raises(ValueError, match="option topic, or add a column"):
        parse_sink({"kafka.bootstrap.servers": "x"}, ["value"])
    with pytest.raises(ValueError, match="Column country cannot be written"):
        parse_sink({"kafka.bootstrap.servers": "x", "topic": "t"}, ["value", "country"])
