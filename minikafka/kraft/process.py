"""One KRaft controller as an asyncio process: the Raft core driven by sockets and a clock.

The process listens on its ``--listen`` address for the other controllers (Vote,
BeginQuorumEpoch, EndQuorumEpoch, Fetch), for brokers (BrokerRegistration, BrokerHeartbeat)
and for tools (ApiVersions, DescribeQuorum). Every ``TICK_MS`` it runs the core's timers and
sends what the core left in its outbox. On SIGTERM or SIGINT a leader resigns first: it sends
EndQuorumEpoch so that the others elect a successor at once instead of waiting out the fetch
timeout (KIP-595's graceful shutdown).

The clock is an injected ``minikafka.clock.Clock`` (``SYSTEM`` unless given). The Raft core
and the quorum controller are driven by its wall milliseconds, as DescribeQuorum reports
their timestamps in wall-clock time; how long a request waits for its record to commit is
measured on its monotonic milliseconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..clock import SYSTEM, Clock
from ..errors import ErrorCode
from ..protocol import codec
from ..server import Listener
from . import admin, answers, wire
from .config import QuorumConfig
from .messages import FetchRequest, Request
from .metadata_log import PARTITION_DIR, MetadataLog
from .peer import PeerChannel
from .quorum_controller import SESSION_TIMEOUT_MS, SNAPSHOT_BYTES, QuorumController
from .quorum_state import QuorumStateStore
from .raft import RaftNode

log = logging.getLogger("minikafka.kraft")
TICK_MS = 10
RAFT_KEYS = (wire.VOTE, wire.BEGIN_QUORUM_EPOCH, wire.END_QUORUM_EPOCH, wire.FETCH, wire.FETCH_SNAPSHOT)


@dataclass(frozen=True)
class ControllerSettings:
    node_id: int
    host: str
    port: int
    voters: dict[int, tuple[str, int]]
    log_dir: Path
    cluster_id: str = "minikafka-kraft"
    quorum: QuorumConfig = field(default_factory=QuorumConfig)
    session_timeout_ms: int = SESSION_TIMEOUT_MS
    snapshot_bytes: int = SNAPSHOT_BYTES


class ControllerProcess:
    def __init__(self, settings: ControllerSettings, clock: Clock = SYSTEM):
        self.settings = s = settings
        self.clock = clock
        self.log = MetadataLog(s.log_dir)
        store = QuorumStateStore(Path(s.log_dir) / PARTITION_DIR, tuple(sorted(s.voters)))
        self.node = RaftNode(s.node_id, set(s.voters), self.log, store, s.quorum, self.clock.wall_ms())
        self.controller = QuorumController(self.node, s.session_timeout_ms, s.snapshot_bytes, self.clock.wall_ms())
        self.listener = Listener(self.handle_frame, s.host, s.port, idle_ms=-1)
        self.channels: dict[tuple[int, bool], PeerChannel] = {}
        self.stopping = asyncio.Event()
        self._tasks: set[asyncio.Task] = set()
        self._last_state = ""

    # -- the loop

    async def run(self) -> None:
        await self.listener.start()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self.stopping.set)
        log.info(
            "controller %d listening on %s:%d, voters %s",
            self.settings.node_id,
            self.settings.host,
            self.listener.port,
            sorted(self.settings.voters),
        )
        while not self.stopping.is_set():
            self.controller.tick(self.clock.wall_ms())
            self._flush()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), TICK_MS / 1000)
        await self.shutdown()

    async def shutdown(self) -> None:
        """Resign if leading, give the EndQuorumEpoch requests a moment, then close."""
        self.node.resign(self.clock.wall_ms())
        sent = self._flush()
        if sent:
            await asyncio.wait(sent, timeout=self.settings.quorum.request_timeout_ms / 1000)
        await self.listener.stop()
        for channel in self.channels.values():
            channel.close()
        self.log.close()
        log.info("controller %d stopped", self.settings.node_id)

    def _flush(self) -> list[asyncio.Task]:
        """Send what the core wants sent, each request in its own task."""
        if self.node.state != self._last_state:
            self._last_state = self.node.state
            log.info(
                "controller %d is %s in epoch %d (leader %d)",
                self.node.node_id,
                self.node.state,
                self.node.epoch,
                self.node.leader_id,
            )
        tasks = []
        for destination, request in self.node.take_outbox():
            task = asyncio.get_running_loop().create_task(self._send(destination, request))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            tasks.append(task)
        return tasks

    async def _send(self, destination: int, request: Request) -> None:
        key = (destination, isinstance(request, FetchRequest))
        if key not in self.channels:
            host, port = self.settings.voters[destination]
            self.channels[key] = PeerChannel(host, port, self.settings.quorum.request_timeout_ms)
        api_key = wire.KEYS[type(request)]
        try:
            body = await self.channels[key].call(wire.to_wire(request, self.settings.cluster_id))
            response = wire.read_answer(api_key, body)
        except (OSError, TimeoutError, asyncio.IncompleteReadError, wire.BadAnswer) as e:
            log.debug("controller %d: %s to %d failed: %s", self.node.node_id, type(request).__name__, destination, e)
            self.node.request_failed(destination, request, self.clock.wall_ms())
        else:
            self.node.handle_response(destination, request, response, self.clock.wall_ms())
        self._flush()

    # -- requests to this controller

    async def handle_frame(self, frame: bytes, host: str, connection_id: int) -> bytes | None:
        api_key, version, correlation_id = codec.peek_api(frame)
        low, high = answers.SUPPORTED.get(api_key, (0, -1))
        if not low <= version <= high:
            if api_key == answers.API_VERSIONS:  # KIP-511: answer v0 with the ranges
                body = answers.api_versions(0)
                return codec.encode_response(
                    correlation_id,
                    codec.make(type(body), error_code=ErrorCode.unsupported_version, api_keys=body.api_keys),
                )
            raise codec.MalformedRequest(f"api key {api_key} v{version} is not served by a controller")
        _, request = codec.decode_request(frame, api_key, version)
        response = await self._answer(api_key, version, request)
        self._flush()
        return codec.encode_response(correlation_id, response)

    async def _answer(self, api_key: int, version: int, request: Any) -> Any:
        if api_key in RAFT_KEYS:
            return self._answer_raft(api_key, version, request)
        if api_key == answers.API_VERSIONS:
            return answers.api_versions(version)
        if api_key == answers.DESCRIBE_QUORUM:
            if not answers.valid_describe(request):
                return codec.error_answer(codec.response_class(api_key, version), ErrorCode.invalid_request)
            return answers.describe_quorum(version, self.node, self.settings.voters)
        if api_key == answers.DESCRIBE_CLUSTER:
            s = self.settings
            return answers.describe_cluster(version, request, s.cluster_id, self.node, s.voters)
        if api_key == answers.BROKER_REGISTRATION:
            return await self._register(version, request)
        if api_key in admin.HANDLERS:
            return await self._admin(api_key, version, request)
        answer = self.controller.heartbeat(
            request.broker_id,
            request.broker_epoch,
            request.current_metadata_offset,
            request.want_fence,
            request.want_shut_down,
            self.clock.wall_ms(),
        )
        return answers.broker_heartbeat(
            version, answer.error, answer.is_caught_up, answer.is_fenced, answer.should_shut_down
        )

    def _answer_raft(self, api_key: int, version: int, request: Any) -> Any:
        try:
            cluster_id, message = wire.from_wire(api_key, request)
        except wire.NotMetadataPartition as e:
            log.warning("controller %d: %s", self.node.node_id, e)
            return wire.error_answer(api_key, version, ErrorCode.invalid_request)
        if cluster_id not in (None, self.settings.cluster_id):
            log.warning(
                "controller %d: a request for cluster %r, this is %r",
                self.node.node_id,
                cluster_id,
                self.settings.cluster_id,
            )
            return wire.error_answer(api_key, version, ErrorCode.inconsistent_cluster_id)
        return wire.answer(api_key, version, self.node.handle_request(message, self.clock.wall_ms()))

    async def _admin(self, api_key: int, version: int, request: Any) -> Any:
        """Run an admin or AlterPartition request; the answer waits for the records it appended."""
        before = self.controller.last_appended
        finish = admin.handle(self.controller, api_key, version, request)
        if self.controller.last_appended == before:
            return finish(None)
        self._flush()
        return finish(await self._committed(self.controller.last_appended))

    async def _committed(self, offset: int) -> ErrorCode | None:
        """Wait until ``offset`` commits: None, or why it may never (a lost leadership, a timeout)."""
        epoch = self.node.epoch
        deadline = self.clock.monotonic_ms() + self.settings.quorum.request_timeout_ms
        while self.node.high_watermark <= offset:
            if not self.controller.is_active or self.node.epoch != epoch:
                return ErrorCode.not_controller
            if self.clock.monotonic_ms() > deadline:
                return ErrorCode.request_timed_out
            await asyncio.sleep(TICK_MS / 1000)
        return None

    async def _register(self, version: int, request: Any) -> Any:
        if request.cluster_id != self.settings.cluster_id:
            return answers.broker_registration(version, ErrorCode.inconsistent_cluster_id, -1)
        error, epoch = self.controller.register(
            request.broker_id, request.incarnation_id, answers.listeners_of(request), request.rack, self.clock.wall_ms()
        )
        if error != ErrorCode.none:
            return answers.broker_registration(version, error, -1)
        self._flush()
        deadline = self.clock.monotonic_ms() + self.settings.quorum.request_timeout_ms
        while self.node.high_watermark <= epoch:  # the answer waits for the record to commit
            if self.clock.monotonic_ms() > deadline or not self.controller.is_active:
                return answers.broker_registration(version, ErrorCode.request_timed_out, -1)
            await asyncio.sleep(TICK_MS / 1000)
        return answers.broker_registration(version, ErrorCode.none, epoch)
