"""The process's embedded cluster, as a lab notebook gets it.

A lab check reaches minikafka's powers (compacting now, stopping a broker, reading
segments) through ``course.cluster()``, which knows the clusters ``course.bootstrap()``
started, so the tests use those too, whatever ``KAFKA_BOOTSTRAP_SERVERS`` says. Each check
makes its own topics, so the tests of a worker can share them.
"""

from __future__ import annotations

import pytest

import kafka_course as course
from kafka_course.connection import ENV_VAR


def embedded(brokers: int = 1) -> str:
    """The embedded cluster of this shape, made the current one (as ``bootstrap()`` in a notebook)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(ENV_VAR, raising=False)
        return course.bootstrap(brokers=brokers)
