"""The records of the metadata log: a small, clearly named set after Kafka's metadata records.

Kafka encodes each metadata record with its own generated schema (``RegisterBrokerRecord``,
``FenceBrokerRecord``, ``UnfenceBrokerRecord``, ...) behind a frame version and an api key.
kio has no classes for those schemas, so minikafka writes the same records, with Kafka's
names and fields, as a JSON value: ``{"type": "RegisterBrokerRecord", "data": {...}}``. The
batches around them are real Kafka record batches. A new leader's first record is the
control record Kafka writes there, LeaderChangeMessage (control type 2), here with a JSON
value as well.

The topic and partition metadata that ``minikafka.metadata.ClusterMetadata`` keeps is
event-sourced: each change is a small dict (``{"type": "topic", ...}``). In the quorum each
such dict becomes one metadata record named after the Kafka record that carries the same
change (``KAFKA_NAMES``), with the dict itself as the data. Kafka writes a new topic as a
TopicRecord followed by one PartitionRecord per partition; here the TopicRecord carries its
partitions, and every later change of one partition is a PartitionChangeRecord holding the
partition's whole new state (Kafka's holds only the fields that changed).
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
TOPIC_RECORD = "TopicRecord"
PARTITION_CHANGE = "PartitionChangeRecord"

# the kind of a ClusterMetadata change -> the Kafka metadata record that carries it
KAFKA_NAMES: dict[str, str] = {
    "topic": TOPIC_RECORD,
    "partition": PARTITION_CHANGE,
    "remove_topic": "RemoveTopicRecord",
    "producer_ids": "ProducerIdsRecord",
    "broker_config": "ConfigRecord",
    "group_config": "ConfigRecord",
    "acl": "AccessControlEntryRecord",
    "remove_acl": "RemoveAccessControlEntryRecord",
    "scram": "UserScramCredentialRecord",
    "remove_scram": "RemoveUserScramCredentialRecord",
}
CHANGE_RECORDS = frozenset(KAFKA_NAMES.values())


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


def change_record(change: dict[str, Any], now: int) -> batches.Record:
    """The metadata record that carries one ClusterMetadata change (the dict is its data)."""
    kind = change["type"]
    if kind not in KAFKA_NAMES:
        raise ValueError(f"no metadata record carries a {kind!r} change")
    return batches.Record(0, now, None, json.dumps({"type": KAFKA_NAMES[kind], "data": change}).encode())


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
