"""The five transaction handlers alone (issue 27): each gets a ``Caller`` and a fake
``TransactionsPort`` (a tiny class below), never a broker, a socket or a Cluster.

A request is built at the version a client would send and lifted as dispatch lifts it
(``dispatch.lift``), so each test also checks the answer fits that version.
"""

from __future__ import annotations

import asyncio
import datetime
import importlib
from typing import Any

import pytest

from minikafka.broker import Broker
from minikafka.errors import ErrorCode, KafkaError
from minikafka.handlers import (
    add_offsets_to_txn,
    add_partitions_to_txn,
    describe_transactions,
    end_txn,
    init_producer_id,
    registry,
    txn_offset_commit,
)
from minikafka.handlers.dispatch import lift
from minikafka.handlers.ports import Caller, TransactionsPort, TxnOffset
from minikafka.security.acl import Operation, ResourceType
from minikafka.transactions.txnlog import TxnMetadata, TxnState
from tests.fake_authorizer import Acls
from tests.port_checks import assert_provides

FENCED = KafkaError(ErrorCode.producer_fenced, "a newer producer with this transactional id exists")


class FakeTransactions:
    """A TransactionsPort that records each call and raises ``error`` (or per-partition ``refused``)."""

    def __init__(self, error: KafkaError | None = None, refused: dict[tuple[str, int], ErrorCode] | None = None):
        self.error, self.refused, self.calls = error, refused or {}, list[tuple[str, tuple[Any, ...]]]()

    def _call(self, name: str, *args: Any) -> None:
        self.calls.append((name, args))
        if self.error is not None:
            raise self.error

    async def init_producer_id(self, transactional_id: str | None, timeout_ms: int, producer_id: int,
                               producer_epoch: int) -> tuple[int, int]:
        self._call("init_producer_id", transactional_id, timeout_ms)
        return 42, 7

    async def add_partitions_to_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                            partitions: list[tuple[str, int]]) -> None:
        self._call("add_partitions", transactional_id, sorted(partitions))

    async def add_offsets_to_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                         group_id: str) -> None:
        self._call("add_offsets", transactional_id, group_id)

    async def end_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool,
                              bump_epoch: bool) -> tuple[int, int]:
        self._call("end", commit, bump_epoch)
        return producer_id, producer_epoch + 1 if bump_epoch else producer_epoch

    def verify_transaction_producer(self, transactional_id: str, producer_id: int, producer_epoch: int) -> None:
        self._call("verify_producer", transactional_id)

    def verify_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int, topic: str,
                           index: int) -> None:
        if (topic, index) in self.refused:
            raise KafkaError(self.refused[topic, index])

    async def commit_transaction_offsets(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                         group_id: str, member_id: str, instance_id: str | None, generation_id: int,
                                         offsets: list[TxnOffset], may_add: bool) -> dict[tuple[str, int], ErrorCode]:
        self._call("commit", group_id, may_add, offsets)
        return {(t, p): ErrorCode.none for t, p, *_ in offsets}

    def describe_transaction(self, transactional_id: str) -> TxnMetadata:
        self._call("describe", transactional_id)
        if transactional_id != "t":
            raise KafkaError(ErrorCode.transactional_id_not_found)
        return TxnMetadata("t", producer_id=5, producer_epoch=3, timeout_ms=60_000, state=TxnState.PREPARE_COMMIT,
                           partitions={("b", 0), ("a", 1), ("a", 0)}, start_ms=1_700_000_000_000)




def kio(api: str, version: int, name: str) -> Any:
    return getattr(importlib.import_module(f"kio.schema.{api}.v{version}.request"), name)


def run(handler: Any, api_key: int, version: int, request: Any, authorizer: Any = None) -> Any:
    caller = Caller(api_key, version, client_id="test", principal="User:alice", authorizer=authorizer)
    return asyncio.run(handler.handle(caller, lift(api_key, request)))


def test_broker_provides_the_transactions_port():
    """Structurally: every method of the port, same parameters (mypy checks the types in dispatch,
    where ``PortHandler.make(broker)`` takes a ``Ports``), and the fake is one too."""
    assert_provides(TransactionsPort, Broker, FakeTransactions)
    port: TransactionsPort = FakeTransactions()
    assert port is not None


def test_the_registry_builds_the_transaction_handlers_from_ports():
    for key in (22, 24, 25, 26, 28, 65):
        row = registry.HANDLERS[key]
        assert isinstance(row, registry.PortHandler)
        assert isinstance(row.make(FakeTransactions()), row.make)  # type: ignore[arg-type]


# -- InitProducerId ------------------------------------------------------------------------------

def init_request(version: int, tid: str | None) -> Any:
    return kio("init_producer_id", version, "InitProducerIdRequest")(
        transactional_id=tid, transaction_timeout=datetime.timedelta(seconds=60))


