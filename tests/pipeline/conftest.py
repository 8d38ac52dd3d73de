"""Fixtures for the fakeusers pipeline tests: one local Spark for the whole run."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture(scope="session")
def spark():
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java 17 (java is not on the PATH)")
    from kafka_course.spark import local_session
    session = local_session("kafka-hands-on-tests")
    yield session
    session.stop()


@pytest.fixture
def fmt(spark) -> str:
    from kafka_course.spark import register
    return register(spark)  # always the Python source here, even if Spark's jar is present
