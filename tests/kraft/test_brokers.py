"""Brokers register with the quorum and heartbeat; silence fences them (KIP-631)."""

from __future__ import annotations

import pytest

from minikafka.errors import ErrorCode
from minikafka.kraft.records import FENCE_BROKER, REGISTER_BROKER, UNFENCE_BROKER

from .quorum import Quorum, wait_until

SESSION_MS = 1500


@pytest.fixture
def quorum(tmp_path):
    q = Quorum(tmp_path, extra=("--broker-session-timeout-ms", str(SESSION_MS))).start()
    yield q
    q.stop()


def test_a_registration_is_replicated_to_every_controller_and_followers_say_not_controller(quorum):
    leader, _ = wait_until("a leader", lambda: quorum.leader())
    follower = next(n for n in quorum.ports if n != leader)
    assert quorum.register(follower, broker_id=7).error_code == ErrorCode.not_controller
    answer = quorum.register(leader, broker_id=7)
    assert answer.error_code == ErrorCode.none and answer.broker_epoch > 0
    for n in quorum.ports:
        found = wait_until(
            f"controller {n} has the registration",
            lambda n=n: [r for r in quorum.records(n) if r.type == REGISTER_BROKER],
        )
        assert [(r.data["brokerId"], r.data["brokerEpoch"], r.offset) for r in found] == [
            (7, answer.broker_epoch, answer.broker_epoch)
        ]
    beat = quorum.heartbeat(follower, 7, answer.broker_epoch)
    assert beat.error_code == ErrorCode.not_controller
    assert quorum.heartbeat(leader, 8, 1).error_code == ErrorCode.broker_id_not_registered
    assert quorum.heartbeat(leader, 7, answer.broker_epoch + 1).error_code == ErrorCode.stale_broker_epoch


def test_a_broker_whose_heartbeats_stop_is_fenced_and_unfenced_when_they_resume(quorum):
    leader, _ = wait_until("a leader", lambda: quorum.leader())
    epoch = quorum.register(leader, broker_id=9).broker_epoch
    assert quorum.heartbeat(leader, 9, epoch).is_fenced  # new brokers start fenced
    wait_until("the broker is unfenced", lambda: not quorum.heartbeat(leader, 9, epoch, epoch).is_fenced)
    changes = wait_until(
        "a committed FenceBrokerRecord after the heartbeats stop",
        lambda: (
            c := [r for r in quorum.records(leader) if r.type in (FENCE_BROKER, UNFENCE_BROKER)],
            c[-1:] and c[-1].type == FENCE_BROKER and quorum.describe(leader).high_watermark > c[-1].offset and c,
        )[1],
        timeout=SESSION_MS / 1000 + 5,
    )
    assert [r.type for r in changes] == [UNFENCE_BROKER, FENCE_BROKER]
    assert quorum.heartbeat(leader, 9, epoch, epoch).is_fenced  # the fence is committed: this beat sees it
    wait_until("unfenced again", lambda: not quorum.heartbeat(leader, 9, epoch, epoch).is_fenced)
