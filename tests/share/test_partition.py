"""The share-partition state machine of KIP-932, without a log or a socket: acquisition
locks on an injected clock, delivery counts, accept/release/reject, and the start and
end offsets (SPSO, SPEO)."""

from __future__ import annotations

import pytest

from minikafka.clock import ManualClock
from minikafka.errors import ErrorCode, KafkaError
from minikafka.share.partition import Acquired, AckBatch, SharePartition
from minikafka.share.states import TRANSITIONS, AckType, IllegalTransition, RecordState, next_state

ACCEPT, RELEASE, REJECT, GAP = AckType.ACCEPT, AckType.RELEASE, AckType.REJECT, AckType.GAP
LOCK_MS = 1000


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def share(clock, start=0, limit=5, locks=2000) -> SharePartition:
    return SharePartition(start, delivery_count_limit=limit, max_record_locks=locks, clock=clock)


def ack(first, last, *types) -> AckBatch:
    return AckBatch(first, last, tuple(int(t) for t in types))


def states(sp: SharePartition) -> dict[int, tuple[str, int]]:
    return {o: (str(r.state), r.delivery_count) for o, r in sorted(sp.records.items())}


def test_new_records_are_acquired_by_one_member_and_move_the_end_offset(clock):
    sp = share(clock)
    assert sp.acquire("a", [(0, 2), (3, 3)], 10, LOCK_MS) == [Acquired(0, 3, 1)]
    assert (sp.start_offset, sp.end_offset) == (0, 4)
    assert sp.acquire("b", [(0, 2), (3, 3)], 10, LOCK_MS) == [], "a locked record goes to nobody else"
    assert all(r.member_id == "a" for r in sp.records.values())


def test_accepted_records_move_the_start_offset_past_them(clock):
    sp = share(clock)
    sp.acquire("a", [(0, 4)], 10, LOCK_MS)
    sp.acknowledge("a", [ack(0, 1, ACCEPT), ack(3, 3, ACCEPT)])
    assert sp.start_offset == 2, "offset 2 is still acquired: the start offset waits for it"
    assert states(sp) == {2: ("Acquired", 1), 3: ("Acknowledged", 1), 4: ("Acquired", 1)}
    sp.acknowledge("a", [ack(2, 2, ACCEPT), ack(4, 4, ACCEPT)])
    assert (sp.start_offset, sp.end_offset, sp.records) == (5, 5, {})


def test_a_released_record_is_delivered_again_with_its_delivery_count_increased(clock):
    sp = share(clock)
    sp.acquire("a", [(0, 1)], 10, LOCK_MS)
    sp.acknowledge("a", [ack(0, 1, ACCEPT, RELEASE)])
    assert states(sp) == {1: ("Available", 1)}
    assert sp.next_fetch_offset() == 1
    assert sp.acquire("b", [(0, 1)], 10, LOCK_MS) == [Acquired(1, 1, 2)]
    assert sp.records[1].member_id == "b"


def test_a_lock_that_runs_out_makes_the_record_available_to_others(clock):
    sp = share(clock)
    sp.acquire("a", [(0, 0)], 10, LOCK_MS)
    assert sp.next_lock_deadline() == LOCK_MS
    clock.advance(LOCK_MS - 1)
    assert sp.expire_locks() == 0, "not a millisecond before the lock duration"
    clock.advance(1)
    assert sp.expire_locks() == 1
    assert sp.acquire("b", [(0, 0)], 10, LOCK_MS) == [Acquired(0, 0, 2)]
    with pytest.raises(KafkaError) as e:
        sp.acknowledge("a", [ack(0, 0, ACCEPT)])
    assert e.value.code == ErrorCode.invalid_record_state, "a's lock is gone: its late accept is refused"


def test_reject_and_gap_archive_the_record_for_good(clock):
    sp = share(clock)
    sp.acquire("a", [(0, 1)], 10, LOCK_MS)
    sp.acknowledge("a", [ack(0, 1, REJECT, GAP)])
    assert (sp.start_offset, sp.records) == (2, {})
    assert sp.acquire("a", [(0, 1)], 10, LOCK_MS) == []


def test_the_delivery_count_limit_archives_a_record_instead_of_offering_it_again(clock):
    sp = share(clock, limit=2)
    sp.acquire("a", [(0, 1)], 10, LOCK_MS)
    sp.acknowledge("a", [ack(0, 0, RELEASE), ack(1, 1, ACCEPT)])
    assert sp.acquire("a", [(0, 1)], 10, LOCK_MS) == [Acquired(0, 0, 2)]
    clock.advance(LOCK_MS)  # the second delivery times out: that was the last one allowed
    sp.expire_locks()
    assert (sp.start_offset, sp.records) == (2, {}), "archived at delivery count 2"


def test_an_acknowledgement_of_a_record_not_held_changes_nothing(clock):
    sp = share(clock)
    sp.acquire("a", [(0, 1)], 10, LOCK_MS)
    for batches in ([ack(0, 1, ACCEPT)], [ack(0, 0, ACCEPT), ack(5, 5, ACCEPT)]):
        with pytest.raises(KafkaError) as e:
            sp.acknowledge("b" if len(batches) == 1 else "a", batches)
        assert e.value.code == ErrorCode.invalid_record_state
    assert states(sp) == {0: ("Acquired", 1), 1: ("Acquired", 1)}, "all or nothing"