@pytest.mark.parametrize(("version", "code"), [(2, ErrorCode.invalid_producer_epoch), (3, ErrorCode.producer_fenced)])
def test_init_producer_id_says_fenced_as_the_version_understands(version, code):
    answer = run(init_producer_id.InitProducerId(FakeTransactions(FENCED)), 22, version, init_request(version, "t"))
    assert (answer.error_code, answer.producer_id, answer.producer_epoch) == (code, -1, -1)


def test_init_producer_id_hands_out_the_ports_id_for_idempotent_and_transactional_producers():
    port = FakeTransactions()
    for tid in (None, "t"):
        answer = run(init_producer_id.InitProducerId(port), 22, 2, init_request(2, tid))
        assert (answer.error_code, answer.producer_id, answer.producer_epoch) == (ErrorCode.none, 42, 7)
    assert port.calls == [("init_producer_id", (None, 60_000)), ("init_producer_id", ("t", 60_000))]


# -- EndTxn --------------------------------------------------------------------------------------

def end_request(version: int) -> Any:
    return kio("end_txn", version, "EndTxnRequest")(transactional_id="t", producer_id=5, producer_epoch=3,
                                                    committed=True)


@pytest.mark.parametrize(("version", "bumped"), [(4, False), (5, True)])
def test_end_txn_bumps_the_epoch_from_v5(version, bumped):
    port = FakeTransactions()
    answer = run(end_txn.EndTxn(port), 26, version, end_request(version))
    assert port.calls == [("end", (True, bumped))]
    assert answer.error_code == ErrorCode.none
    if version >= 5:  # the producer id and epoch to go on with are in the answer from v5
        assert (answer.producer_id, answer.producer_epoch) == (5, 4)


@pytest.mark.parametrize(("version", "code"), [(1, ErrorCode.invalid_producer_epoch), (2, ErrorCode.producer_fenced)])
def test_end_txn_says_fenced_as_the_version_understands(version, code):
    assert run(end_txn.EndTxn(FakeTransactions(FENCED)), 26, version, end_request(version)).error_code == code


# -- AddOffsetsToTxn -----------------------------------------------------------------------------

@pytest.mark.parametrize(("version", "error", "code"), [(1, FENCED, ErrorCode.invalid_producer_epoch),
                                                         (2, FENCED, ErrorCode.producer_fenced),
                                                         (3, None, ErrorCode.none)])
def test_add_offsets_to_txn(version, error, code):
    request = kio("add_offsets_to_txn", version, "AddOffsetsToTxnRequest")(
        transactional_id="t", producer_id=5, producer_epoch=3, group_id="g")
    port = FakeTransactions(error)
    assert run(add_offsets_to_txn.AddOffsetsToTxn(port), 25, version, request).error_code == code
    assert port.calls == [("add_offsets", ("t", "g"))]


# -- AddPartitionsToTxn --------------------------------------------------------------------------

def producer_request(version: int) -> Any:
    topic = kio("add_partitions_to_txn", version, "AddPartitionsToTxnTopic")
    return kio("add_partitions_to_txn", version, "AddPartitionsToTxnRequest")(
        v3_and_below_transactional_id="t", v3_and_below_producer_id=5, v3_and_below_producer_epoch=3,
        v3_and_below_topics=(topic(name="a", partitions=(0, 1)), topic(name="b", partitions=(0,))))


def codes(answer: Any) -> dict[tuple[str, int], ErrorCode]:
    return {(t.name, p.partition_index): p.partition_error_code for t in answer.results_by_topic_v3_and_below
            for p in t.results_by_partition}


def test_add_partitions_to_txn_refuses_a_topic_without_write_and_attempts_none():
    port = FakeTransactions()
    answer = run(add_partitions_to_txn.AddPartitionsToTxn(port), 24, 3, producer_request(3),
                 Acls((Operation.WRITE, ResourceType.TOPIC, "a")))
    assert codes(answer) == {("a", 0): ErrorCode.operation_not_attempted, ("a", 1): ErrorCode.operation_not_attempted,
                             ("b", 0): ErrorCode.topic_authorization_failed}
    assert port.calls == []


@pytest.mark.parametrize(("version", "code"), [(1, ErrorCode.invalid_producer_epoch), (2, ErrorCode.producer_fenced)])
def test_add_partitions_to_txn_says_fenced_as_the_version_understands(version, code):
    port = FakeTransactions(FENCED)
    answer = run(add_partitions_to_txn.AddPartitionsToTxn(port), 24, version, producer_request(version))
    assert set(codes(answer).values()) == {code}
    assert port.calls == [("add_partitions", ("t", [("a", 0), ("a", 1), ("b", 0)]))]


def batched_request(verify_only: bool) -> Any:
    topic, txn = (kio("add_partitions_to_txn", 5, n) for n in ("AddPartitionsToTxnTopic",
                                                                "AddPartitionsToTxnTransaction"))
    return kio("add_partitions_to_txn", 5, "AddPartitionsToTxnRequest")(transactions=(
        txn(transactional_id="t", producer_id=5, producer_epoch=3, verify_only=verify_only,
            topics=(topic(name="a", partitions=(0, 1)),)),))


