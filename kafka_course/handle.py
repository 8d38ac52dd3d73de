"""A handle on the course's cluster: look at it, and break it, on minikafka or on real Kafka.

``cluster()`` returns a ``ClusterHandle`` with the same methods on both back ends. It
stops, crashes and restarts brokers through the embedded ``Cluster`` on minikafka and
through ``docker compose`` on real Kafka, and it reads topology from the Admin API, so
what it shows is what a client would see either way. The few things only minikafka
can do (read its segment files, slow a follower) raise ``MinikafkaOnly`` elsewhere;
``requires_minikafka()`` lets a cell skip them with a sentence instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from minikafka.api import Cluster

if TYPE_CHECKING:
    from minikafka.api import ProcessCluster, RunningProcesses

from .clients import admin
from .connection import ENV_VAR, current_bootstrap, embedded_at
from .i18n import _

# Broker id -> docker compose service, for the repository's docker-compose.yml.
COMPOSE_SERVICES = {1: "kafka-1", 2: "kafka-2", 3: "kafka-3"}
COMPOSE_FILE = Path(os.environ.get("KAFKA_COMPOSE_FILE", Path(__file__).resolve().parents[1] / "docker-compose.yml"))


class MinikafkaOnly(NotImplementedError):
    """Raised when a cell asks a real Kafka cluster for a power only minikafka has."""


class LogSizesHidden(PermissionError):
    """The cluster answered DescribeLogDirs without the topic's logs, so their sizes are unknown
    (a Kafka user without Describe on the cluster gets it refused). Shown by IPython as its sentence alone."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31m{type(self).__name__}\x1b[0m: {self}"]


def _sizes_hidden(topic: str, servers: str) -> LogSizesHidden:
    return LogSizesHidden(_(
        "The cluster at {servers} does not show how big the logs of {topic} are: its answer to DescribeLogDirs names "
        "no directory holding them (on Kafka, your user needs Describe on the cluster)."
    ).format(servers=servers, topic=topic))


def cluster(servers: str | None = None) -> ClusterHandle:
    """A handle on the cluster at ``servers``, by default the last ``bootstrap()`` call's (embedded or real)."""
    servers = servers or current_bootstrap()
    return ClusterHandle(servers, embedded_at(servers))


def _cell(what: str | None) -> str:
    """What a skip sentence names: the caller's own words (a Spanish notebook passes Spanish
    ones), or "This cell" in the course's language."""
    return what or _("This cell")


def requires_minikafka(what: str | None = None) -> bool:
    """True on the embedded minikafka; elsewhere print why the cell skips itself."""
    if cluster().is_minikafka:
        return True
    print(_("{what} uses a power only the embedded minikafka has, so it is skipped on {servers}. Unset {variable} "
            "to run it.").format(what=_cell(what), servers=current_bootstrap(), variable=ENV_VAR))
    return False


def requires_broker_control(what: str | None = None) -> bool:
    """True where this notebook can stop and start brokers; elsewhere print why the cell skips.

    The embedded minikafka can always be broken. A cluster outside this process can be
    when it is the course's docker compose cluster and ``docker compose`` reaches it; a
    company or cloud cluster cannot, and nobody should try.
    """
    handle = cluster()
    if handle.can_control_brokers:
        return True
    print(_("{what} stops brokers, and the brokers of {servers} cannot be stopped from here (they are not the "
            "course's docker compose services), so it is skipped.").format(what=_cell(what),
                                                                            servers=current_bootstrap()))
    return False


def requires_real_kafka(what: str | None = None) -> bool:
    """True when talking to a cluster outside this process; otherwise print a sentence."""
    if not cluster().is_minikafka:
        return True
    print(_("{what} needs a real Kafka cluster (set {variable}, e.g. to the docker compose cluster), so it is "
            "skipped on the embedded minikafka.").format(what=_cell(what), variable=ENV_VAR))
    return False


