"""The one shape of state machine the coordinators share (``minikafka.state_table``)."""

from __future__ import annotations

import pytest

from minikafka.groups import states as group_states
from minikafka.groups.consumer import states as member_states
from minikafka.share import states as share_states
from minikafka.state_table import IllegalTransition, StateTable
from minikafka.transactions import states as txn_states


def test_a_table_moves_by_its_rows_and_refuses_the_rest():
    table = StateTable("a door", (("shut", "open", "open"), ("open", "close", "shut")), {"open": "", "close": ""})
    assert table.next("shut", "open") == "open"
    assert table.allows("open", "shut") and not table.allows("shut", "shut")
    with pytest.raises(IllegalTransition, match="a door in state shut cannot take event 'close'"):
        table.next("shut", "close")
    with pytest.raises(IllegalTransition, match="cannot move to shut"):
        table.check("shut", "shut")
    assert list(table) == list(table.rows) and len(table) == 2


def test_a_table_refuses_two_destinations_for_one_event_and_undocumented_events():
    with pytest.raises(ValueError, match="one state only"):
        StateTable("x", (("a", "go", "b"), ("a", "go", "c")))
    with pytest.raises(ValueError, match="documented"):
        StateTable("x", (("a", "go", "b"),), {"stop": "never used"})


@pytest.mark.parametrize("table", [group_states.TABLE, member_states.MEMBER_TABLE, share_states.TABLE,
                                   txn_states.TABLE])
def test_every_coordinator_keeps_its_rules_in_a_state_table(table):
    assert isinstance(table, StateTable) and len(table) > 0


def test_the_old_names_ask_the_table():
    assert group_states.next_state(group_states.EMPTY, "join") is group_states.PREPARING
    assert share_states.next_state(share_states.RecordState.AVAILABLE, "acquire") is share_states.RecordState.ACQUIRED
    txn_states.check(txn_states.TxnState.ONGOING, txn_states.TxnState.PREPARE_COMMIT)
    with pytest.raises(IllegalTransition):
        txn_states.check(txn_states.TxnState.EMPTY, txn_states.TxnState.COMPLETE_COMMIT)


def test_a_member_still_waiting_for_a_partition_may_keep_waiting():
    unreleased = member_states.MemberState.UNRELEASED_PARTITIONS
    assert member_states.MEMBER_TABLE.next(unreleased, "still_owned") is unreleased
