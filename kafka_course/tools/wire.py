"""A few Kafka requests over a plain socket, for what confluent-kafka 2.16's AdminClient
cannot ask yet: ListGroups with group types (v5, KIP-848) and, for share groups
(KIP-932), ShareGroupDescribe and DescribeShareGroupOffsets.

Requests are encoded and answers decoded with ``kio`` (generated from Kafka's own
message schemas), so these work against any Kafka 4 cluster, not only minikafka. The
version of each request is the highest both sides know, from ApiVersions.
"""

from __future__ import annotations

import io
import socket
import struct
from typing import Any

from kio.schema.api_versions.v0.request import ApiVersionsRequest
from kio.serial import entity_reader, entity_writer
from kio.static.protocol import Payload

from minikafka.api import codec

TIMEOUT = 10.0
CLIENT_ID = b"minikafka-tools"


class WireError(Exception):
    """The broker could not be reached or did not answer as a Kafka broker does."""


class Connection:
    def __init__(self, host: str, port: int):
        try:
            self.sock = socket.create_connection((host, port), timeout=TIMEOUT)
        except OSError as e:
            raise WireError(f"cannot reach {host}:{port}: {e}") from None
        self.correlation_id = 0
        self.versions: dict[int, int] = {}

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()

    def version(self, api_key: int, newest: int) -> int | None:
        """The highest version of an API both sides speak (None: the broker lacks the API)."""
        if not self.versions:
            answer = self._send(ApiVersionsRequest(), 18, 0)
            self.versions = {a.api_key: a.max_version for a in answer.api_keys}
        theirs = self.versions.get(api_key)
        return None if theirs is None else min(theirs, newest)

    def request(self, api_key: int, newest: int, **fields: Any) -> Any:
        version = self.version(api_key, newest)
        if version is None:
            raise WireError(f"the broker does not support API {api_key}")
        return self._send(codec.downgrade(codec.request_class(api_key, version), **fields), api_key, version)

    def _send(self, request: Any, api_key: int, version: int) -> Any:
        self.correlation_id += 1
        buf = io.BytesIO()
        buf.write(struct.pack(">hhih", api_key, version, self.correlation_id, len(CLIENT_ID)) + CLIENT_ID)
        if type(request).__flexible__:
            buf.write(b"\0")  # request header v2: no tagged fields
        entity_writer(type(request))(buf, request)
        payload = buf.getvalue()
        try:
            self.sock.sendall(struct.pack(">i", len(payload)) + payload)
            frame = self._exactly(struct.unpack(">i", self._exactly(4))[0])
        except OSError as e:
            raise WireError(f"the broker closed the connection: {e}") from None
        response_class: type[Payload] = codec.response_class(api_key, version)
        header = 4 + (1 if response_class.__flexible__ and api_key != 18 else 0)
        return entity_reader(response_class)(frame, header)[0]

    def _exactly(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise OSError("connection closed")
            out += chunk
        return out


def list_groups(brokers: list[tuple[str, int]]) -> list[tuple[str, str, str, str]]:
    """(group id, protocol type, state, type) of every group, asking every broker."""
    out = set()
    for host, port in brokers:
        with Connection(host, port) as conn:
            answer = conn.request(16, 5, states_filter=(), types_filter=())
        out |= {(g.group_id, g.protocol_type, g.group_state or "", getattr(g, "group_type", "") or "classic")
                for g in answer.groups}
    return sorted(out)


def coordinator(host: str, port: int, group: str) -> tuple[int, str, int]:
    """(node id, host, port) of a group's coordinator."""
    with Connection(host, port) as conn:
        answer = conn.request(10, 3, key=group, key_type=0)
    if answer.error_code != 0:
        raise WireError(f"no coordinator for group {group!r}: {answer.error_code.name}")
    return answer.node_id, answer.host, answer.port


def describe_share_group(host: str, port: int, group: str) -> Any:
    """ShareGroupDescribe of one group at its coordinator (its ``error_code`` says if it is one)."""
    with Connection(host, port) as conn:
        return conn.request(77, 1, group_ids=(group,), include_authorized_operations=False).groups[0]


def share_group_offsets(host: str, port: int, group: str) -> list[tuple[str, int, int, int]]:
    """(topic, partition, start offset, lag or -1) of every share-partition of a group."""
    with Connection(host, port) as conn:
        module = codec.request_module(90, conn.version(90, 1) or 0)
        answer = conn.request(90, 1, groups=(module.DescribeShareGroupOffsetsRequestGroup(group_id=group,
                                                                                          topics=None),))
    [described] = answer.groups
    if described.error_code != 0:
        raise WireError(f"cannot describe the offsets of {group!r}: {described.error_code.name}")
    return sorted((t.topic_name, p.partition_index, p.start_offset, getattr(p, "lag", -1))
                  for t in described.topics for p in t.partitions)
