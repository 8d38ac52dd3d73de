"""Notebook 05b's cluster: KRaft controllers and brokers as separate processes, and the switches to break it.

``kraft_cluster()`` is plumbing. By default it starts a ``minikafka.api.ProcessCluster`` of three
broker processes and three KRaft controller processes with every link between them through a
fault proxy, and stops it when the kernel exits. With ``MINIKAFKA_PROCESS_CLUSTER`` naming a
running process cluster's data directory, or with the course's docker compose cluster (three
combined broker+controller nodes), it wraps that cluster instead. Stopping, killing, pausing and
starting a node go through ``handle``'s ``BrokerControl`` back ends, one code path whatever runs
the cluster; cutting a link (``cut``, ``heal``) goes through ``ProcessControl`` too, and needs the
proxies: the cluster started here has them, and so does one started with ``minikafka serve --links``.

The lesson's timeouts are shorter than Kafka's so that an election or a fencing happens while
you watch; ``KAFKA_DEFAULTS`` holds Kafka's own values for the same settings.
"""

from __future__ import annotations

import atexit
import os
from dataclasses import dataclass, field
from typing import Protocol

from minikafka.api import ProcessCluster, RunningProcesses

from .connection import ENV_VAR, bootstrap
from .handle import (COMPOSE_SERVICES, PROCESS_CLUSTER_VAR, BrokerControl, ComposeControl, ProcessControl,
                     compose_running)
from .i18n import _

# Kafka's defaults (4.x) for the settings this lesson shortens.
KAFKA_DEFAULTS = {
    "controller.quorum.election.timeout.ms": 1000,  # a voter that hears no leader waits this long, then stands
    "controller.quorum.fetch.timeout.ms": 2000,  # a follower without an answer from its leader for this long
    "broker.session.timeout.ms": 9000,  # the active controller fences a broker silent for this long
    "broker.heartbeat.interval.ms": 2000,  # a broker's heartbeat to the active controller
    "replica.lag.time.max.ms": 30000,  # a follower that has not caught up for this long leaves the ISR
}
LESSON_TIMEOUTS = {
    "controller.quorum.election.timeout.ms": 500,
    "controller.quorum.fetch.timeout.ms": 1000,
    "broker.session.timeout.ms": 3000,
    "broker.heartbeat.interval.ms": 500,
    "replica.lag.time.max.ms": 2000,
}
# The controller process takes its settings as options; the brokers take theirs as --config.
_CONTROLLER_OPTIONS = {
    "controller.quorum.election.timeout.ms": "--election-timeout-ms",
    "controller.quorum.fetch.timeout.ms": "--fetch-timeout-ms",
    "broker.session.timeout.ms": "--broker-session-timeout-ms",
}


class NodeControl(BrokerControl, Protocol):
    """A ``BrokerControl`` that can also pause a node (alive, silent) and resume it."""

    def pause(self, node_id: int) -> None: ...

    def resume(self, node_id: int) -> None: ...