@dataclass(frozen=True)
class PartitionState:
    """One partition as the Admin API describes it."""
    partition: int
    leader: int  # -1 while the partition has no leader
    replicas: tuple[int, ...]
    isr: tuple[int, ...]

    def __str__(self) -> str:
        leader = self.leader if self.leader >= 0 else _("none")
        return _("partition {partition}: leader {leader}, replicas {replicas}, in sync {isr}").format(
            partition=self.partition, leader=leader, replicas=list(self.replicas), isr=list(self.isr))


class ClusterHandle:
    """The same operations on an embedded minikafka and on the docker compose cluster."""

    def __init__(self, servers: str, embedded: Cluster | None):
        self.bootstrap_servers = servers
        self._embedded = embedded

    def __repr__(self) -> str:
        kind = _("embedded minikafka") if self.is_minikafka else _("external Kafka cluster")
        return "<" + _("{kind} at {servers}").format(kind=kind, servers=self.bootstrap_servers) + ">"

    @property
    def is_minikafka(self) -> bool:
        """True when this process runs the cluster (so it can look inside and break it)."""
        return self._embedded is not None

    @property
    def can_control_brokers(self) -> bool:
        """True when brokers can be stopped and started from here: the embedded minikafka, a process
        cluster named by ``MINIKAFKA_PROCESS_CLUSTER`` (its data directory), or docker compose."""
        return self.is_minikafka or bool(os.environ.get(PROCESS_CLUSTER_VAR)) or compose_running()

    @property
    def embedded(self) -> Cluster:
        """The minikafka ``Cluster`` object itself (minikafka only)."""
        return self._minikafka("the embedded Cluster object")

    # -- what any client can see (Admin API) -------------------------------------------
    def brokers(self) -> dict[int, str]:
        """Broker id -> the host:port it advertises, from a Metadata request."""
        metadata = admin(self.bootstrap_servers).list_topics(timeout=10)
        return {b.id: f"{b.host}:{b.port}" for b in sorted(metadata.brokers.values(), key=lambda b: b.id)}

    def topology(self, topic: str) -> list[PartitionState]:
        """Leader, replicas and ISR of each partition, as the Admin API reports them."""
        metadata = admin(self.bootstrap_servers).list_topics(topic, timeout=10)
        partitions = metadata.topics[topic].partitions.values()
        return [PartitionState(p.id, p.leader, tuple(p.replicas), tuple(p.isrs))
                for p in sorted(partitions, key=lambda p: p.id)]

    def log_sizes(self, topic: str) -> dict[int, int]:
        """Bytes each partition's log takes on the leader's disk.

        minikafka reads its own segment files; real Kafka answers DescribeLogDirs.
        """
        if self.is_minikafka:
            return {p: sum(s["size"] for s in segs) for p, segs in self.embedded.segments(topic).items()}
        from kafka.admin import KafkaAdminClient
        client = KafkaAdminClient(bootstrap_servers=self.bootstrap_servers)
        try:
            sizes = _sizes_from_log_dirs(client.describe_log_dirs([topic]), topic, self.topology(topic))
        finally:
            client.close()
        if sizes is None:
            raise _sizes_hidden(topic, self.bootstrap_servers)
        return sizes

    def reveals_log_sizes(self, topic: str) -> bool:
        """Whether ``log_sizes(topic)`` can answer here (always on the embedded minikafka)."""
        try:
            self.log_sizes(topic)
        except LogSizesHidden:
            return False
        return True

    def replica_sizes(self, topic: str, partition: int) -> dict[int, int]:
        """Bytes of one partition on each broker that holds a copy (DescribeLogDirs, any cluster)."""
        from kafka.admin import KafkaAdminClient
        client = KafkaAdminClient(bootstrap_servers=self.bootstrap_servers)
        try:
            answers = client.describe_log_dirs([topic])
        finally:
            client.close()
        sizes: dict[int, int] = {}
        for answer in answers:
            for log_dir in answer["log_dirs"]:
                for t in log_dir.get("topics", []):
                    for p in t["partitions"] if t["name"] == topic else []:
                        if p["partition_index"] == partition:
                            sizes[answer["broker"]] = sizes.get(answer["broker"], 0) + p["partition_size"]
        if not sizes:
            raise _sizes_hidden(topic, self.bootstrap_servers)
        return dict(sorted(sizes.items()))

    # -- minikafka-only: looking inside ------------------------------------------------
    def segments(self, topic: str, partition: int = 0) -> list[dict]:
        """The leader's segment files of one partition: base offset, size, path (minikafka only)."""
        return self._minikafka("reading segment files").segments(topic)[partition]

    def partition_state(self, topic: str, partition: int = 0) -> dict:
        """Leader, epoch, ISR, high watermark and each replica's log end offset (minikafka only)."""
        return self._minikafka("reading a partition's replica state").partition_state(topic, partition)

    def slow_broker(self, node_id: int, delay_ms: int) -> None:
        """Make one broker lag behind by ``delay_ms`` (0 undoes it) (minikafka only)."""
        self._minikafka("slowing a broker down").slow_broker(node_id, delay_ms)

    # -- breaking things: both back ends -------------------------------------------------
    def stop_broker(self, node_id: int) -> None:
        """A clean shutdown: leadership moves away first."""
        self._control().stop(node_id)

    def crash_broker(self, node_id: int) -> None:
        """An abrupt stop: no goodbye, nothing flushed (``docker compose kill`` on real Kafka)."""
        self._control().crash(node_id)

    def start_broker(self, node_id: int) -> None:
        """Bring a stopped or crashed broker back with its old data."""
        self._control().start(node_id)

    # -- plumbing -----------------------------------------------------------------------------
    def _control(self) -> BrokerControl:
        """Who stops and starts brokers here: one code path in the cells, whatever runs the cluster."""
        if self._embedded is not None:
            return EmbeddedControl(self._embedded)
        processes = os.environ.get(PROCESS_CLUSTER_VAR)
        if processes:
            from minikafka.api import RunningProcesses  # only a process cluster's cells need it

            return ProcessControl(RunningProcesses(processes))
        return ComposeControl()

    def _minikafka(self, what: str) -> Cluster:
        if self._embedded is None:
            raise MinikafkaOnly(f"{what[0].upper() + what[1:]} is possible only on the embedded minikafka; "
                                f"{self.bootstrap_servers} is a cluster outside this process. "
                                f"Skip this cell, or unset {ENV_VAR} to run it on minikafka.")
        return self._embedded


