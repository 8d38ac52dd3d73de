"""``RunningProcesses``: act on a process cluster that another process started, through its ``cluster.json``.

``minikafka serve --controllers N`` (or any ``ProcessCluster``) records in its data directory each
node's name, role, pid, listening address and command, and with ``--links`` the control port of the
fault proxies between the nodes. From another process (a notebook's kernel, ``minikafka node``,
``minikafka link --data-dir``) that is enough to crash, stop, pause and start any node, as
``docker compose`` does for the compose cluster, and to cut, delay or drop the traffic between two::

    nodes = RunningProcesses(".minikafka-data")
    nodes.pause("b1"); nodes.resume("b1")     # SIGSTOP / SIGCONT
    nodes.kill(2); nodes.start_node(2)         # SIGKILL, then the recorded command again
    nodes.partition("client", "b1"); nodes.heal()
    nodes.status()                             # pid, running/paused/stopped, port, the active controller
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path
from typing import Any

from .netfault.control import send
from .processes import STATE_FILE, _alive_pid, _launch, _stop_pid, _write_state, active_controller, wait_for

CLIENT = "client"  # the name the clients' links have in the network (ProcessCluster's CLIENT)


class NoLinks(RuntimeError):
    """The cluster runs without fault proxies, so there is no link to change."""


def process_state(pid: int) -> str:
    """``running``, ``paused`` (stopped by SIGSTOP) or ``stopped`` (gone, or dead and not yet reaped)."""
    if not _alive_pid(pid):
        return "stopped"
    with contextlib.suppress(OSError):
        if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] in ("T", "t"):
            return "paused"
    return "running"


def _address(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    return host, int(port)


class RunningProcesses:
    """The nodes of a process cluster that another process started (``minikafka serve --controllers``,
    a ``ProcessCluster``), found through the ``cluster.json`` it keeps in its data directory: stop,
    crash, pause and start them again from here, and change the links between them (``--links``).
    A node is named by its id (``2``) or by its name in the network (``b2``, ``c4``)."""

    def __init__(self, data_dir: str | Path):
        self.data_dir = Path(data_dir)
        path = self.data_dir / STATE_FILE
        if not path.exists():
            raise FileNotFoundError(f"{path} does not exist: is a process cluster (minikafka serve --controllers) "
                                    f"running with its data in {self.data_dir}?")
        self.state = json.loads(path.read_text())

    @property
    def bootstrap_servers(self) -> str:
        return str(self.state["bootstrap_servers"])

    @property
    def control(self) -> str | None:
        """The links' control port (``minikafka link --control``), or None for a cluster without links."""
        return self.state.get("control")

    def pids(self) -> dict[int, int]:
        return {int(n): int(node["pid"]) for n, node in self.state["nodes"].items()}

    def names(self) -> dict[int, str]:
        return {int(n): str(node["name"]) for n, node in self.state["nodes"].items()}

    def node_id(self, node: int | str) -> int:
        """``2``, ``"2"`` or ``"b2"`` -> 2; a ValueError naming the nodes for any other."""
        for node_id, name in self.names().items():
            if str(node) in (str(node_id), name):
                return node_id
        known = ", ".join(name for _, name in sorted(self.names().items()))
        raise ValueError(f"the process cluster in {self.data_dir} has no node {node!r}; its nodes are {known}")

    def _node(self, node: int | str) -> dict[str, Any]:
        return dict(self.state["nodes"][str(self.node_id(node))])

    def _pid(self, node: int | str) -> int:
        return int(self._node(node)["pid"])

    def alive(self, node: int | str) -> bool:
        return _alive_pid(self._pid(node))

    # -- the processes ------------------------------------------------------------------------
    def kill(self, node: int | str) -> None:
        """SIGKILL: no controlled shutdown, no flush."""
        with contextlib.suppress(OSError):
            os.kill(self._pid(node), signal.SIGKILL)
        wait_for(f"node {node} to die", lambda: not self.alive(node), 10)

    def terminate(self, node: int | str, timeout: float = 40) -> None:
        """SIGTERM: a broker shuts down under control, a leading controller hands over."""
        _stop_pid(self._pid(node), timeout)

    stop = terminate

    def pause(self, node: int | str) -> None:
        """SIGSTOP: alive, but it answers nothing and sends nothing (a long GC pause, a hung host)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._pid(node), signal.SIGSTOP)

    def resume(self, node: int | str) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._pid(node), signal.SIGCONT)

    def start_node(self, node: int | str) -> None:
        """Start a stopped node again with its recorded command (same ports, same data)."""
        node_id = self.node_id(node)
        recorded = self._node(node_id)
        if self.alive(node_id):
            return
        with open(self.data_dir / f"{recorded['name']}.out", "ab") as out:
            proc = _launch(recorded["command"], out)
        self.state["nodes"][str(node_id)]["pid"] = proc.pid
        _write_state(self.data_dir, self.state)

    def active_controller(self) -> int | None:
        """The controller that answers DescribeQuorum as the quorum's leader (a paused one is not asked)."""
        controllers = {n: _address(self._node(n)["listen"]) for n in self.names()
                       if self._node(n)["role"] == "controller" and process_state(self._pid(n)) == "running"}
        return active_controller(controllers)

    def status(self) -> list[dict[str, Any]]:
        """Every node: id, name, role, pid, state (running, paused, stopped), listen address, and for
        controllers whether it is the active one."""
        active = self.active_controller()
        out = []
        for node_id, name in sorted(self.names().items()):
            node = self._node(node_id)
            row = {"id": node_id, "name": name, "role": node["role"], "pid": int(node["pid"]),
                   "state": process_state(int(node["pid"])), "listen": node["listen"]}
            if node["role"] == "controller":
                row["active"] = node_id == active
            out.append(row)
        return out

    # -- the links (a cluster started with links) ---------------------------------------------
    def link(self, command: str) -> str:
        """One command of the control protocol (:mod:`minikafka.netfault`); its ``ok ...`` answer,
        or a ValueError with the network's sentence."""
        if not self.control:
            raise NoLinks(f"the process cluster in {self.data_dir} runs without links; start it with "
                          "minikafka serve --controllers N --links (or ProcessCluster(links=True)) to change them")
        answer = send(self.control, command)
        if not answer.startswith("ok"):
            raise ValueError(answer.removeprefix("error").strip())
        return answer

    def _link_name(self, node: int | str) -> str:
        return CLIENT if node == CLIENT else self.names()[self.node_id(node)]

    def _between(self, verb: str, a: int | str, b: int | str, *rest: object) -> None:
        self.link(" ".join([verb, self._link_name(a), self._link_name(b), *map(str, rest)]))

    def partition(self, a: int | str, b: int | str, *, one_way: bool = False) -> None:
        """Cut ``a`` from ``b`` (``"client"`` is every client's side): bytes held, connections time out."""
        self._between("partition", a, b, *(["one-way"] if one_way else []))

    def reset(self, a: int | str, b: int | str, *, one_way: bool = False) -> None:
        """Cut ``a`` from ``b`` by closing: open connections reset, new ones closed at once."""
        self._between("reset", a, b, *(["one-way"] if one_way else []))

    def delay(self, a: int | str, b: int | str, ms: float, jitter_ms: float = 0.0) -> None:
        self._between("delay", a, b, ms, jitter_ms)

    def drop(self, a: int | str, b: int | str, fraction: float) -> None:
        """Drop ``fraction`` of the new connections between ``a`` and ``b``."""
        self._between("drop", a, b, fraction)

    def heal(self, a: int | str | None = None, b: int | str | None = None) -> None:
        """Undo every fault on the links, or only those between ``a`` and ``b``."""
        if a is None or b is None:
            self.link("heal")
        else:
            self._between("heal", a, b)

    def links(self) -> dict[str, dict]:
        """Each link's address, rules and connection counts (the control port's ``status``)."""
        return dict(json.loads(self.link("status").removeprefix("ok").strip() or "{}"))
