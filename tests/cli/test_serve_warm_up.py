"""`minikafka serve` warms up once it listens: every API version's classes are built before a
client needs them, then what exists is frozen out of the garbage collector's full passes, so a
collection walks only what requests created (a full pass over the broker's 100,000 start-up
objects held the event loop for tens of milliseconds in bench/room.py)."""

from __future__ import annotations

import gc
import threading

from minikafka.cli import serve
from minikafka.protocol import codec


def test_warm_up_freezes_what_exists_once_the_classes_are_built():
    gc.unfreeze()
    try:
        serve.warm_up(threading.Event())
        assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()


def test_a_broker_that_stops_first_stops_the_warm_up():
    gc.unfreeze()
    stopping = threading.Event()
    stopping.set()
    serve.warm_up(stopping)
    assert gc.get_freeze_count() == 0
    assert codec.warm_up(stopping.is_set) == 0
