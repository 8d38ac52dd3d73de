"""The transaction coordinator's rules on one broker without sockets: each state change
happens once, even when the timer and EndTxn meet; the KIP-890 check of a first write;
idle ids expire. A real Broker (``minikafka.assembly``) on an event loop, driven by method calls."""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Callable
from typing import TypeVar

import pytest

from minikafka import records
from minikafka.assembly import Assembly
from minikafka.broker import Broker
from minikafka.clock import now_ms
from minikafka.config import BrokerConfig
from minikafka.controller import Controller
from minikafka.errors import ErrorCode, KafkaError
from minikafka.metadata import ClusterMetadata
from minikafka.replica.partition import Partition
from minikafka.replica.peers import Peers
from minikafka.transactions import coordinator
from minikafka.transactions.channel import InProcessTxnPeers, Marker
from minikafka.transactions.coordinator import TOPIC
from minikafka.transactions.states import TxnState

T = TypeVar("T")


def one_broker(**config) -> Broker:
    """Broker 1 of a one-broker cluster, in memory, without its background tasks."""
    return Assembly(config).add_broker(1)


def broker_with(wrapper: Callable[[InProcessTxnPeers], T]) -> tuple[Broker, T]:
    """Broker 1 of a one-broker cluster whose transaction traffic goes through ``wrapper`` around the real one."""
    metadata = ClusterMetadata(BrokerConfig({}))
    hosts: dict = {}
    peers = Peers(hosts)
    channel = wrapper(InProcessTxnPeers(hosts))
    broker = Broker(1, metadata.config, Controller(metadata, peers), peers, None, txn_peers=channel)  # type: ignore[arg-type]
    hosts[1] = broker
    metadata.brokers[1] = ("127.0.0.1", 0)
    broker.controller.elect_controller()
    return broker, channel


def markers(part: Partition) -> int:
    return sum(1 for header, _ in part.log.batches(0) if header.is_control)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


def test_a_commit_meeting_the_timer_is_completed_once_and_the_next_transaction_is_untouched(monkeypatch):
    async def scenario():
        broker = one_broker()
        broker.create_topic("out", 1, 1)
        txns = broker.transactions
        pid, epoch = await txns.init_producer_id("tid", 60_000)
        await txns.add_partitions("tid", pid, epoch, [("out", 0)])
        slow = Partition.wait_for_replicas

        async def slow_replication(part, offset, timeout):  # the ISR takes its time, as under load
            if part.topic == TOPIC:
                await asyncio.sleep(0.05)
            await slow(part, offset, timeout)
        monkeypatch.setattr(Partition, "wait_for_replicas", slow_replication)
        meta = txns.txns["tid"]
        end = asyncio.create_task(txns.end_txn("tid", pid, epoch, commit=True))
        for _ in range(100):  # until EndTxn waits for PREPARE_COMMIT to replicate
            if meta.state == TxnState.PREPARE_COMMIT:
                break
            await asyncio.sleep(0.001)
        assert meta.state == TxnState.PREPARE_COMMIT
        await asyncio.gather(end, txns.tick(meta, now_ms()))
        await txns.add_partitions("tid", pid, epoch, [("out", 0)])  # the next transaction begins at once
        await txns.tick(meta, now_ms())
        return markers(broker.local_replica("out", 0)), meta.state, set(meta.partitions)
    assert run(scenario()) == (1, TxnState.ONGOING, {("out", 0)})


def test_a_first_write_to_a_partition_not_in_the_transaction_is_refused():
    async def scenario():
        broker = one_broker()
        broker.create_topic("out", 2, 1)
        pid, epoch = await broker.transactions.init_producer_id("tid", 60_000)
        await broker.transactions.add_partitions("tid", pid, epoch, [("out", 0)])
        broker.verify_transaction("tid", pid, 0, "out", 0)  # added: fine
        with pytest.raises(KafkaError) as refused:
            broker.verify_transaction("tid", pid, 0, "out", 1)
        return refused.value.code
    assert run(scenario()) == ErrorCode.invalid_txn_state


def test_an_idle_transactional_id_expires_with_a_tombstone():
    async def scenario():
        broker = one_broker(**{"transactional.id.expiration.ms": 1})
        txns = broker.transactions
        await txns.init_producer_id("idle", 60_000)
        meta = txns.txns["idle"]
        await txns.tick(meta, now_ms() + 10)
        state_partition = broker.local_replica(TOPIC, txns.partition_of("idle"))
        last = [r for _, b in state_partition.log.batches(0) for r in records.iter_records(b)][-1]
        return "idle" in txns.txns, last.value, txns.state_of("idle")
    assert run(scenario()) == (False, None, "unknown")


