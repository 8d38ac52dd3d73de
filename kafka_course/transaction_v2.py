"""A transactional producer that speaks transaction protocol v2 (KIP-890 part 2), as the Java
client 4.x does: plumbing for notebook 08, because no Python client speaks it yet
(confluent-kafka and kafka-python use the classic protocol, v1).

Under v2 the producer never sends AddPartitionsToTxn: its first Produce (v12 or later) to a
partition is enough, and the partition leader adds the partition to the transaction itself.
Every EndTxn (v5) ends the transaction with a bumped producer epoch, which the commit or abort
markers carry and the answer hands back; the producer's next transaction uses it, starting
its sequence numbers at 0 again. A late write of an older transaction still carries the old
epoch, so the partition refuses it.

Requests are encoded with ``kio`` over a plain socket (``tools.wire``), to the transaction
coordinator (FindCoordinator) and to each partition's leader (Metadata through the
AdminClient), so this works on minikafka and on a Kafka 4 cluster that finalizes
``transaction.version`` 2. It keeps the requests it sent in ``sent``: what a network trace of
a Java producer would show.
"""

from __future__ import annotations

import datetime
import time
from dataclasses import dataclass
from typing import Any

from confluent_kafka.admin import AdminClient

from minikafka.api import ErrorCode, Record, build_batch, codec

from .tools.wire import Connection, WireError

PRODUCE, FIND_COORDINATOR, INIT_PRODUCER_ID, END_TXN = 0, 10, 22, 26
PRODUCE_V2, END_TXN_V2 = 12, 5  # the first versions of transaction protocol v2
RETRIABLE = {ErrorCode.coordinator_load_in_progress, ErrorCode.coordinator_not_available,
             ErrorCode.concurrent_transactions, ErrorCode.not_enough_replicas, ErrorCode.request_timed_out,
             ErrorCode.not_leader_or_follower, ErrorCode.leader_not_available}
RETRY_FOR_S = 15.0


@dataclass(frozen=True)
class Write:
    """One Produce request as sent: enough to send it again, late."""
    topic: str
    partition: int
    batch: bytes
    epoch: int


