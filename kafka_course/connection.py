"""Where the course's Kafka lives: an address you give, the environment, or an embedded minikafka.

``bootstrap()`` is the one call every notebook makes. It returns, in this order:

1. the address you pass it (a notebook's ``BOOTSTRAP`` parameter),
2. ``KAFKA_BOOTSTRAP_SERVERS`` from the environment (for example the course's
   docker compose cluster of real Apache Kafka brokers),
3. the address of a minikafka ``Cluster`` started inside this Python process, once.

Every other helper that needs an address and is given none asks ``current_bootstrap()``.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
from typing import Any, Mapping

from minikafka import Cluster

from .i18n import _

ENV_VAR = "KAFKA_BOOTSTRAP_SERVERS"

_embedded: dict[tuple, Cluster] = {}  # one embedded cluster per shape asked for
_current: str | None = None  # the address the last bootstrap() call returned


# Where the embedded minikafka departs from Kafka's defaults, and why. Kafka waits
# group.initial.rebalance.delay.ms (3 s) for more members before a new group's first
# rebalance; in a notebook every first join would pay it, and without it each newcomer's
# rebalance is visible, which is what the consumer-group notebook shows.
TEACHING_DEFAULTS = {"group.initial.rebalance.delay.ms": 0}


def bootstrap(servers: str | None = None, *, brokers: int = 1, config: Mapping[str, Any] | None = None) -> str:
    """The bootstrap address to give Kafka clients (see the module docstring for the order).

    ``brokers`` and ``config`` shape the embedded minikafka; a real cluster is what it is.
    Calling again with the same shape returns the cluster already running.
    """
    global _current
    servers = servers or os.environ.get(ENV_VAR)
    if servers:
        _current = servers
        return servers
    key = (brokers, tuple(sorted((config or {}).items())))
    if key not in _embedded:
        _show_broker_warnings()
        embedded = Cluster(brokers=brokers, config={**TEACHING_DEFAULTS, **dict(config or {})}).start()
        _embedded[key] = embedded
        count = f"{brokers} {_('broker') if brokers == 1 else _('brokers')}"
        print(_("Started an embedded minikafka ({count}) at {servers}. Set {variable} to use a real Kafka cluster "
                "instead.").format(count=count, servers=embedded.bootstrap_servers, variable=ENV_VAR))
    _current = _embedded[key].bootstrap_servers
    return _current


def _show_broker_warnings() -> None:
    """The embedded broker's warnings, one line each on stderr: "minikafka WARNING: ...".

    Without a handler Python prints only the bare message; with this one a learner can
    tell the broker's voice from the client's. A logging setup of your own takes precedence.
    """
    log = logging.getLogger("minikafka")
    if log.handlers or logging.getLogger().handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("minikafka %(levelname)s: %(message)s"))
    handler.setLevel(logging.WARNING)
    log.addHandler(handler)


def current_bootstrap() -> str:
    """The address of the last ``bootstrap()`` call, starting the default cluster if none."""
    return _current or bootstrap()


def embedded_at(servers: str) -> Cluster | None:
    """The embedded cluster serving ``servers``, or None for a cluster outside this process."""
    for embedded in _embedded.values():
        if embedded.running and embedded.bootstrap_servers == servers:
            return embedded
        if embedded.running and set(servers.split(",")) <= {f"{embedded.host}:{p}" for p in embedded.ports.values()}:
            return embedded  # the same cluster, seen while one of its brokers is down
    return None


@atexit.register
def _stop_embedded() -> None:
    for embedded in _embedded.values():
        embedded.stop()
    _embedded.clear()
