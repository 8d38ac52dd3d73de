"""Where librdkafka's own log lines go: to Python logging, not into a notebook's cell output.

librdkafka (inside confluent-kafka) writes a line to stderr every time a connection fails,
``%3|1732467600.123|FAIL|rdkafka#producer-1| ... Connection refused``. When a notebook stops
a broker on purpose, every cached client says so, two to sixteen lines per cell, in pink
boxes that bury what the cell is about. The course's client factories give librdkafka a
Python logger instead (confluent-kafka's ``logger`` setting, which works the same at work):

    from confluent_kafka import Producer
    Producer({"bootstrap.servers": BOOTSTRAP, "logger": course.client_log})

The lines are kept quiet unless you ask for them: ``course.show_client_logs()`` prints them
in the cell (one line each), ``course.show_client_logs(False)`` hides them again, and any
logging configuration of your own (``logging.basicConfig(level=logging.INFO)``) sees them
under the name ``librdkafka``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any

client_log = logging.getLogger("librdkafka")
client_log.addHandler(logging.NullHandler())  # no "last resort" printing to stderr

_shown: list[logging.Handler] = []


def quiet(config: Mapping[str, Any]) -> dict[str, Any]:
    """A librdkafka client configuration whose log lines go to ``client_log``."""
    return {"logger": client_log, **config}


def show_client_logs(show: bool = True, level: int = logging.INFO) -> None:
    """Print librdkafka's log lines in the cell (``show=False`` hides them again)."""
    for handler in _shown:
        client_log.removeHandler(handler)
    _shown.clear()
    if show:
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter("librdkafka %(levelname)s %(message)s"))
        handler.setLevel(level)
        client_log.addHandler(handler)
        client_log.setLevel(min(level, client_log.getEffectiveLevel()))
        _shown.append(handler)