def test_add_partitions_to_txn_v4_needs_cluster_action():
    answer = run(add_partitions_to_txn.AddPartitionsToTxn(FakeTransactions()), 24, 5, batched_request(False),
                 Acls((Operation.WRITE, ResourceType.TOPIC, "a")))
    assert (answer.error_code, answer.results_by_transaction) == (ErrorCode.cluster_authorization_failed, ())


def test_add_partitions_to_txn_verify_only_answers_each_partition_and_adds_nothing():
    port = FakeTransactions(refused={("a", 1): ErrorCode.invalid_txn_state})
    answer = run(add_partitions_to_txn.AddPartitionsToTxn(port), 24, 5, batched_request(True))
    [result] = answer.results_by_transaction
    assert [(p.partition_index, p.partition_error_code) for t in result.topic_results
            for p in t.results_by_partition] == [(0, ErrorCode.none), (1, ErrorCode.invalid_txn_state)]
    assert port.calls == [("verify_producer", ("t",))]


# -- TxnOffsetCommit -----------------------------------------------------------------------------

def commit_request(version: int) -> Any:
    partition, topic = (kio("txn_offset_commit", version, n) for n in ("TxnOffsetCommitRequestPartition",
                                                                       "TxnOffsetCommitRequestTopic"))
    return kio("txn_offset_commit", version, "TxnOffsetCommitRequest")(
        transactional_id="t", group_id="g", producer_id=5, producer_epoch=3,
        topics=(topic(name="a", partitions=(partition(partition_index=0, committed_offset=10,
                                                      committed_metadata=None),)),
                topic(name="b", partitions=(partition(partition_index=0, committed_offset=20,
                                                      committed_metadata="m"),))))


def offset_codes(answer: Any) -> dict[tuple[str, int], ErrorCode]:
    return {(t.name, p.partition_index): p.error_code for t in answer.topics for p in t.partitions}


@pytest.mark.parametrize(("version", "may_add"), [(4, False), (5, True)])
def test_txn_offset_commit_refuses_a_topic_without_read_and_commits_the_rest(version, may_add):
    port = FakeTransactions()
    answer = run(txn_offset_commit.TxnOffsetCommit(port), 28, version, commit_request(version),
                 Acls((Operation.READ, ResourceType.TOPIC, "b")))
    assert offset_codes(answer) == {("a", 0): ErrorCode.topic_authorization_failed, ("b", 0): ErrorCode.none}
    assert port.calls == [("commit", ("g", may_add, [("b", 0, 20, -1, "m")]))]


@pytest.mark.parametrize(("version", "code"), [(2, ErrorCode.invalid_producer_epoch), (3, ErrorCode.producer_fenced)])
def test_txn_offset_commit_says_fenced_as_the_version_understands(version, code):
    answer = run(txn_offset_commit.TxnOffsetCommit(FakeTransactions(FENCED)), 28, version, commit_request(version))
    assert set(offset_codes(answer).values()) == {code}


def test_txn_offset_commit_error_response_fails_every_partition():
    caller = Caller(28, 3)
    answer = txn_offset_commit.error_response(caller, lift(28, commit_request(3)), ErrorCode.group_authorization_failed)
    assert set(offset_codes(answer).values()) == {ErrorCode.group_authorization_failed}


# -- DescribeTransactions ------------------------------------------------------------------------

def describe_request(*ids: str) -> Any:
    return kio("describe_transactions", 0, "DescribeTransactionsRequest")(transactional_ids=ids)


def test_describe_transactions_shows_state_timeout_start_and_partitions_by_topic():
    port = FakeTransactions()
    [state] = run(describe_transactions.DescribeTransactions(port), 65, 0, describe_request("t")).transaction_states
    assert (state.error_code, state.transactional_id, state.transaction_state) == (ErrorCode.none, "t", "PrepareCommit")
    assert (state.producer_id, state.producer_epoch) == (5, 3)
    assert state.transaction_timeout == datetime.timedelta(seconds=60)
    assert state.transaction_start_time == datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=datetime.UTC)
    assert [(t.topic, t.partitions) for t in state.topics] == [("a", (0, 1)), ("b", (0,))]
    assert port.calls == [("describe", ("t",))]


def test_describe_transactions_answers_each_id_its_own_error_and_needs_describe_on_it():
    port = FakeTransactions()
    acls = Acls((Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, "gone"))
    states = run(describe_transactions.DescribeTransactions(port), 65, 0, describe_request("t", "gone"),
                 acls).transaction_states
    assert [(s.transactional_id, s.error_code, s.transaction_state, s.producer_id, s.topics) for s in states] == [
        ("t", ErrorCode.transactional_id_authorization_failed, "", -1, ()),
        ("gone", ErrorCode.transactional_id_not_found, "", -1, ())]
    assert port.calls == [("describe", ("gone",))]  # the refused id is not looked up
