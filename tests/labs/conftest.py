"""Fixtures for the lab checks' tests (see ``embedded``)."""

from __future__ import annotations

import pytest

from .embedded import embedded


@pytest.fixture
def one_broker() -> str:
    """The single-broker embedded minikafka, made the current cluster for each test."""
    return embedded()


@pytest.fixture
def three_brokers() -> str:
    """The three-broker embedded minikafka, made the current cluster for each test."""
    return embedded(brokers=3)
