"""Session timeouts on the coordinator's injected clock (``minikafka.clock.ManualClock``).

A member is removed when ``session.timeout.ms`` (classic, KIP-62) or
``group.consumer.session.timeout.ms`` (KIP-848) has passed since its last sign of life:
exactly then, not a millisecond before. The clock moves only when the test moves it and
the coordinator's timers run when the test calls ``tick``: nothing sleeps.
"""

from __future__ import annotations

import asyncio

from minikafka.clock import ManualClock
from minikafka.config import BrokerConfig
from minikafka.groups.consumer.group import Heartbeat
from minikafka.groups.coordinator import GroupCoordinator
from minikafka.groups.offsets_topic import MemoryOffsetsTopic
from minikafka.groups.states import EMPTY
from tests.groups.test_offsets_persist import stable_member

SESSION_MS = 10_000  # join_request's session.timeout.ms
CONSUMER_SESSION_MS = 45_000  # Kafka's group.consumer.session.timeout.ms


def coordinator(clock: ManualClock) -> GroupCoordinator:
    topic = MemoryOffsetsTopic(topics={"t"})
    topic.partitions["t"] = 2
    return GroupCoordinator(1, BrokerConfig({"group.initial.rebalance.delay.ms": 0}), topic, clock=clock)


def test_a_classic_member_expires_exactly_when_its_session_timeout_has_passed():
    async def scenario() -> None:
        clock = ManualClock(monotonic_ms=5_000_000)
        c = coordinator(clock)
        member, generation = await stable_member(c, "g")
        clock.advance(6_000)
        c.heartbeat("g", member, None, generation)  # the session starts again from here
        assert c.next_deadline() == clock.monotonic_ms() + SESSION_MS
        clock.advance(SESSION_MS - 1)
        c.tick()
        assert member in c.groups["g"].members, "a millisecond before session.timeout.ms the member is alive"
        clock.advance(1)
        c.tick()
        assert member not in c.groups["g"].members and c.groups["g"].state is EMPTY
    asyncio.run(scenario())


def test_a_consumer_protocol_member_expires_exactly_at_the_groups_session_timeout():
    async def scenario() -> None:
        clock = ManualClock()
        c = coordinator(clock)
        c.consumer_heartbeat("g", Heartbeat("a", 0, rebalance_timeout_ms=1000, subscribed_topic_names=("t",),
                                            owned=frozenset()))
        clock.advance(CONSUMER_SESSION_MS - 1)
        c.tick()
        assert "a" in c.consumer_groups.get("g").members
        clock.advance(1)
        c.tick()
        assert not c.consumer_groups.get("g").members, "removed at group.consumer.session.timeout.ms"
    asyncio.run(scenario())


def test_the_wall_clock_stamps_the_state_change_not_the_monotonic_one():
    async def scenario() -> None:
        clock = ManualClock(monotonic_ms=0, wall_ms=1_800_000_000_000)
        c = coordinator(clock)
        await stable_member(c, "g")
        clock.advance(SESSION_MS)
        c.tick()
        assert c.groups["g"].state_timestamp_ms == 1_800_000_000_000 + SESSION_MS
    asyncio.run(scenario())
