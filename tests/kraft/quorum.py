"""Three (or more) ``minikafka controller`` processes on loopback, and raw requests to them.

Every wait polls with a deadline; nothing sleeps to synchronise.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

from minikafka.kraft.metadata_log import MetadataLog
from minikafka.kraft.records import MetadataRecord, read_all
from minikafka.protocol import codec
from tests.rawclient import RawClient

CLUSTER_ID = "kraft-test"
REPO = Path(__file__).resolve().parents[2]


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def wait_until(what: str, check, timeout: float = 15.0, every: float = 0.05):
    """Poll ``check`` until it returns something truthy; fail naming ``what`` at the deadline."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except OSError as e:  # a controller that is down or paused
            last = e
        else:
            if last:
                return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


class Quorum:
    def __init__(self, root: Path, size: int = 3, extra: tuple[str, ...] = ()):
        self.root, self.extra = root, extra
        self.ports = dict(zip(range(1, size + 1), free_ports(size)))
        self.voters = ",".join(f"{n}@127.0.0.1:{p}" for n, p in self.ports.items())
        self.procs: dict[int, subprocess.Popen] = {}
        self.outputs: list = []  # each process's output file, closed at stop

    def log_dir(self, node: int) -> Path:
        return self.root / f"controller-{node}"

    def start(self, node: int | None = None) -> Quorum:
        for n in [node] if node is not None else list(self.ports):
            out = open(self.root / f"controller-{n}.out", "ab")  # noqa: SIM115 - the process keeps it
            self.outputs.append(out)
            self.procs[n] = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "minikafka",
                    "controller",
                    "--node-id",
                    str(n),
                    "--listen",
                    f"127.0.0.1:{self.ports[n]}",
                    "--voters",
                    self.voters,
                    "--log-dir",
                    str(self.log_dir(n)),
                    "--cluster-id",
                    CLUSTER_ID,
                    *self.extra,
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=REPO,
                env={**os.environ, "PYTHONPATH": str(REPO)},
            )
        return self

    def signal(self, node: int, sig: int) -> None:
        self.procs[node].send_signal(sig)

    def kill(self, node: int) -> None:
        self.procs[node].kill()
        self.procs[node].wait(10)

    def terminate(self, node: int) -> None:
        self.procs[node].terminate()
        assert self.procs[node].wait(10) == 0

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        for out in self.outputs:
            out.close()

    def alive(self) -> list[int]:
        return [n for n, p in self.procs.items() if p.poll() is None]

    # -- asking the controllers

    def client(self, node: int) -> RawClient:
        return RawClient(f"127.0.0.1:{self.ports[node]}", timeout=2)

    def describe(self, node: int, version: int = 2, *, whole: bool = False):
        module = codec.request_module(55, version)
        request = codec.make(
            codec.request_class(55, version),
            topics=(
                codec.entity(
                    module,
                    "TopicData",
                    topic_name="__cluster_metadata",
                    partitions=(codec.entity(module, "PartitionData", partition_index=0),),
                ),
            ),
        )
        with self.client(node) as c:
            answer = c.request(request)
        return answer if whole else answer.topics[0].partitions[0]

    def leader(self, among: list[int] | None = None) -> tuple[int, int] | None:
        """(leader id, epoch) if every controller in ``among`` names the same leader, who answers as leader."""
        among = among or self.alive()
        seen = {(p.leader_id, p.leader_epoch) for p in (self.describe(n) for n in among)}
        if len(seen) != 1:
            return None
        leader, epoch = seen.pop()
        return (leader, epoch) if leader in among and self.describe(leader).error_code == 0 else None

    def caught_up(self, leader: int):
        """The leader's DescribeQuorum answer if every voter's log ends at the high watermark."""
        answer = self.describe(leader)
        return answer if all(v.log_end_offset == answer.high_watermark for v in answer.current_voters) else None

    def register(self, node: int, broker_id: int, incarnation: uuid.UUID | None = None):
        module = codec.request_module(62, 1)
        request = codec.make(
            codec.request_class(62, 1),
            broker_id=broker_id,
            cluster_id=CLUSTER_ID,
            incarnation_id=incarnation or uuid.uuid4(),
            listeners=(
                codec.entity(
                    module, "Listener", name="PLAINTEXT", host="127.0.0.1", port=9092 + broker_id, security_protocol=0
                ),
            ),
            features=(),
            rack=None,
        )
        with RawClient(f"127.0.0.1:{self.ports[node]}", timeout=5) as c:
            return c.request(request)

    def heartbeat(self, node: int, broker_id: int, broker_epoch: int, metadata_offset: int = 0):
        request = codec.make(
            codec.request_class(63, 0),
            broker_id=broker_id,
            broker_epoch=broker_epoch,
            current_metadata_offset=metadata_offset,
            want_fence=False,
            want_shut_down=False,
        )
        with self.client(node) as c:
            return c.request(request)

    def records(self, node: int) -> list[MetadataRecord]:
        """The metadata records in a controller's log on disk (read-only: it may be running)."""
        return read_all(MetadataLog(self.log_dir(node), read_only=True).batches())