def test_an_acknowledgement_outside_the_window_is_refused_without_walking_it(clock):
    sp = share(clock)
    sp.acquire("a", [(0, 1)], 10, LOCK_MS)
    with pytest.raises(KafkaError) as e:
        sp.acknowledge("a", [ack(0, 2**62, ACCEPT)])  # would take forever offset by offset
    assert e.value.code == ErrorCode.invalid_record_state


@pytest.mark.parametrize("batch", [ack(1, 0, ACCEPT), ack(0, 1, ACCEPT, ACCEPT, ACCEPT), ack(0, 0, 7), ack(0, 0)])
def test_a_malformed_acknowledgement_is_an_invalid_request(clock, batch):
    sp = share(clock)
    sp.acquire("a", [(0, 1)], 10, LOCK_MS)
    with pytest.raises(KafkaError) as e:
        sp.acknowledge("a", [batch])
    assert e.value.code == ErrorCode.invalid_request


def test_whole_batches_are_acquired_even_past_max_records(clock):
    sp = share(clock)
    assert sp.acquire("a", [(0, 4), (5, 9)], 1, LOCK_MS) == [Acquired(0, 4, 1)]
    assert sp.acquire("b", [(5, 9)], 3, LOCK_MS) == [Acquired(5, 9, 1)]


def test_the_in_flight_window_is_bounded_by_max_record_locks(clock):
    sp = share(clock, locks=3)
    assert sp.acquire("a", [(0, 9)], 100, LOCK_MS) == [Acquired(0, 2, 1)]
    sp.acknowledge("a", [ack(0, 0, ACCEPT)])
    assert sp.acquire("b", [(3, 9)], 100, LOCK_MS) == [Acquired(3, 3, 1)]


def test_available_records_are_redelivered_before_new_ones_and_runs_split_by_count(clock):
    sp = share(clock)
    sp.acquire("a", [(0, 2)], 10, LOCK_MS)
    sp.acknowledge("a", [ack(0, 2, RELEASE, ACCEPT, RELEASE)])
    assert sp.next_fetch_offset() == 0
    assert sp.acquire("b", [(0, 2), (3, 4)], 10, LOCK_MS) == [Acquired(0, 0, 2), Acquired(2, 2, 2),
                                                             Acquired(3, 4, 1)]


def test_offsets_missing_between_batches_are_skipped(clock):
    sp = share(clock)
    assert sp.acquire("a", [(0, 1), (5, 6)], 10, LOCK_MS) == [Acquired(0, 1, 1), Acquired(5, 6, 1)]
    sp.acknowledge("a", [ack(0, 1, ACCEPT)])
    assert sp.start_offset == 5, "offsets 2-4 are not in the log (compacted): nothing waits for them"


def test_a_member_that_leaves_releases_what_it_holds(clock):
    sp = share(clock)
    sp.acquire("a", [(0, 1)], 10, LOCK_MS)
    sp.acquire("b", [(2, 2)], 10, LOCK_MS)
    assert sp.release_member("a") == 2
    assert states(sp) == {0: ("Available", 1), 1: ("Available", 1), 2: ("Acquired", 1)}


def test_retention_moves_the_start_offset_to_the_log_start(clock):
    sp = share(clock)
    sp.acquire("a", [(0, 4)], 10, LOCK_MS)
    sp.move_start_to(3)
    assert (sp.start_offset, sorted(sp.records)) == (3, [3, 4])
    sp.move_start_to(10)
    assert (sp.start_offset, sp.end_offset, sp.records) == (10, 10, {})


def test_a_snapshot_restores_everything_but_the_locks(clock):
    sp = share(clock, start=10)
    sp.acquire("a", [(10, 14)], 10, LOCK_MS)
    sp.acknowledge("a", [ack(10, 12, RELEASE, ACCEPT, REJECT)])
    snapshot = sp.snapshot()
    assert snapshot["batches"] == [[10, 10, 0, 1], [11, 11, 2, 1], [12, 12, 4, 1], [13, 14, 0, 1]]
    back = SharePartition.restore(snapshot, clock=clock)
    assert (back.start_offset, back.end_offset) == (10, 15)
    assert states(back) == {10: ("Available", 1), 11: ("Acknowledged", 1), 12: ("Archived", 1),
                            13: ("Available", 1), 14: ("Available", 1)}
    assert back.state_epoch == sp.state_epoch + 1
    assert back.acquire("b", [(10, 14)], 10, LOCK_MS) == [Acquired(10, 10, 2), Acquired(13, 14, 2)]


def test_the_transition_table_allows_only_kafkas_moves():
    assert next_state(RecordState.ACQUIRED, "accept") is RecordState.ACKNOWLEDGED
    with pytest.raises(IllegalTransition):
        next_state(RecordState.AVAILABLE, "accept")
    with pytest.raises(IllegalTransition):
        next_state(RecordState.ARCHIVED, "acquire")
    assert {dst for _, _, dst in TRANSITIONS} == set(RecordState)
    assert [s.value for s in RecordState] == [0, 1, 2, 4], "Kafka's RecordState numbers"
