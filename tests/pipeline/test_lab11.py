"""Lab 11's check explains what is wrong in a learner's streaming aggregation.

(tests/course/test_notebooks.py runs the lab's solution, which must pass, and its
untouched starter, which must fail in its check cell.)"""

from __future__ import annotations

import shutil

import pytest

from kafka_course.checks import CheckFailed
from kafka_course.labs import streaming_aggregation as lab_check

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java 17")]


@pytest.fixture(scope="module")
def lab_topic():
    from minikafka import Cluster
    cluster = Cluster().start()
    yield cluster.bootstrap_servers, lab_check.prepare(cluster.bootstrap_servers, count=120)
    cluster.stop()


def test_missing_watermark_and_wrong_decade_are_explained(spark, lab_topic, capsys):
    from pyspark.sql import functions as F
    bootstrap, topic = lab_topic

    def per_year_tenth(signups):  # no watermark, and decade = year / 10 (199 instead of 1990)
        return signups.groupBy(F.window("signup_ts", "10 seconds"),
                               F.floor(F.col("registered_year") / 10).alias("decade")).count()

    with pytest.raises(CheckFailed):
        lab_check.check(spark, per_year_tenth, bootstrap=bootstrap, topic=topic)
    printed = capsys.readouterr().out
    assert "No watermark" in printed and "Decades should look like 1970" in printed
    assert "all 120 sign-ups are counted" in printed


def test_a_crashing_function_becomes_a_failed_check(spark, lab_topic, capsys):
    bootstrap, topic = lab_topic
    with pytest.raises(CheckFailed):
        lab_check.check(spark, lambda signups: signups.no_such_method(), bootstrap=bootstrap, topic=topic)
    printed = capsys.readouterr().out
    assert "per_decade(signups) raised" in printed and "no_such_method" in printed
