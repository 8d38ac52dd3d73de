"""A broker follows ``__cluster_metadata`` as a Raft observer (KIP-595): it fetches, it never votes.

The broker sends the quorum leader the same Fetch a follower controller sends, with its own
broker id as the replica id; the leader reports it among the observers of DescribeQuorum and
never counts it towards the high watermark. Records are kept in an in-memory log (a restarted
broker reads the metadata again from the leader, or from its snapshot); those below the
high watermark are committed and go, in order, to ``apply``. A Fetch answered with a snapshot
id means the leader's log no longer starts where this one ends: the broker reads the snapshot
with FetchSnapshot and ``load``s it. A Fetch answered with a diverging epoch cuts the log back
(only records above the high watermark can be cut, and none of those was applied).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol

from ..errors import ErrorCode
from ..kraft import snapshots, wire
from ..kraft.messages import FetchRequest, FetchResponse, FetchSnapshotRequest, FetchSnapshotResponse
from ..kraft.metadata_log import MetadataLog
from ..kraft.records import MetadataRecord, decode
from .quorum_client import NoController, QuorumClient

log = logging.getLogger("minikafka.brokerproc")

FETCH_POLL_MS = 50  # a caught-up observer asks again after this (Kafka's long poll, the minikafka way)


class Image(Protocol):
    """What applies committed metadata records to a broker's view (``kraft.image.MetadataImage``)."""

    def apply(self, record: MetadataRecord) -> object: ...

    def load_snapshot(self, records: list[MetadataRecord], end_offset: int) -> object:
        """Replace the view with a snapshot's, which covers every offset below ``end_offset``."""
        ...


class MetadataObserver:
    def __init__(self, node_id: int, quorum: QuorumClient, cluster_id: str, image: Image,
                 on_snapshot: Callable[[], None] = lambda: None):
        self.node_id, self.quorum, self.cluster_id, self.image = node_id, quorum, cluster_id, image
        self.on_snapshot = on_snapshot
        self.log = MetadataLog(None)
        self.high_watermark = 0
        self.applied_offset = -1  # the last offset applied
        self.caught_up = asyncio.Event()  # set once the first answer's high watermark is applied
        self.stopped = False

    # -- the pure part: what one answer does

    def take_fetch(self, response: FetchResponse) -> bool:
        """Apply a Fetch answer (no error); True if records arrived."""
        if response.diverged:
            _, mine = self.log.end_offset_for_epoch(response.diverging_epoch)
            self.log.truncate_to(max(min(mine, response.diverging_end_offset), self.applied_offset + 1))
            return True
        appended = self.log.append_replicated(response.records) if response.records else 0
        self.high_watermark = max(self.high_watermark, min(response.high_watermark, self.log.end_offset))
        self.apply_committed()
        return appended > 0

    def take_snapshot(self, response: FetchSnapshotResponse) -> None:
        self.log.restart_at(response.end_offset, response.epoch)
        self.image.load_snapshot(snapshots.records_of(response.data), response.end_offset)
        self.applied_offset = response.end_offset - 1
        self.high_watermark = max(self.high_watermark, response.end_offset)
        self.on_snapshot()

    def apply_committed(self) -> None:
        while self.applied_offset + 1 < self.high_watermark:
            data = self.log.read(self.applied_offset + 1, 1)
            if not data:
                break
            progressed = False
            for record in decode(data):
                if self.applied_offset < record.offset < self.high_watermark:
                    self.image.apply(record)
                    self.applied_offset = record.offset
                    progressed = True
            if not progressed:
                break

    # -- the loop

    async def run(self) -> None:
        """Fetch until ``stopped`` (a flag as well as the cancellation: Python 3.11's ``wait_for``
        may swallow a cancellation that arrives as its answer does)."""
        while not self.stopped:
            try:
                wait_ms = await self.fetch_once()
            except NoController as e:
                log.info("broker %d: %s; asking again", self.node_id, e)
                wait_ms = self.quorum.retry_backoff_ms
            except Exception:  # the loop must outlive one bad answer
                log.exception("broker %d: metadata fetch failed", self.node_id)
                wait_ms = 500
            if wait_ms:
                await asyncio.sleep(wait_ms / 1000)

    async def _ask(self, node: int, request: FetchRequest | FetchSnapshotRequest, key: int
                   ) -> FetchResponse | FetchSnapshotResponse | None:
        """One Raft request to controller ``node`` on the metadata channel; None (and the controller
        forgotten, to be looked for again) when it cannot be reached or answers what cannot be read."""
        try:
            body = await self.quorum.channel(node, "fetch").call(wire.to_wire(request, self.cluster_id))
            answer = wire.read_answer(key, body)
        except (OSError, TimeoutError, asyncio.IncompleteReadError, wire.BadAnswer) as e:
            log.debug("broker %d: metadata %s to %d failed: %s", self.node_id, type(request).__name__, node, e)
            self.quorum.forget(node)
            return None
        assert isinstance(answer, FetchResponse | FetchSnapshotResponse)
        return answer

    async def fetch_once(self) -> int:
        """One Fetch (and FetchSnapshot if told); how long to wait before the next, in ms."""
        quorum = self.quorum
        node = quorum.active if quorum.active is not None else await quorum.find_active(quorum.deadline())
        request = FetchRequest(self.node_id, quorum.leader_epoch, self.log.end_offset, self.log.last_epoch)
        response = await self._ask(node, request, wire.FETCH)
        if response is None:
            return quorum.retry_backoff_ms
        assert isinstance(response, FetchResponse)
        if response.error != ErrorCode.none:
            self._redirect(node, response.leader_id, response.leader_epoch)
            return quorum.retry_backoff_ms
        if response.snapshot_end_offset >= 0:
            snap = FetchSnapshotRequest(self.node_id, quorum.leader_epoch, response.snapshot_end_offset,
                                        response.snapshot_epoch)
            answer = await self._ask(node, snap, wire.FETCH_SNAPSHOT)
            if answer is None:
                return quorum.retry_backoff_ms
            assert isinstance(answer, FetchSnapshotResponse)
            if answer.error != ErrorCode.none:
                self._redirect(node, answer.leader_id, answer.leader_epoch)
                return quorum.retry_backoff_ms
            self.take_snapshot(answer)
            return 0
        more = self.take_fetch(response)
        if not self.caught_up.is_set() and self.applied_offset + 1 >= response.high_watermark:
            self.caught_up.set()
        return 0 if more else FETCH_POLL_MS

    def _redirect(self, node: int, leader_id: int, leader_epoch: int) -> None:
        """An error answer names the leader it knows: go there, or look again."""
        quorum = self.quorum
        if leader_id in quorum.controllers and leader_epoch >= quorum.leader_epoch and (
                leader_id != node or leader_epoch != quorum.leader_epoch):
            quorum.active, quorum.leader_epoch = leader_id, leader_epoch
        else:
            quorum.forget(node)