class BrokerControl(Protocol):
    """Stopping and starting one broker of the cluster the notebook talks to."""

    def stop(self, node_id: int) -> None: ...

    def crash(self, node_id: int) -> None: ...

    def start(self, node_id: int) -> None: ...


@dataclass(frozen=True)
class EmbeddedControl:
    """The embedded minikafka's brokers: the ``Cluster`` stops and starts them in this process."""

    cluster: Cluster

    def stop(self, node_id: int) -> None:
        self.cluster.stop_broker(node_id)

    def crash(self, node_id: int) -> None:
        self.cluster.crash_broker(node_id)

    def start(self, node_id: int) -> None:
        self.cluster.start_broker(node_id)


@dataclass(frozen=True)
class ProcessControl:
    """A process cluster (``minikafka serve --brokers 3 --controllers 3``): each broker its own process,
    stopped with SIGTERM (a controlled shutdown), crashed with SIGKILL, started again with its command."""

    nodes: RunningProcesses | ProcessCluster  # another process's cluster, or one this kernel started

    def stop(self, node_id: int) -> None:
        self.nodes.terminate(node_id)

    def crash(self, node_id: int) -> None:
        self.nodes.kill(node_id)

    def start(self, node_id: int) -> None:
        self.nodes.start_node(node_id)

    def pause(self, node_id: int) -> None:
        """SIGSTOP: alive but silent, as in a long GC pause or a hung host."""
        self.nodes.pause(node_id)

    def resume(self, node_id: int) -> None:
        self.nodes.resume(node_id)

    @property
    def can_cut_links(self) -> bool:
        """Its links go through fault proxies: one this kernel started with ``links=True``, or another
        process's started with ``minikafka serve ... --links`` (reached through its control port)."""
        from minikafka.api import ProcessCluster

        if isinstance(self.nodes, ProcessCluster):
            return self.nodes.network is not None
        return self.nodes.control is not None

    def cut(self, node_id: int, other: int) -> None:
        """Cut the links between two nodes, both ways: bytes are held, nothing arrives."""
        from minikafka.api import ProcessCluster

        if isinstance(self.nodes, ProcessCluster):
            if self.nodes.network is None:
                raise RuntimeError("this process cluster was started without links (ProcessCluster(links=True))")
            self.nodes.network.partition(self.nodes.name(node_id), self.nodes.name(other))
        else:
            self.nodes.partition(node_id, other)

    def heal(self) -> None:
        """Every cut link passes traffic again."""
        from minikafka.api import ProcessCluster

        if isinstance(self.nodes, ProcessCluster):
            if self.nodes.network is not None:
                self.nodes.network.heal()
        else:
            self.nodes.heal()


