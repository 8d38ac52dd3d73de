"""A small local Spark for the course, and the choice between the two Kafka formats.

``local_session()`` makes the settings the course needs explicit: Spark binds to
loopback (no surprise with a laptop's network), its Python workers run the same
interpreter as the notebook (so they can import this package), the web UI is off
and shuffles use two partitions instead of 200, which is what makes small streaming
queries fast on a laptop.

``kafka_format(spark)`` answers "kafka" when Spark's own Kafka connector is on the
classpath (for example after ``--packages org.apache.spark:spark-sql-kafka-0-10...``)
and otherwise registers this package's data source and answers its name.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import TYPE_CHECKING

from .source import NAME, KafkaDataSource

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CONNECTOR_CLASS = "org.apache.spark.sql.kafka010.KafkaSourceProvider"
# Spark 4 gives each Python worker it starts (to plan a Python data source, among others) a fixed
# 10 s to connect back (PythonWorkerFactory.createSimpleWorker; no setting changes it). On a busy
# machine Python can start slower than that, and the query fails with this sentence before it
# reads a record: a busy machine, not the query.
WORKER_LATE = "Python worker failed to connect back"


def local_session(app_name: str = "kafka-hands-on", cores: int = 2, shuffle_partitions: int = 2,
                  **conf: str) -> SparkSession:
    """A ``local[cores]`` SparkSession set up for the course (see the module docstring)."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # PySpark 4.3 warns on import that pandas 3 is newer than it was tested with; the
    # course does not use pandas through Spark, so keep notebooks free of that noise.
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    from pyspark.sql import SparkSession
    builder = (SparkSession.builder.master(f"local[{cores}]").appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
               .config("spark.sql.session.timeZone", "UTC"))
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def has_kafka_connector(spark: SparkSession) -> bool:
    """Is Spark's built-in Kafka connector loadable in this session's JVM?"""
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:  # Spark Connect: no JVM on this side to ask
        return False
    try:
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        jvm.java.lang.Class.forName(CONNECTOR_CLASS, False, loader)
        return True
    except Exception:  # noqa: BLE001 - py4j raises its own error type for ClassNotFoundException
        return False


def register(spark: SparkSession) -> str:
    """Register the Python Kafka data source in this session; returns its format name."""
    spark.dataSource.register(KafkaDataSource)
    return NAME


def kafka_format(spark: SparkSession, prefer_builtin: bool = True) -> str:
    """``"kafka"`` if Spark's connector is available (and preferred), else this package's format."""
    if prefer_builtin and has_kafka_connector(spark):
        return "kafka"
    return register(spark)
