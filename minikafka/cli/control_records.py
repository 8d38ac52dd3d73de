"""How ``minikafka dump-log`` describes control records and KRaft metadata records.

A control batch's records say what they are in their key: a version and a type, Kafka's
``ControlRecordType`` (0 ABORT, 1 COMMIT: transaction markers, KIP-98; 2 LeaderChange,
KIP-595; 3 SnapshotHeader and 4 SnapshotFooter, KIP-630; 5 KRaftVersion and 6 KRaftVoters,
KIP-853). Only the first two are transaction markers; the KRaft ones hold a message, which
minikafka's controller writes as JSON (``{"type": ..., "data": {...}}``). With
``--cluster-metadata-decoder`` the data records of a ``__cluster_metadata`` log or a
``.checkpoint`` snapshot are printed as metadata records (RegisterBrokerRecord, ...) in the
shape Kafka's decoder prints them: ``{"type":"REGISTER_BROKER_RECORD","data":{...}}``.
"""

from __future__ import annotations

import json
import re
import struct
from typing import Any

ABORT, COMMIT, LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, KRAFT_VOTERS = range(7)
TYPE_NAMES = {
    ABORT: "ABORT",
    COMMIT: "COMMIT",
    LEADER_CHANGE: "LEADER_CHANGE",
    SNAPSHOT_HEADER: "SNAPSHOT_HEADER",
    SNAPSHOT_FOOTER: "SNAPSHOT_FOOTER",
    KRAFT_VERSION: "KRAFT_VERSION",
    KRAFT_VOTERS: "KRAFT_VOTERS",
}
# the label kafka-dump-log.sh puts before each KRaft control message
_LABELS = {
    LEADER_CHANGE: "LeaderChange:",
    SNAPSHOT_HEADER: "SnapshotHeader",
    SNAPSHOT_FOOTER: "SnapshotFooter",
    KRAFT_VERSION: "KRaftVersion",
    KRAFT_VOTERS: "KRaftVoters",
}


def control_type(key: bytes | None) -> int | None:
    """The ControlRecordType in a control record's key (version int16, type int16); None if cut short."""
    if key is None or len(key) < 4:
        return None
    return struct.unpack_from(">h", key, 2)[0]


def control_text(key: bytes | None, value: bytes | None) -> str:
    """What follows a control record's ``| offset: ...`` line, told apart by the key's type."""
    kind = control_type(key)
    if kind in (ABORT, COMMIT):
        epoch = struct.unpack_from(">i", value, 2)[0] if value and len(value) >= 6 else -1
        return f" endTxnMarker: {TYPE_NAMES[kind]} coordinatorEpoch: {epoch}"
    message = _json(value)
    if kind in _LABELS and message is not None:
        return f" {_LABELS[kind]} {_compact(message.get('data', message))}"
    name = TYPE_NAMES.get(kind, "UNKNOWN") if kind is not None else "UNKNOWN"
    return f" controlType: {name}({-1 if kind is None else kind})"


def metadata_text(value: bytes | None) -> str | None:
    """A metadata record as ``--cluster-metadata-decoder`` prints it; None if the value is no
    metadata record (the caller prints the raw payload instead)."""
    record = _json(value)
    if record is None or "type" not in record:
        return None
    kind = re.sub(
        r"(?<!^)(?=[A-Z])", "_", str(record["type"])
    ).upper()  # RegisterBrokerRecord -> REGISTER_BROKER_RECORD
    return f" payload: {_compact({'type': kind, 'data': record.get('data', {})})}"


def _json(value: bytes | None) -> dict[str, Any] | None:
    try:
        found = json.loads(value) if value else None
    except (ValueError, UnicodeDecodeError):
        return None
    return found if isinstance(found, dict) else None


def _compact(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))
