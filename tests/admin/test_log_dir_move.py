"""A replica's move to another log directory, step by step and without sockets: the future
log fills batch by batch (its lag shrinks), then takes the current log's place."""

from __future__ import annotations

from minikafka import records
from minikafka.config import BrokerConfig, TopicConfig
from minikafka.log import PartitionLog
from minikafka.metadata import PartitionInfo
from minikafka.replica.log_dir_move import LogDirMove
from minikafka.replica.partition import Partition


def batch(value: bytes) -> bytes:
    return records.build_batch([records.Record(0, 1000, b"k", value)])


def test_the_future_log_catches_up_then_replaces_the_current_one(tmp_path):
    config = TopicConfig(BrokerConfig(), {})
    part = Partition("orders", PartitionInfo(0, [1], 1, [1]), PartitionLog(tmp_path / "a" / "orders-0", config,
                                                                             topic="orders"), config, 1)
    for i in range(3):
        part.append_batches([batch(b"v%d" % i)])
    move = LogDirMove(part, tmp_path / "b")
    assert move.lag == 3 and move.path.name.startswith("orders-0.") and move.path.name.endswith("-future")
    assert not move.copy_some(max_bytes=1)  # one whole batch per step at least
    assert move.lag == 2 and move.size_bytes() > 0
    part.append_batches([batch(b"v3")])  # the replica keeps taking writes meanwhile
    assert move.lag == 3
    move.finish()
    assert part.log.directory == tmp_path / "b" / "orders-0" and not (tmp_path / "a" / "orders-0").exists()
    values = [r.value for _, b in part.log.batches(0) for r in records.iter_records(b)]
    assert values == [b"v0", b"v1", b"v2", b"v3"] and part.high_watermark == 4
    part.append_batches([batch(b"v4")])
    assert part.log_end_offset == 5
