"""Where the course's Kafka lives: an address you give, the environment, or an embedded minikafka.

``bootstrap()`` is the one call every notebook makes. It returns, in this order:

1. the address you pass it (a notebook's ``BOOTSTRAP`` parameter),
2. ``KAFKA_BOOTSTRAP_SERVERS`` from the environment (for example the course's
   docker compose cluster of real Apache Kafka brokers),
3. the address of a minikafka ``Cluster`` started inside this Python process, once.

Every other helper that needs an address and is given none asks ``current_bootstrap()``.

An address given that no broker answers stops there, with one sentence that names the fix
(``KafkaUnreachable``), instead of a client's timeout and a long traceback a few cells later;
the course's helpers that need the cluster say the same sentence until the address works.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
from collections.abc import Mapping
from typing import Any

from minikafka.api import Cluster

from .i18n import _

ENV_VAR = "KAFKA_BOOTSTRAP_SERVERS"

_embedded: dict[tuple, Cluster] = {}  # one embedded cluster per shape asked for
_current: str | None = None  # the address the last bootstrap() call returned
_refused: tuple[str, bool] | None = None  # the address the last call refused, and whether it was the environment's


# Where the embedded minikafka departs from Kafka's defaults, and why. Kafka waits
# group.initial.rebalance.delay.ms (3 s) for more members before a new group's first
# rebalance; in a notebook every first join would pay it, and without it each newcomer's
# rebalance is visible, which is what the consumer-group notebook shows.
TEACHING_DEFAULTS = {"group.initial.rebalance.delay.ms": 0}


class KafkaUnreachable(ConnectionError):
    """No broker answers at the bootstrap address given: one sentence that names the fix.

    IPython shows an exception with ``_render_traceback_`` as the lines it returns: a notebook
    (and papermill, nbconvert) shows this sentence alone, not a traceback.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31m{type(self).__name__}\x1b[0m: {self}"]


def unreachable(servers: str, from_environment: bool) -> KafkaUnreachable | None:
    """Why no address of ``servers`` accepts a connection, as the error to raise; None if one does."""
    from .preflight import split_address, tcp_error  # a TCP connection per address, seconds at most
    errors = []
    for address in servers.split(","):
        try:
            error = tcp_error(*split_address(address))
        except ValueError:
            error = _("{address!r} is not host:port").format(address=address)
        if error is None:
            return None
        errors.append(error)
    if from_environment:
        fix = _("start that cluster (the course's: docker compose up -d) or unset {variable} to use the embedded "
                "minikafka").format(variable=ENV_VAR)
    else:
        fix = _("start that cluster or give None to use the embedded minikafka")
    return KafkaUnreachable(_("No Kafka broker answers at {servers} ({errors}): {fix}.").format(
        servers=servers, errors="; ".join(errors), fix=fix))


def bootstrap(servers: str | None = None, *, brokers: int = 1, config: Mapping[str, Any] | None = None) -> str:
    """The bootstrap address to give Kafka clients (see the module docstring for the order).

    ``brokers`` and ``config`` shape the embedded minikafka; a real cluster is what it is.
    Calling again with the same shape returns the cluster already running.
    """
    global _current, _refused
    given = servers or os.environ.get(ENV_VAR)
    if given:
        return _reachable(given, from_environment=not servers)
    key = (brokers, tuple(sorted((config or {}).items())))
    if key not in _embedded:
        _show_broker_warnings()
        embedded = Cluster(brokers=brokers, config={**TEACHING_DEFAULTS, **dict(config or {})}).start()
        _embedded[key] = embedded
        count = f"{brokers} {_('broker') if brokers == 1 else _('brokers')}"
        print(_("Started an embedded minikafka ({count}) at {servers}. Set {variable} to use a real Kafka cluster "
                "instead.").format(count=count, servers=embedded.bootstrap_servers, variable=ENV_VAR))
    _current, _refused = _embedded[key].bootstrap_servers, None
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


def _reachable(servers: str, from_environment: bool) -> str:
    """``servers``, made the current address, or KafkaUnreachable; the helpers that need the
    cluster ask again (and say the same sentence) until it answers."""
    global _current, _refused
    problem = unreachable(servers, from_environment)
    if problem is not None:
        _current, _refused = None, (servers, from_environment)
        raise problem
    _current, _refused = servers, None
    return servers


def current_bootstrap() -> str:
    """The address of the last ``bootstrap()`` call, starting the default cluster if none
    (an address that did not answer is tried again, never swapped for the embedded cluster)."""
    if _current:
        return _current
    return _reachable(*_refused) if _refused else bootstrap()


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
