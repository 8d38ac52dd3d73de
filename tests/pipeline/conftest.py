"""Fixtures for the fakeusers pipeline tests: one local Spark for the whole run."""

from __future__ import annotations

import os
import shutil

import pytest

# foreachBatch runs through py4j's callback server, which watches its socket with select():
# select() cannot take a descriptor above 1023, and a worker that has run a few hundred
# tests before its first Spark test can be past that (CI failed twice on "filedescriptor
# out of range in select()"). Descriptors are handed out lowest first, so a few taken while
# the worker is young are given back just before the callback server opens its socket.
_KEPT_LOW = [os.open(os.devnull, os.O_RDONLY) for _ in range(8)]


@pytest.fixture(scope="session")
def spark():
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java 17 (java is not on the PATH)")
    from pyspark.java_gateway import ensure_callback_server_started

    from kafka_course.spark import local_session
    session = local_session("kafka-hands-on-tests")
    while _KEPT_LOW:
        os.close(_KEPT_LOW.pop())
    ensure_callback_server_started(session.sparkContext._gateway)
    assert session.sparkContext._gateway._callback_server.server_socket.fileno() < 1024
    yield session
    session.stop()


@pytest.fixture
def fmt(spark) -> str:
    from kafka_course.spark import register
    return register(spark)  # always the Python source here, even if Spark's jar is present


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Run a test once more when its only failure was Spark's fixed 10-s wait for a Python
    worker to connect back (kafka_course.spark.session.WORKER_LATE): a busy machine, not the source under test."""
    from kafka_course.spark.session import WORKER_LATE
    try:
        return (yield)
    except Exception as error:
        if WORKER_LATE not in str(error):
            raise
        print(f"{item.nodeid}: Spark's Python worker missed Spark's 10 s to connect back; running the test again")
        return item.runtest()
