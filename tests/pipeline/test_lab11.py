"""Lab 11 (a streaming aggregation): the reference solution passes, the starter fails with a sentence."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from minikafka.course.checks import CheckFailed
from minikafka.spark import lab_check

LAB = Path(__file__).resolve().parents[2] / "labs" / "11-streaming-aggregation"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java 17")]


def run(name: str, tmp_path) -> nbformat.NotebookNode:
    nb = nbformat.read(LAB / name, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    return nb


@pytest.mark.timeout(900)
def test_reference_solution_passes(tmp_path):
    nb = run("solution.ipynb", tmp_path)
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "All 6 checks passed" in printed


@pytest.mark.timeout(900)
def test_untouched_starter_fails_with_a_sentence(tmp_path):
    with pytest.raises(CellExecutionError) as failure:
        run("starter.ipynb", tmp_path)
    assert "CheckFailed" in str(failure.value)
    assert "needs the columns window, decade and count" in str(failure.value)


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
