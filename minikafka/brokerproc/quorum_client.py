"""How a broker reaches the controller quorum: any controller to learn who leads, the active one for the rest.

A broker knows the controllers' addresses (``controller.quorum.bootstrap.servers``, here
``--controllers 1@host:port,...``), not which one is active. It asks one with DescribeQuorum:
every controller names the leader it knows (a follower answers with an error, and the leader's
id all the same). Requests then go to that controller; an answer of NOT_CONTROLLER, or no
answer at all, sends the broker looking again. ``forward`` passes a client's request frame to
the active controller as it came (CreateTopics, DeleteTopics, ...) and returns the answer
frame, as a Kafka 4 broker forwards what changes metadata.

Deadlines are monotonic milliseconds on the injected ``minikafka.clock.Clock`` (``SYSTEM``
unless given), ``request.timeout.ms`` after the request began.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from typing import Any

from ..clock import SYSTEM, Clock
from ..errors import ErrorCode
from ..protocol.channel import PeerChannel, decode_response
from ..protocol import codec

log = logging.getLogger("minikafka.brokerproc")

DESCRIBE_QUORUM, API_VERSIONS = 55, 18
METADATA_TOPIC = "__cluster_metadata"
CLIENT_ID = "broker-to-controller"


class NoController(Exception):
    """No controller answered as the active one before the deadline."""


def not_controller(body: Any) -> bool:
    """Whether an answer says NOT_CONTROLLER, at the top or for any topic it names."""
    if getattr(body, "error_code", 0) == ErrorCode.not_controller:
        return True
    for name in ("topics", "results", "replica_election_results", "responses"):
        for item in getattr(body, name, ()) or ():
            if getattr(item, "error_code", 0) == ErrorCode.not_controller:
                return True
    return False


def describe_quorum_request() -> Any:
    module = codec.request_module(DESCRIBE_QUORUM, 2)
    partition = codec.entity(module, "PartitionData", partition_index=0)
    topic = codec.entity(module, "TopicData", topic_name=METADATA_TOPIC, partitions=(partition,))
    return codec.make(codec.request_class(DESCRIBE_QUORUM, 2), topics=(topic,))


class QuorumClient:
    """The controllers as one broker sees them."""

    def __init__(self, controllers: dict[int, tuple[str, int]], request_timeout_ms: int = 2000,
                 retry_backoff_ms: int = 100, clock: Clock = SYSTEM):
        self.controllers, self.clock = dict(controllers), clock
        self.request_timeout_ms, self.retry_backoff_ms = request_timeout_ms, retry_backoff_ms
        self.active: int | None = None  # the controller believed active
        self.leader_epoch = -1
        self._channels: dict[tuple[int, str], PeerChannel] = {}
        self._frames: dict[int, PeerChannel] = {}  # one per controller, for forwarded frames
        self._served: dict[int, dict[int, tuple[int, int]]] = {}  # controller -> api key -> (min, max) version

    def channel(self, node: int, kind: str = "control") -> PeerChannel:
        """One connection per (controller, kind): a metadata Fetch never waits behind a heartbeat."""
        key = (node, kind)
        if key not in self._channels:
            host, port = self.controllers[node]
            self._channels[key] = PeerChannel(host, port, self.request_timeout_ms)
        return self._channels[key]

    def close(self) -> None:
        for channel in self._channels.values():
            channel.close()
        for frames in self._frames.values():
            frames.close()

    def deadline(self, timeout_ms: int | None = None) -> int:
        """When a wait of ``timeout_ms`` (the request timeout by default) that starts now ends, in monotonic ms."""
        return self.clock.monotonic_ms() + (timeout_ms or self.request_timeout_ms)

    def _past(self, deadline: int) -> bool:
        return self.clock.monotonic_ms() > deadline

    def forget(self, node: int | None) -> None:
        """``node`` did not answer as the active controller: look again next time."""
        if node is not None and node == self.active:
            self.active = None

    async def find_active(self, deadline: int) -> int:
        """The active controller's id, asking the controllers in turn until one names a leader
        (NoController once ``deadline``, in monotonic ms, has passed)."""
        while True:
            for node in sorted(self.controllers, key=lambda n: n != self.active):
                try:
                    answer = await self.channel(node, "describe").call(describe_quorum_request())
                except (OSError, TimeoutError, asyncio.IncompleteReadError):
                    continue
                partition = answer.topics[0].partitions[0] if answer.topics and answer.topics[0].partitions else None
                if (partition is not None and partition.leader_id in self.controllers
                        and partition.leader_epoch >= self.leader_epoch):
                    self.active, self.leader_epoch = partition.leader_id, partition.leader_epoch
                    return partition.leader_id
            if self._past(deadline):
                raise NoController(f"no controller of {sorted(self.controllers)} names an active controller")
            await asyncio.sleep(self.retry_backoff_ms / 1000)

    async def call(self, request: Any, kind: str = "control", timeout_ms: int | None = None) -> Any:
        """Send ``request`` (a kio entity) to the active controller, looking for it again on
        NOT_CONTROLLER or no answer, until ``timeout_ms`` (the request timeout) has passed."""
        deadline = self.deadline(timeout_ms)
        while True:
            node = self.active if self.active is not None else await self.find_active(deadline)
            try:
                answer = await self.channel(node, kind).call(request)
            except (OSError, TimeoutError, asyncio.IncompleteReadError) as e:
                log.debug("controller %d did not answer %s: %s", node, type(request).__name__, e)
                self.forget(node)
            else:
                if not not_controller(answer):
                    return answer
                self.forget(node)
            if self._past(deadline):
                raise NoController(f"no active controller answered {type(request).__name__}")
            await asyncio.sleep(self.retry_backoff_ms / 1000)

    async def serves_within(self, api_key: int, version: int, timeout_ms: int) -> bool:
        """Whether the active controller answers ``api_key`` at ``version``, looking for one until
        ``timeout_ms`` has passed (an election); NoController if none is found or answers."""
        node = self.active if self.active is not None else await self.find_active(self.deadline(timeout_ms))
        if node not in self._served:
            try:
                body = await self.channel(node, "describe").call(codec.make(codec.request_class(API_VERSIONS, 3),
                                                                            client_software_name="minikafka",
                                                                            client_software_version="1"))
            except (OSError, TimeoutError, asyncio.IncompleteReadError) as e:
                self.active = None
                raise NoController(f"controller {node} did not answer ApiVersions: {e}") from None
            self._served[node] = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
        low, high = self._served[node].get(api_key, (0, -1))
        return low <= version <= high

    async def serves(self, api_key: int, version: int) -> bool:
        """``serves_within`` a second, False when no active controller answers by then."""
        try:
            return await self.serves_within(api_key, version, 1000)
        except NoController:
            return False

    async def forward(self, frame: bytes, timeout_ms: int | None = None) -> bytes:
        """Pass a client's request frame to the active controller; its answer, with the client's correlation id,
        size-prefixed like ``codec.encode_response``'s."""
        api_key, version, correlation_id = codec.peek_api(frame)
        deadline = self.deadline(timeout_ms)
        while True:
            node = self.active if self.active is not None else await self.find_active(deadline)
            if node not in self._frames:
                self._frames[node] = PeerChannel(*self.controllers[node], self.request_timeout_ms)
            try:
                answer = await self._frames[node].call_frame(frame, max(100, deadline - self.clock.monotonic_ms()))
            except (OSError, TimeoutError, asyncio.IncompleteReadError):
                self.forget(node)
            else:
                try:
                    _, body = decode_response(answer, api_key, version)
                except Exception:  # noqa: BLE001 - an answer we cannot read is passed on as it came
                    body = None
                if body is None or not not_controller(body):
                    return struct.pack(">ii", len(answer), correlation_id) + answer[4:]  # as the listener sends it
                self.forget(node)
            if self._past(deadline):
                raise NoController(f"no active controller answered the forwarded API {api_key}")
            await asyncio.sleep(self.retry_backoff_ms / 1000)

