"""Page views counted with Faust: a stateful count and a tumbling-window count, as in Kafka Streams.

Faust (the ``faust-streaming`` package, on aiokafka) brings Kafka Streams' model to Python:
an *agent* consumes a topic as a consumer group, ``group_by`` re-keys the stream through a
**repartition topic**, and a *table* is a state store whose every change goes to a
compacted **changelog topic**. A restarted worker rebuilds its tables from the changelogs,
then goes on from its committed input offsets. In Kafka Streams and ksqlDB:

    views.groupBy((user, view) -> view.page).count()                       // views per page
    views.groupBy(...).windowedBy(TimeWindows.ofSizeWithNoGrace(1 min)).count()  // per minute

    SELECT page, COUNT(*) FROM views GROUP BY page EMIT CHANGES;
    SELECT page, COUNT(*) FROM views WINDOW TUMBLING (SIZE 1 MINUTE) GROUP BY page EMIT CHANGES;

Run it as any Faust app: ``faust -A kafka_course.ecosystem.page_views worker -l info``.
Configured from the environment, as a deployed app is:

* ``KAFKA_BOOTSTRAP_SERVERS``: the cluster (``host:port,host:port``);
* ``PAGE_VIEWS_TOPIC``: the input, JSON values ``{"user": ..., "page": ..., "viewed_at": ...}``
  keyed by user; ``PAGE_VIEWS_APP``: the application id (its consumer group, and the prefix of
  its internal topics);
* Faust's own settings: ``TOPIC_REPLICATION_FACTOR`` for the topics it creates,
  ``PROCESSING_GUARANTEE`` (``at_least_once`` or ``exactly_once``).

A known race in Faust 0.15 (``Recovery`` resumes the input partitions, then seeks them to
the committed offsets): input that is already waiting when a worker restarts can be
processed twice or skipped. The notebook and the tests restart the worker first and send
the next records once it is ready.
"""

from __future__ import annotations

import logging
import os
from datetime import timedelta

import faust

log = logging.getLogger(__name__)

APP_ID = os.environ.get("PAGE_VIEWS_APP", "page-views")
BOOTSTRAP = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "localhost:9092")
WINDOW = timedelta(minutes=1)


class View(faust.Record, serializer="json"):
    user: str
    page: str
    viewed_at: float  # event time, seconds since the epoch


app = faust.App(
    APP_ID,
    broker=[f"kafka://{server}" for server in BOOTSTRAP.split(",")],
    store="memory://",  # the state lives in memory, so a restarted worker restores all of it from the changelog
    topic_partitions=3,  # for the repartition and changelog topics Faust creates
    broker_commit_interval=1.0,  # commit the input offsets every second (Faust's default is 2.8 s)
    web_enabled=False,
)
views = app.topic(os.environ.get("PAGE_VIEWS_TOPIC", "page-views"), key_type=str, value_type=View)

# Changelog topics "<app id>-views-per-page-changelog" and "<app id>-views-per-minute-changelog".
per_page = app.Table("views-per-page", default=int)
per_minute = (app.Table("views-per-minute", default=int)
              .tumbling(WINDOW, expires=timedelta(hours=1))
              # windows by event time, not by arrival. Faust's Record makes View.viewed_at a FieldDescriptor on
              # the class, but its annotation (float) is what type checkers see: a gap in Faust's typing.
              .relative_to_field(View.viewed_at))  # type: ignore[arg-type]


@app.agent(views, name=APP_ID)
async def count(stream: faust.StreamT[View]) -> None:
    # The input is keyed by user; counting per page needs every view of a page in one
    # partition, so group_by writes the views to "<app id>-<topic>-page-repartition" keyed by page.
    # (View.page is a FieldDescriptor too, typed str: the same gap as View.viewed_at above)
    async for view in stream.group_by(View.page, name="page"):  # type: ignore[arg-type]
        per_page[view.page] += 1
        per_minute[view.page] += 1


@per_page.on_recover
async def show_restored_state() -> None:
    log.info("restored views-per-page from its changelog: %s", dict(sorted(per_page.items())))
