"""The records of the metadata log: a small, clearly named set after Kafka's metadata records.

Kafka encodes each metadata record with its own generated schema (``RegisterBrokerRecord``,
``FenceBrokerRecord``, ``UnfenceBrokerRecord``, ...) behind a frame version and an api key.
kio has no classes for those schemas, so minikafka writes the same records, with Kafka's
names and fields, as a JSON value: ``{"type": "RegisterBrokerRecord", "data": {...}}``. The
batches around them are real Kafka record batches. A new leader's first record is the
control record Kafka writes there, LeaderChangeMessage (control type 2), here with a JSON
value as well.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .. import records as batches

LEADER_CHANGE = 2  # ControlRecordType.LEADER_CHANGE
REGISTER_BROKER = "RegisterBrokerRecord"
FENCE_BROKER = "FenceBrokerRecord"
UNFENCE_BROKER = "UnfenceBrokerRecord"
LEADER_CHANGE_MESSAGE = "LeaderChangeMessage"


@dataclass(frozen=True)
class MetadataRecord:
    offset: int
    epoch: int  # the leader epoch of the batch that holds it
    type: str
    data: dict[str, Any]


def leader_change_record(leader_id: int, voters: list[int]) -> tuple[bytes, bytes]:
    """Key and value of the LeaderChangeMessage a new leader writes first in its epoch."""
    value = {"type": LEADER_CHANGE_MESSAGE, "data": {"leaderId": leader_id, "voters": voters}}
    return batches.control_record_key(LEADER_CHANGE), json.dumps(value).encode()


def metadata_record(kind: str, now: int, **data: Any) -> batches.Record:
    return batches.Record(0, now, None, json.dumps({"type": kind, "data": data}).encode())


def decode(batch: bytes) -> Iterator[MetadataRecord]:
    """The metadata records of one batch, leader-change messages included."""
    header = batches.BatchHeader.parse(batch)
    for record in batches.iter_records(batch):
        value = json.loads(record.value or b"{}")
        yield MetadataRecord(
            record.offset, header.partition_leader_epoch, value.get("type", "?"), value.get("data", {})
        )


def read_all(batch_list: list[bytes]) -> list[MetadataRecord]:
    return [record for batch in batch_list for record in decode(batch)]
