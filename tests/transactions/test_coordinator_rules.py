"""The transaction coordinator's rules on one broker without sockets: each state change
happens once, even when the timer and EndTxn meet; the KIP-890 check of a first write;
idle ids expire. A real Broker (``minikafka.assembly``) on an event loop, driven by method calls."""

from __future__ import annotations

import asyncio

import pytest

from minikafka import records
from minikafka.assembly import Assembly
from minikafka.broker import Broker
from minikafka.clock import now_ms
from minikafka.errors import ErrorCode, KafkaError
from minikafka.replica.partition import Partition
from minikafka.transactions.coordinator import TOPIC
from minikafka.transactions.states import TxnState


def one_broker(**config) -> Broker:
    """Broker 1 of a one-broker cluster, in memory, without its background tasks."""
    return Assembly(config).add_broker(1)


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
