"""Faust (faust-streaming on aiokafka) against minikafka: tables, their changelog and repartition topics, restore.

The app is notebook 12's (``kafka_course.ecosystem.page_views``), run as its own
``faust -A ... worker`` process and stopped with SIGTERM, as a deploy would stop it.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource

import kafka_course as course
from kafka_course.ecosystem import streams

APP = "kafka_course.ecosystem.page_views"
PAGES = ["/home", "/cart", "/checkout", "/help"]


def page_views(n: int, seed: int = 7) -> list[dict]:
    """``n`` views by five users, spread over three whole minutes of event time."""
    rng = random.Random(seed)
    start = (int(time.time()) // 60 - 3) * 60
    return [{"user": f"user-{rng.randrange(5)}", "page": rng.choice(PAGES), "viewed_at": start + i * 180 / n}
            for i in range(n)]


def produce(bootstrap: str, topic: str, views: list[dict]) -> None:
    """JSON values keyed by user, as a web server would write them."""
    course.produce_demo(topic, len(views), key=lambda i: views[i]["user"], value=lambda i: views[i],
                        bootstrap=bootstrap)


def caught_up(bootstrap: str, group: str, topic: str, repartition: str) -> bool:
    # The input first: Faust flushes what it forwarded before it commits the input offsets.
    return not any(course.lag(group, topic, bootstrap=bootstrap).values()) and \
        not any(course.lag(group, repartition, bootstrap=bootstrap).values())


@pytest.fixture
def app(cluster, tmp_path):
    """A fresh input topic and a worker for it (killed at the end if a test left it running)."""
    bootstrap = cluster.bootstrap_servers
    topic = course.new_topic("views", partitions=3, bootstrap=bootstrap)
    app_id = f"counter-{topic[-6:]}"
    worker = streams.FaustWorker(APP, log_dir=tmp_path, KAFKA_BOOTSTRAP_SERVERS=bootstrap,
                                 PAGE_VIEWS_TOPIC=topic, PAGE_VIEWS_APP=app_id)
    yield worker, bootstrap, topic, app_id
    worker.kill()


def run_until_caught_up(worker, bootstrap, topic, app_id):
    repartition = f"{app_id}-{topic}-page-repartition"
    course.wait_until(lambda: caught_up(bootstrap, app_id, topic, repartition), timeout=30,
                      what="the worker to commit every view")


def test_counts_per_page_and_per_minute_in_tables_backed_by_compacted_changelogs(app):
    worker, bootstrap, topic, app_id = app
    views = page_views(24)
    produce(bootstrap, topic, views)
    worker.start()
    run_until_caught_up(worker, bootstrap, topic, app_id)
    assert worker.stop() == 0, worker.tail()

    per_page = f"{app_id}-views-per-page-changelog"
    per_minute = f"{app_id}-views-per-minute-changelog"
    repartition = f"{app_id}-{topic}-page-repartition"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topics = admin.list_topics(timeout=10).topics
    assert {per_page, per_minute, repartition} <= set(topics)
    assert all(len(topics[t].partitions) == 3 for t in (per_page, per_minute, repartition))
    configs = {r.name: f.result(10) for r, f in
               admin.describe_configs([ConfigResource("topic", t) for t in (per_page, per_minute)]).items()}
    assert configs[per_page]["cleanup.policy"].value == "compact"
    # Old windows expire: a windowed changelog is compacted, and deleted after the windows' retention.
    assert configs[per_minute]["cleanup.policy"].value == "compact,delete"
    assert configs[per_minute]["retention.ms"].value == str(3600 * 1000)

    assert streams.changelog_table(bootstrap, per_page) == dict(Counter(v["page"] for v in views))
    windows = {(page, start): n for (page, (start, _end)), n in streams.changelog_table(bootstrap, per_minute).items()}
    assert windows == dict(Counter((v["page"], v["viewed_at"] // 60 * 60) for v in views))
    assert len({start for _, start in windows}) == 3  # three tumbling windows of one minute

    rekeyed = course.consume_all(repartition, bootstrap=bootstrap)
    assert len(rekeyed) == len(views)
    partition_of = {}
    for record in rekeyed:  # keyed by page now, so each page lives in one partition
        assert record.key.decode() == json.loads(record.value)["page"]
        assert partition_of.setdefault(record.key, record.partition) == record.partition


@pytest.mark.slow
def test_a_restarted_worker_restores_its_table_from_the_changelog_and_goes_on(app):
    worker, bootstrap, topic, app_id = app
    views = page_views(30, seed=3)
    produce(bootstrap, topic, views[:14])
    worker.start()
    assert worker.log("restored views-per-page") == ["restored views-per-page from its changelog: {}"]
    run_until_caught_up(worker, bootstrap, topic, app_id)
    assert worker.stop() == 0, worker.tail()

    worker.start()  # the state is in memory only: all of it must come back from the changelog
    first = dict(sorted(Counter(v["page"] for v in views[:14]).items()))
    assert worker.log("restored views-per-page") == [f"restored views-per-page from its changelog: {first}"]
    produce(bootstrap, topic, views[14:])
    run_until_caught_up(worker, bootstrap, topic, app_id)
    assert worker.stop() == 0, worker.tail()
    table = streams.changelog_table(bootstrap, f"{app_id}-views-per-page-changelog")
    assert table == dict(Counter(v["page"] for v in views))  # nothing lost, nothing counted twice


def test_a_worker_that_cannot_start_says_why(tmp_path):
    worker = streams.FaustWorker("kafka_course.ecosystem.no_such_app", log_dir=tmp_path)
    with pytest.raises(RuntimeError, match="did not start") as failure:
        worker.start(timeout=30)
    assert "no_such_app" in str(failure.value)
    assert not worker.running