class TransactionV2Producer:
    """``init_transactions``, ``produce``, ``commit_transaction``/``abort_transaction`` at protocol v2."""

    def __init__(self, bootstrap: str, transactional_id: str, timeout_ms: int = 60_000):
        self.bootstrap, self.transactional_id, self.timeout_ms = bootstrap, transactional_id, timeout_ms
        self.producer_id, self.epoch = -1, -1
        self.sent: list[str] = []  # "Produce v12", "EndTxn v5", ...: the requests, in order
        self.writes: list[Write] = []  # the Produce requests of every transaction, in order
        self._sequences: dict[tuple[str, int], int] = {}
        self._admin = AdminClient({"bootstrap.servers": bootstrap})
        self._coordinator_address: tuple[str, int] | None = None

    # -- the producer's calls ---------------------------------------------------------------
    def init_transactions(self) -> tuple[int, int]:
        """InitProducerId: the producer id and epoch (fences an older instance of the id)."""
        answer = self._at_coordinator(INIT_PRODUCER_ID, 5, transactional_id=self.transactional_id,
                                      transaction_timeout=datetime.timedelta(milliseconds=self.timeout_ms),
                                      producer_id=-1, producer_epoch=-1)
        self._new_epoch(int(answer.producer_id), int(answer.producer_epoch))
        return self.producer_id, self.epoch

    def produce(self, topic: str, partition: int, value: bytes | str, key: bytes | str | None = None) -> str:
        """One record in the open transaction (the first write opens it): Kafka's error name, ``NONE`` when written."""
        sequence = self._sequences.get((topic, partition), 0)
        batch = build_batch([Record(0, int(time.time() * 1000), _bytes(key), _bytes(value))],
                            producer_id=self.producer_id, producer_epoch=self.epoch, base_sequence=sequence,
                            transactional=True)
        write = Write(topic, partition, batch, self.epoch)
        code = self._send_write(write)
        if code == ErrorCode.none:
            self._sequences[topic, partition] = sequence + 1
            self.writes.append(write)
        return code.name.upper()

    def commit_transaction(self) -> tuple[int, int]:
        """EndTxn v5 (commit): the producer id and the bumped epoch for the next transaction."""
        return self._end(commit=True)

    def abort_transaction(self) -> tuple[int, int]:
        """EndTxn v5 (abort): the producer id and the bumped epoch for the next transaction."""
        return self._end(commit=False)

    def send_late(self, write: Write) -> str:
        """Send an earlier Produce request again, unchanged: a retry that arrives late. The error name."""
        return self._send_write(write).name.upper()

    # -- plumbing ---------------------------------------------------------------------------
    def _end(self, commit: bool) -> tuple[int, int]:
        answer = self._at_coordinator(END_TXN, END_TXN_V2, transactional_id=self.transactional_id,
                                      producer_id=self.producer_id, producer_epoch=self.epoch, committed=commit)
        self._new_epoch(int(answer.producer_id), int(answer.producer_epoch))
        return self.producer_id, self.epoch

    def _new_epoch(self, producer_id: int, epoch: int) -> None:
        self.producer_id, self.epoch = producer_id, epoch
        self._sequences.clear()  # a new epoch (or id) starts every partition's sequence at 0

    def _send_write(self, write: Write) -> Any:
        host, port = self._leader(write.topic, write.partition)
        module = codec.request_module(PRODUCE, PRODUCE_V2)

        def once(conn: Connection) -> Any:
            data = module.TopicProduceData(name=write.topic, partition_data=(
                module.PartitionProduceData(index=write.partition, records=write.batch),))
            answer = self._request(conn, PRODUCE, PRODUCE_V2, transactional_id=self.transactional_id, acks=-1,
                                   timeout=datetime.timedelta(seconds=10), topic_data=(data,))
            code = answer.responses[0].partition_responses[0].error_code
            if code in RETRIABLE:
                raise _Retry(code)
            return code
        return _retrying(host, port, once)

    def _at_coordinator(self, api_key: int, version: int, **fields: Any) -> Any:
        host, port = self._coordinator()
        return _retrying(host, port, lambda conn: self._checked(self._request(conn, api_key, version, **fields)))

    def _coordinator(self) -> tuple[str, int]:
        if self._coordinator_address is None:
            self._coordinator_address = self._find_coordinator()
        return self._coordinator_address

    def _find_coordinator(self) -> tuple[str, int]:
        host, port = self.bootstrap.split(",")[0].strip().rsplit(":", 1)

        def once(conn: Connection) -> Any:
            answer = self._request(conn, FIND_COORDINATOR, 4, key_type=1, coordinator_keys=(self.transactional_id,))
            return self._checked(answer.coordinators[0])
        found = _retrying(host, int(port), once)
        return found.host, int(found.port)

    def _leader(self, topic: str, partition: int) -> tuple[str, int]:
        metadata = self._admin.list_topics(topic, timeout=10)
        broker = metadata.brokers[metadata.topics[topic].partitions[partition].leader]
        return str(broker.host), int(broker.port)

    def _request(self, conn: Connection, api_key: int, version: int, **fields: Any) -> Any:
        if conn.version(api_key, version) != version:
            raise WireError(f"the broker does not speak API {api_key} v{version}, which transaction protocol v2 needs")
        self.sent.append(f"{codec.request_class(api_key, version).__name__.removesuffix('Request')} v{version}")
        return conn.request(api_key, version, **fields)

    @staticmethod
    def _checked(answer: Any) -> Any:
        if answer.error_code != ErrorCode.none:
            raise _Retry(answer.error_code) if answer.error_code in RETRIABLE else WireError(
                f"{ErrorCode(answer.error_code).name}: {getattr(answer, 'error_message', None) or ''}".rstrip(": "))
        return answer


class _Retry(Exception):
    def __init__(self, code: Any):
        super().__init__(code)
        self.code = code


def _retrying(host: str, port: int, once: Any) -> Any:
    """``once(conn)`` until it raises no ``_Retry``, as a client retries retriable errors (a
    coordinator still loading, a transaction whose markers are still being written)."""
    deadline = time.monotonic() + RETRY_FOR_S
    while True:
        with Connection(host, port) as conn:
            try:
                return once(conn)
            except _Retry as retry:
                if time.monotonic() >= deadline:
                    raise WireError(f"{ErrorCode(retry.code).name} for {RETRY_FOR_S:.0f} s") from None
        time.sleep(0.1)


def _bytes(value: bytes | str | None) -> bytes | None:
    return value.encode() if isinstance(value, str) else value
