"""Acquisition locks and share sessions on the broker's injected clock (``minikafka.clock``).

A record a member acquired stays its own for ``group.share.record.lock.duration.ms`` and
becomes available to the others exactly then, not a millisecond before (KIP-932); a share
group member is removed exactly when ``group.share.session.timeout.ms`` has passed. The
broker runs on a ``ManualClock`` and the timers are run by hand: nothing sleeps.
"""

from __future__ import annotations

from typing import Any

from minikafka.clock import ManualClock
from minikafka.assembly import DirectBroker
from minikafka.share.group import Heartbeat
from tests.share.test_share_v2 import LOCK_MS, acquired, run, share_fetch, states
from tests.share.test_sessions_and_groups import coordinator

ACQUIRED, AVAILABLE = dict.fromkeys(range(5), "Acquired"), dict.fromkeys(range(5), "Available")


def test_a_record_lock_expires_exactly_at_the_lock_duration_and_another_member_gets_it():
    async def check(broker: DirectBroker, clock: ManualClock) -> tuple[Any, ...]:
        manager = broker.broker.share_partitions
        taken = acquired(await broker.call(share_fetch(2, broker, 1, max_records=5)))
        deadline = manager.next_lock_deadline()
        clock.advance(LOCK_MS - 1)
        early = manager.expire_locks(), states(broker)
        refused = acquired(await broker.call(share_fetch(2, broker, 0, max_records=5, member="m2")))
        clock.advance(1)
        late = manager.expire_locks(), states(broker)
        redelivered = acquired(await broker.call(share_fetch(2, broker, 1, max_records=5, member="m2")))
        return taken, deadline, early, refused, late, redelivered

    taken, deadline, early, refused, late, redelivered = run(check)
    assert taken == [(0, 4, 1)] and deadline == 1_000_000 + LOCK_MS
    assert early == (0, ACQUIRED) and refused == [], "a millisecond before the lock duration: still m1's"
    assert late == (5, AVAILABLE)
    assert redelivered == [(0, 4, 2)], "another member gets them, delivered a second time"


def test_a_share_member_expires_exactly_at_the_share_session_timeout():
    clock = ManualClock()
    c = coordinator(clock=clock)
    c.heartbeat("g", Heartbeat("m", 0, ("orders",)))
    timeout = c.group_config("g")["share.session.timeout.ms"]
    clock.advance(timeout - 1)
    assert c.expire_members() == []
    clock.advance(1)
    assert c.expire_members() == [("g", "m")]