class MovedLeader:
    """A ``TxnPeers`` whose broker 1 says NOT_LEADER_OR_FOLLOWER for out-1 (its leadership moved to broker 2);
    the rest goes to the real brokers of the process."""

    def __init__(self, real: InProcessTxnPeers):
        self.real, self.asked = real, list[tuple[int, list[tuple[str, int]]]]()

    async def write_markers(self, broker_id: int, marker: Marker,
                            partitions: list[tuple[str, int]]) -> dict[tuple[str, int], ErrorCode]:
        self.asked.append((broker_id, partitions))
        if broker_id == 2:
            return dict.fromkeys(partitions, ErrorCode.none)
        moved = [tp for tp in partitions if tp == ("out", 1)]
        written = await self.real.write_markers(broker_id, marker, [tp for tp in partitions if tp not in moved])
        return written | dict.fromkeys(moved, ErrorCode.not_leader_or_follower)

    def __getattr__(self, name: str):
        return getattr(self.real, name)


def test_a_marker_refused_by_a_former_leader_is_sent_to_the_new_leader_at_the_next_tick():
    """As Kafka's TransactionMarkerChannelManager: NOT_LEADER_OR_FOLLOWER leaves the partition pending, and
    the retry goes to the broker the metadata names by then; the transaction completes only then."""
    async def scenario():
        broker, channel = broker_with(MovedLeader)
        metadata = broker.metadata
        broker.create_topic("out", 2, 1)
        txns = broker.transactions
        pid, epoch = await txns.init_producer_id("tid", 60_000)
        await txns.add_partitions("tid", pid, epoch, [("out", 0), ("out", 1)])
        await txns.end_txn("tid", pid, epoch, commit=True)
        meta = txns.txns["tid"]
        pending = (meta.state, sorted(meta.partitions))
        metadata.topics["out"].partitions[1].leader = 2  # the metadata log brings the new leader
        await txns.tick(meta, now_ms())
        return pending, meta.state, channel.asked, markers(broker.partitions["out", 0])

    pending, state, asked, written = run(scenario())
    assert pending == (TxnState.PREPARE_COMMIT, [("out", 1)])
    assert state == TxnState.COMPLETE_COMMIT
    assert asked == [(1, [("out", 0), ("out", 1)]), (2, [("out", 1)])]
    assert written == 1


class SilentLeader:
    """A ``TxnPeers`` whose leader holds every WriteTxnMarkers until ``answer`` is set, then writes them."""

    def __init__(self, real: InProcessTxnPeers):
        self.real, self.answer, self.calls = real, asyncio.Event(), 0

    async def write_markers(self, broker_id: int, marker: Marker,
                            partitions: list[tuple[str, int]]) -> dict[tuple[str, int], ErrorCode]:
        self.calls += 1
        await self.answer.wait()
        return await self.real.write_markers(broker_id, marker, partitions)

    def __getattr__(self, name: str):
        return getattr(self.real, name)


def test_end_txn_answers_after_markers_wait_and_the_markers_finish_alone(monkeypatch):
    """Kafka answers EndTxn once the decision is written: a leader that does not answer holds the commit
    only MARKERS_WAIT; meanwhile the id is busy (CONCURRENT_TRANSACTIONS) and the timer sends nothing again."""
    monkeypatch.setattr(coordinator, "MARKERS_WAIT", datetime.timedelta(milliseconds=50))

    async def scenario():
        broker, channel = broker_with(SilentLeader)
        broker.create_topic("out", 1, 1)
        txns = broker.transactions
        pid, epoch = await txns.init_producer_id("tid", 60_000)
        await txns.add_partitions("tid", pid, epoch, [("out", 0)])
        await txns.end_txn("tid", pid, epoch, commit=True)  # returns although no marker is written
        meta = txns.txns["tid"]
        answered = meta.state
        try:
            await txns.init_producer_id("tid", 60_000)
            busy = ErrorCode.none
        except KafkaError as e:
            busy = e.code
        await txns.tick(meta, now_ms())
        calls = channel.calls
        channel.answer.set()
        for _ in range(100):
            if meta.state == TxnState.COMPLETE_COMMIT:
                break
            await asyncio.sleep(0.01)
        return answered, busy, calls, meta.state, markers(broker.partitions["out", 0])

    answered, busy, calls, state, written = run(scenario())
    assert (answered, busy, calls) == (TxnState.PREPARE_COMMIT, ErrorCode.concurrent_transactions, 1)
    assert (state, written) == (TxnState.COMPLETE_COMMIT, 1)
