"""Spark Structured Streaming on Kafka without Maven: a Python Kafka source and sink.

    from kafka_course.spark import kafka_format, local_session
    spark = local_session()
    fmt = kafka_format(spark)      # "kafka" with Spark's connector jar, else "minikafka-kafka"
    df = spark.readStream.format(fmt).option("kafka.bootstrap.servers", B).option("subscribe", "t").load()

``source`` holds the data source (PySpark's Python Data Source API), ``offsets`` the
offset arithmetic, ``kafka_io`` the client code that runs in Spark tasks, ``sink``
the writers, ``session`` the local session and format choice, and ``lab_check`` the
check of lab 11.
"""

from .offsets import OffsetRange
from .session import has_kafka_connector, kafka_format, local_session, register
from .source import NAME, SCHEMA, KafkaDataSource

__all__ = ["NAME", "SCHEMA", "KafkaDataSource", "OffsetRange", "has_kafka_connector", "kafka_format",
           "local_session", "register"]
