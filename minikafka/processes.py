"""``ProcessCluster``: KRaft controllers and brokers, each its own operating-system process.

    with ProcessCluster(brokers=3, controllers=3, data_dir="/tmp/pc") as pc:
        pc.bootstrap_servers          # "127.0.0.1:41001,..." for any Kafka client
        pc.active_controller()        # the quorum leader's node id
        pc.kill(1); pc.restart(1)     # SIGKILL, then the same command again (same log dir)
        pc.pause(5); pc.resume(5)     # SIGSTOP / SIGCONT: alive, but silent
        pc.network.partition("b1", "c5")  # with links=True: cut the link between two nodes
        pc.network.partition("b1", "b2")  # ...or replication between two brokers (clients reach both)
        pc.serve_control()            # with links=True: "127.0.0.1:PORT" for ``minikafka link``

Brokers have node ids 1..B, controllers B+1..B+C (Kafka's rule: one id space for both
roles). Every process writes its output to ``<data_dir>/<name>.out`` and keeps its data in
``<data_dir>/<name>`` (``b1``, ``c4``...). ``stop()`` stops the brokers first (each shuts down
under control while a controller is there to agree), then the controllers.

With ``links=True`` every connection between nodes goes through a ``minikafka.netfault``
proxy: controller to controller, broker to controller, broker to broker (each broker is told
the address of its own link to every other: ``--peer``, Kafka's inter-broker listener, which
its replica fetches and transaction requests use) and client to broker (each broker
advertises its client link's address), so that ``network.partition("b1", "b2")`` cuts
replication between two brokers while clients still reach both. A link can be cut, delayed
or reset from Python (``network``) as ``bench/faults.py`` does for the embedded cluster. Another process acts on the
nodes and links through ``cluster.json`` (``minikafka.running.RunningProcesses``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from .protocol.channel import decode_response, encode_request
from .netfault import Network
from .protocol import codec
from .security import settings as security_settings

CLIENT = "client"


def free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind((host, 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _hold(host: str, ports: Iterable[int]) -> list[socket.socket]:
    """Sockets bound to these ports (not listening), so that no port-0 bind is given one of them."""
    held = []
    for port in ports:
        sock = socket.socket()
        try:
            sock.bind((host, port))
        except OSError:  # taken already: nothing to hold
            sock.close()
            continue
        held.append(sock)
    return held


def ask(address: tuple[str, int], request: Any, timeout: float = 2.0) -> Any:
    """One request on a new connection, its decoded answer (raises OSError when nobody answers)."""
    with socket.create_connection(address, timeout=timeout) as sock:
        sock.sendall(encode_request(request, 1, "process-cluster"))
        size = struct.unpack(">i", read_exactly(sock, 4))[0]
        return decode_response(read_exactly(sock, size), type(request).__api_key__, type(request).__version__)[1]


def read_exactly(sock: socket.socket, n: int) -> bytes:
    """``n`` bytes from a socket (a Kafka frame's size, then its body)."""
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("the connection closed")
        out += chunk
    return out


def describe_quorum(address: tuple[str, int]) -> Any:
    """DescribeQuorum's partition answer from the controller listening on ``address``."""
    module = codec.request_module(55, 2)
    partition = codec.entity(module, "PartitionData", partition_index=0)
    topic = codec.entity(module, "TopicData", topic_name="__cluster_metadata", partitions=(partition,))
    answer = ask(address, codec.make(codec.request_class(55, 2), topics=(topic,)))
    return answer.topics[0].partitions[0]


def active_controller(controllers: Mapping[int, tuple[str, int]]) -> int | None:
    """Of these controllers (node id -> address), the one that answers DescribeQuorum as the leader."""
    for node_id, address in controllers.items():
        with contextlib.suppress(OSError):
            if describe_quorum(address).error_code == 0:
                return node_id
    return None


def wait_for(what: str, check: Callable[[], Any], timeout: float) -> Any:
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        try:
            last = check()
        except OSError as e:
            last = e
        else:
            if last:
                return last
        time.sleep(0.1)
    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")


class ProcessCluster:
    def __init__(self, brokers: int = 3, controllers: int = 3, data_dir: str | Path | None = None, *,
                 host: str = "127.0.0.1", ports: Sequence[int] | None = None,
                 config: Mapping[str, Any] | None = None, links: bool = False, cluster_id: str = "minikafka-kraft",
                 heartbeat_interval_ms: int = 500, controller_options: Sequence[str] = (),
                 log_level: str = "INFO"):
        if brokers < 1 or controllers < 1:
            raise ValueError(f"a process cluster needs a broker and a controller at least, not {brokers} and "
                             f"{controllers}")
        self.broker_ids = tuple(range(1, brokers + 1))
        self.controller_ids = tuple(range(brokers + 1, brokers + controllers + 1))
        self.host, self.links, self.cluster_id = host, links, cluster_id
        security_settings.refuse_on_processes(config or {})
        self.config = {k: str(v) for k, v in (config or {}).items()}
        self.config.setdefault("broker.heartbeat.interval.ms", str(heartbeat_interval_ms))
        self.controller_options, self.log_level = tuple(controller_options), log_level
        self._own_dir = data_dir is None
        self.data_dir = Path(data_dir or tempfile.mkdtemp(prefix="minikafka-processes-"))
        every = self.broker_ids + self.controller_ids
        chosen = list(ports) if ports else []
        if chosen and len(chosen) != len(every):
            raise ValueError(f"ports: one per node ({len(every)}), not {len(chosen)}")
        self.ports = dict(zip(every, chosen or free_ports(len(every), host)))
        self.network: Network | None = None
        self.procs: dict[int, subprocess.Popen] = {}
        self._outputs: dict[int, IO[bytes]] = {}

    # -- names and addresses -----------------------------------------------------------------
    def name(self, node_id: int) -> str:
        """``b1`` for broker 1, ``c4`` for controller 4: the node's name in ``network``."""
        if node_id in self.broker_ids:
            return f"b{node_id}"
        if node_id in self.controller_ids:
            return f"c{node_id}"
        raise ValueError(f"no node {node_id}: brokers {list(self.broker_ids)}, controllers {list(self.controller_ids)}")

    def _address(self, src: str, node_id: int) -> str:
        """How ``src`` reaches ``node_id``: through its link's proxy, or straight."""
        if self.network is not None and src != self.name(node_id):
            return self.network.address(src, self.name(node_id))
        return f"{self.host}:{self.ports[node_id]}"

    def _voters(self, src: str) -> str:
        return ",".join(f"{c}@{self._address(src, c)}" for c in self.controller_ids)

    @property
    def bootstrap_servers(self) -> str:
        """The brokers, as clients reach them (through the client links when ``links``)."""
        return self.bootstrap(self.broker_ids)

    def bootstrap(self, brokers: Iterable[int]) -> str:
        """Some brokers' addresses, as clients reach them (say, all but one that was killed)."""
        return ",".join(self._address(CLIENT, b) for b in brokers)

    @property
    def controllers(self) -> str:
        """The controller quorum, ``id@host:port,...`` (``--bootstrap-controller`` takes the addresses)."""
        return self._voters(CLIENT)

    def log_dir(self, node_id: int) -> Path:
        return self.data_dir / self.name(node_id)

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self, timeout: float = 60) -> ProcessCluster:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.open_links()
        for node_id in self.controller_ids:
            self._spawn(node_id)
        for node_id in self.broker_ids:
            self._spawn(node_id)
        try:
            self.wait_ready(timeout)
        except BaseException:
            self.stop()  # no process is left behind by a cluster that did not come up
            raise
        return self

    def open_links(self) -> Network | None:
        """With ``links``, the proxies between the nodes (started once, before the nodes that use them)."""
        if self.links and self.network is None:
            nodes = {self.name(n): (self.host, p) for n, p in self.ports.items()}
            # the proxies listen on any free port: hold the nodes' own ports meanwhile, or a proxy may take
            # one (free_ports released them) and the node that should listen there fails to start
            held = _hold(self.host, self.ports.values())
            try:
                self.network = Network(nodes, clients=[CLIENT], host=self.host).start()
            finally:
                for sock in held:
                    sock.close()
        return self.network

    def __enter__(self) -> ProcessCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def command(self, node_id: int) -> list[str]:
        name = self.name(node_id)
        listen = f"{self.host}:{self.ports[node_id]}"
        base = [sys.executable, "-m", "minikafka"]
        if node_id in self.controller_ids:
            return [*base, "controller", "--node-id", str(node_id), "--listen", listen, "--voters", self._voters(name),
                    "--log-dir", str(self.log_dir(node_id)), "--cluster-id", self.cluster_id,
                    "--log-level", self.log_level, *self.controller_options]
        out = [*base, "broker", "--node-id", str(node_id), "--listen", listen, "--controllers", self._voters(name),
               "--log-dir", str(self.log_dir(node_id)), "--cluster-id", self.cluster_id, "--log-level", self.log_level]
        if self.network is not None:  # clients through the client's links, the other brokers through this one's
            out += ["--advertise", self._address(CLIENT, node_id)]
            out += [f"--peer={b}={self._address(name, b)}" for b in self.broker_ids if b != node_id]
        for key, value in self.config.items():
            out += ["--config", f"{key}={value}"]
        return out

    def _spawn(self, node_id: int) -> None:
        out = self._outputs.get(node_id)
        if out is None:
            out = self._outputs[node_id] = open(self.data_dir / f"{self.name(node_id)}.out", "ab")  # noqa: SIM115
        self.procs[node_id] = _launch(self.command(node_id), out)
        self._record()

    def _record(self) -> None:
        """``cluster.json`` in the data directory: each node's role, pid and command, so that another
        process (a notebook's kernel: ``RunningProcesses``) can stop and start the nodes this one started."""
        nodes = {str(n): {"name": self.name(n), "role": "broker" if n in self.broker_ids else "controller",
                          "pid": proc.pid, "listen": f"{self.host}:{self.ports[n]}", "command": self.command(n)}
                 for n, proc in self.procs.items()}
        control = self.network.control_port if self.network is not None else None
        _write_state(self.data_dir, {"bootstrap_servers": self.bootstrap_servers, "controllers": self.controllers,
                                     "control": f"{self.host}:{control}" if control else None, "nodes": nodes})

    def serve_control(self, port: int = 0) -> str:
        """Open the links' control port (``minikafka link``'s line commands) and record it in
        ``cluster.json``, so that ``minikafka link --data-dir`` and ``RunningProcesses`` find it; its address."""
        if self.network is None:
            raise ValueError("a control port needs a started cluster with links=True")
        self.network.serve_control(port)
        self._record()
        return f"{self.host}:{self.network.control_port}"

    def stop(self, timeout: float = 40) -> None:
        """Brokers first (controlled shutdown), then controllers; SIGKILL for one that will not stop.
        A node another process restarted meanwhile (``minikafka.running``) is stopped by its recorded pid."""
        restarted = recorded_pids(self.data_dir)
        for node_id, pid in restarted.items():
            if node_id in self.procs and pid != self.procs[node_id].pid:
                _stop_pid(pid, timeout)
        for group in (self.broker_ids, self.controller_ids):
            running = [n for n in group if self.alive(n)]
            for node_id in running:
                self.procs[node_id].send_signal(signal.SIGCONT)
                self.procs[node_id].terminate()
            for node_id in running:
                try:
                    self.procs[node_id].wait(timeout)
                except subprocess.TimeoutExpired:
                    if node_id in self.broker_ids:  # where it is stuck, into its output
                        self.procs[node_id].send_signal(signal.SIGUSR1)
                        time.sleep(0.5)
                    self.procs[node_id].kill()
                    self.procs[node_id].wait(10)
        if self.network is not None:
            self.network.stop()
            self.network = None
        for out in self._outputs.values():
            out.close()
        self._outputs.clear()
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    # -- faults -------------------------------------------------------------------------------
    def alive(self, node_id: int) -> bool:
        proc = self.procs.get(node_id)
        return proc is not None and proc.poll() is None

    def kill(self, node_id: int) -> None:
        """SIGKILL: no controlled shutdown, no flush, no clean-shutdown marker."""
        self.name(node_id)
        proc = self.procs[node_id]
        proc.kill()
        proc.wait(10)

    def terminate(self, node_id: int, timeout: float = 40) -> int:
        """SIGTERM and wait: a broker shuts down under control, a leading controller hands over."""
        proc = self.procs[node_id]
        proc.send_signal(signal.SIGCONT)
        proc.terminate()
        return proc.wait(timeout)

    def pause(self, node_id: int) -> None:
        """SIGSTOP: the process is alive but answers nothing (a long GC pause, a hung host)."""
        self.procs[node_id].send_signal(signal.SIGSTOP)

    def resume(self, node_id: int) -> None:
        self.procs[node_id].send_signal(signal.SIGCONT)

    def restart(self, node_id: int, timeout: float = 40) -> None:
        """Start a node again with the same command and data (stopping it first if it runs)."""
        if self.alive(node_id):
            self.terminate(node_id, timeout)
        self._spawn(node_id)

    def start_node(self, node_id: int) -> None:
        if not self.alive(node_id):
            self._spawn(node_id)

    # -- asking the nodes -------------------------------------------------------------------------
    def _direct(self, node_id: int) -> tuple[str, int]:
        return self.host, self.ports[node_id]

    def describe_quorum(self, controller: int) -> Any:
        """DescribeQuorum's partition answer from one controller (straight, not through the links)."""
        return describe_quorum(self._direct(controller))

    def active_controller(self) -> int | None:
        """The controller that answers DescribeQuorum as leader, if one does."""
        return active_controller({n: self._direct(n) for n in self.controller_ids if self.alive(n)})

    def live_brokers(self, via: int) -> set[int]:
        """The brokers broker ``via`` lists in its Metadata answer (the unfenced ones it knows)."""
        request = codec.make(codec.request_class(3, 12), topics=(), allow_auto_topic_creation=False,
                             include_topic_authorized_operations=False)
        return {b.node_id for b in ask(self._direct(via), request).brokers}

    def wait_ready(self, timeout: float = 60) -> None:
        """Until a controller leads and every running broker lists every running broker."""
        expected = {n for n in self.procs if self.alive(n)}

        def none_exited() -> None:
            for node_id in expected:
                proc = self.procs[node_id]
                if proc.poll() is not None:
                    last = " / ".join(self.output(node_id).strip().splitlines()[-3:])
                    raise RuntimeError(f"{self.name(node_id)} exited with {proc.returncode}: {last}")

        def leading() -> int | None:
            none_exited()
            return self.active_controller()

        wait_for("an active controller", leading, timeout)
        running = {b for b in self.broker_ids if b in expected}
        for broker in running:
            def lists_all(b: int = broker) -> bool:
                none_exited()
                return running <= self.live_brokers(b)
            wait_for(f"broker {broker} to list brokers {sorted(running)}", lists_all, timeout)

    def output(self, node_id: int) -> str:
        """What a node has printed so far (its log)."""
        path = self.data_dir / f"{self.name(node_id)}.out"
        return path.read_text(errors="replace") if path.exists() else ""


STATE_FILE = "cluster.json"


def _launch(command: list[str], out: IO[bytes]) -> subprocess.Popen:
    """One node's process, its output into ``out``, this checkout's minikafka on its path, in a session
    of its own (a Ctrl-C at the terminal reaches the cluster's stop(), which stops it under control)."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _write_state(data_dir: Path, state: dict[str, Any]) -> None:
    """``cluster.json``, replaced whole (a reader never sees half of it)."""
    tmp = data_dir / "cluster.json.tmp"
    tmp.write_text(json.dumps(state, indent=1))
    os.replace(tmp, data_dir / STATE_FILE)


def recorded_pids(data_dir: Path) -> dict[int, int]:
    """Node id -> pid, as ``cluster.json`` has them (none when there is no such file)."""
    path = data_dir / STATE_FILE
    if not path.exists():
        return {}
    return {int(n): int(node["pid"]) for n, node in json.loads(path.read_text())["nodes"].items()}


def _alive_pid(pid: int) -> bool:
    """A process with this pid runs (a zombie, dead but not yet reaped by its parent, does not)."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def _stop_pid(pid: int, timeout: float) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGCONT)
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive_pid(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive_pid(pid):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