@dataclass
class KRaftCluster:
    """The lesson's cluster: its addresses, which nodes are controllers, and the switches."""

    bootstrap_servers: str
    brokers: tuple[int, ...]
    controllers: tuple[int, ...]
    control: NodeControl | None = None  # None: a cluster nobody should break from here
    started: ProcessCluster | None = field(default=None, repr=False)  # the one this kernel started, if any

    def kill(self, node_id: int) -> None:
        """SIGKILL a node (``docker compose kill`` on compose): no goodbye, no hand-over."""
        self._control().crash(node_id)

    def start(self, node_id: int) -> None:
        """Start a killed or stopped node again, with its data."""
        self._control().start(node_id)

    def pause(self, node_id: int) -> None:
        """SIGSTOP a node (``docker compose pause``): alive but silent."""
        self._control().pause(node_id)

    def resume(self, node_id: int) -> None:
        self._control().resume(node_id)

    def cut(self, node_id: int, other: int) -> None:
        """Cut the link between two nodes both ways: bytes are held, nothing arrives. Between two brokers
        it cuts replication (their inter-broker links); clients still reach both."""
        self._links().cut(node_id, other)

    def heal(self) -> None:
        """Every cut link passes traffic again."""
        self._links().heal()

    @property
    def can_break(self) -> bool:
        return self.control is not None

    @property
    def can_cut_links(self) -> bool:
        return isinstance(self.control, ProcessControl) and self.control.can_cut_links

    def requires_control(self, what: str | None = None) -> bool:
        """True where nodes can be killed and paused; elsewhere print why the cell skips."""
        if self.can_break:
            return True
        print(_("{what} kills and pauses nodes, and the nodes of {servers} cannot be stopped from here (they are not "
                "the course's process or docker compose cluster), so it is skipped.").format(
                    what=what or _("This cell"), servers=self.bootstrap_servers))
        return False

    def requires_links(self, what: str | None = None) -> bool:
        """True where links between nodes can be cut (a cluster this kernel started); else one sentence."""
        if self.can_cut_links:
            return True
        print(_("{what} cuts links between nodes, which only a process cluster runs through fault proxies (the one "
                "this notebook starts when {variable} and {process_variable} are unset, or one started with "
                "minikafka serve --links), so it is skipped on {servers}.").format(
                    what=what or _("This cell"), variable=ENV_VAR, process_variable=PROCESS_CLUSTER_VAR,
                    servers=self.bootstrap_servers))
        return False

    def stop(self) -> None:
        """Stop the cluster this kernel started (brokers first, then controllers); others are left alone."""
        if self.started is not None:
            self.started.stop()

    def _control(self) -> NodeControl:
        if self.control is None:
            raise RuntimeError(f"The nodes of {self.bootstrap_servers} cannot be stopped from here.")
        return self.control

    def _links(self) -> ProcessControl:
        if not isinstance(self.control, ProcessControl) or not self.control.can_cut_links:
            raise RuntimeError(f"The links of {self.bootstrap_servers} do not go through fault proxies.")
        return self.control


def kraft_cluster(servers: str | None = None, timeouts: dict[str, int] | None = None,
                  config: dict[str, object] | None = None) -> KRaftCluster:
    """The lesson's cluster (see the module docstring); ``timeouts`` and ``config`` shape one started here."""
    running = os.environ.get(PROCESS_CLUSTER_VAR)
    given = servers or os.environ.get(ENV_VAR)
    if running:
        nodes = RunningProcesses(running)
        roles = {int(n): node["role"] for n, node in nodes.state["nodes"].items()}
        address = bootstrap(given or nodes.bootstrap_servers)
        return KRaftCluster(address, tuple(sorted(n for n, r in roles.items() if r == "broker")),
                            tuple(sorted(n for n, r in roles.items() if r == "controller")), ProcessControl(nodes))
    if given:
        address = bootstrap(given)
        if compose_running():  # three combined nodes: each a broker and a controller
            ids = tuple(sorted(COMPOSE_SERVICES))
            return KRaftCluster(address, ids, ids, ComposeControl())
        return KRaftCluster(address, (), ())
    return _start(timeouts or LESSON_TIMEOUTS, config or {})


def _start(timeouts: dict[str, int], config: dict[str, object]) -> KRaftCluster:
    options = [arg for key, flag in _CONTROLLER_OPTIONS.items() if key in timeouts
               for arg in (flag, str(timeouts[key]))]
    broker_config = {**{k: v for k, v in timeouts.items() if k not in _CONTROLLER_OPTIONS}, **config}
    started = ProcessCluster(brokers=3, controllers=3, links=True, config=broker_config, controller_options=options,
                             log_level="WARNING").start()
    atexit.register(started.stop)
    address = bootstrap(started.bootstrap_servers)
    print(_("Started 3 broker processes ({brokers}) and 3 KRaft controller processes ({controllers}), every link "
            "through a fault proxy.").format(brokers=address, controllers=started.controllers))
    return KRaftCluster(address, started.broker_ids, started.controller_ids, ProcessControl(started), started)
