"""A whole quorum of sans-I/O ``RaftNode``s in one thread: the test decides what is delivered when."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from minikafka.kraft.config import QuorumConfig
from minikafka.kraft.metadata_log import MetadataLog
from minikafka.kraft.quorum_state import QuorumStateStore
from minikafka.kraft.raft import LEADER, RaftNode
from minikafka.kraft.records import metadata_record


@dataclass
class Sim:
    size: int = 3
    seed: int = 0
    now: int = 0
    config: QuorumConfig = field(default_factory=QuorumConfig)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.logs = {n: MetadataLog() for n in self.ids}
        self.stores = {n: QuorumStateStore(None) for n in self.ids}
        self.nodes = {n: self._new(n) for n in self.ids}
        self.in_flight: list[tuple[str, int, int, object, object]] = []  # (kind, from, to, request, response)
        self.leaders: dict[int, int] = {}  # epoch -> the node that led it
        self.committed: dict[int, bytes] = {}  # offset -> the batch committed there

    @property
    def ids(self) -> list[int]:
        return list(range(1, self.size + 1))

    def _new(self, n: int) -> RaftNode:
        return RaftNode(
            n, set(self.ids), self.logs[n], self.stores[n], self.config, self.now, random.Random(self.rng.random())
        )

    def restart(self, n: int) -> None:
        """A crash: in-flight messages to and from it are lost; its log and quorum-state survive."""
        self.in_flight = [m for m in self.in_flight if n not in (m[1], m[2])]
        self.nodes[n] = self._new(n)

    def collect(self) -> None:
        for n, node in self.nodes.items():
            for destination, request in node.take_outbox():
                self.in_flight.append(("request", n, destination, request, None))

    def deliver(self, index: int) -> None:
        kind, source, destination, request, response = self.in_flight.pop(index % len(self.in_flight))
        if kind == "request":
            answer = self.nodes[destination].handle_request(request, self.now)
            self.in_flight.append(("response", destination, source, request, answer))
        else:
            self.nodes[destination].handle_response(source, request, response, self.now)
        self.after()

    def drop(self, index: int) -> None:
        kind, source, destination, request, _ = self.in_flight.pop(index % len(self.in_flight))
        sender = source if kind == "request" else destination
        self.nodes[sender].request_failed(destination if kind == "request" else source, request, self.now)
        self.after()

    def advance(self, ms: int) -> None:
        self.now += ms
        for node in self.nodes.values():
            node.tick(self.now)
        self.after()

    def append(self, n: int) -> None:
        node = self.nodes[n]
        if node.state == LEADER:
            node.append([metadata_record("TestRecord", self.now, n=self.now)], self.now)
        self.after()

    def after(self) -> None:
        """Collect what the nodes want sent, and check Raft's safety properties."""
        self.collect()
        for n, node in self.nodes.items():
            if node.state == LEADER:
                assert self.leaders.setdefault(node.epoch, n) == n, f"two leaders in epoch {node.epoch}"
            for batch in node.log.batches():
                offset = int.from_bytes(batch[:8], "big")
                if offset < node.high_watermark:
                    assert self.committed.setdefault(offset, batch) == batch, f"committed offset {offset} changed"

    def leader(self) -> RaftNode | None:
        leaders = [node for node in self.nodes.values() if node.state == LEADER]
        return max(leaders, key=lambda node: node.epoch) if leaders else None

    def run_until(self, done, steps: int = 5000, step_ms: int = 10) -> None:
        for _ in range(steps):
            while self.in_flight:
                self.deliver(0)
            if done():
                return
            self.advance(step_ms)
        raise AssertionError("the simulated quorum did not get there")