class ComposeControl:
    """The course's docker compose cluster: ``docker compose stop``, ``kill`` and ``start`` of a service."""

    def stop(self, node_id: int) -> None:
        compose("stop", COMPOSE_SERVICES[node_id])

    def crash(self, node_id: int) -> None:
        compose("kill", COMPOSE_SERVICES[node_id])

    def start(self, node_id: int) -> None:
        compose("start", COMPOSE_SERVICES[node_id])

    def pause(self, node_id: int) -> None:
        compose("pause", COMPOSE_SERVICES[node_id])

    def resume(self, node_id: int) -> None:
        compose("unpause", COMPOSE_SERVICES[node_id])


PROCESS_CLUSTER_VAR = "MINIKAFKA_PROCESS_CLUSTER"  # the data directory of a running process cluster

_compose_checked: dict[Path, bool] = {}


def compose_running() -> bool:
    """Whether ``docker compose`` runs the course's Kafka services here (asked once per process)."""
    if COMPOSE_FILE not in _compose_checked:
        running = False
        if shutil.which("docker") is not None and COMPOSE_FILE.exists():
            try:
                done = subprocess.run(["docker", "compose", "-f", str(COMPOSE_FILE), "ps", "--services",
                                       "--status", "running"], capture_output=True, text=True, timeout=20)
                running = done.returncode == 0 and set(COMPOSE_SERVICES.values()) <= set(done.stdout.split())
            except (OSError, subprocess.TimeoutExpired):
                running = False
        _compose_checked[COMPOSE_FILE] = running
    return _compose_checked[COMPOSE_FILE]


def compose(command: str, service: str, timeout: float = 120) -> None:
    """Run ``docker compose <command> <service>`` on the course's compose file."""
    if shutil.which("docker") is None:
        raise RuntimeError("Stopping a real broker needs the docker command, and it is not installed here.")
    if not COMPOSE_FILE.exists():
        raise RuntimeError(f"No compose file at {COMPOSE_FILE}; set KAFKA_COMPOSE_FILE to yours.")
    args = ["docker", "compose", "-f", str(COMPOSE_FILE), command, service]
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"`{' '.join(args)}` failed: {done.stderr.strip()}")


def _sizes_from_log_dirs(responses: list[dict], topic: str, topology: list[PartitionState]) -> dict[int, int] | None:
    """Pick each partition's size on its leader out of kafka-python's DescribeLogDirs answer;
    None when the answer shows no log of the topic at all (sizes hidden, not zero)."""
    leaders = {p.partition: p.leader for p in topology}
    sizes = dict.fromkeys(leaders, 0)
    seen = False
    for answer in responses:
        for log_dir in answer["log_dirs"]:
            for t in log_dir.get("topics", []):
                for p in t["partitions"] if t["name"] == topic else []:
                    seen = True
                    if leaders.get(p["partition_index"]) == answer["broker"]:
                        sizes[p["partition_index"]] += p["partition_size"]
    return sizes if seen else None
