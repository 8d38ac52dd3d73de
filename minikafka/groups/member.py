"""A group member and the messages of a rebalance, as plain data.

A *member* is one consumer in a group (Kafka's MemberMetadata): the member id the
coordinator gave it, its optional ``group.instance.id`` (static membership, KIP-345),
its session and rebalance timeouts, the assignment strategies it offers with their
metadata (for consumers: the subscribed topics), and the assignment its leader gave it.
"""

from __future__ import annotations

import asyncio
import struct
import uuid
from dataclasses import dataclass, field, fields

from ..errors import MemberIdRequired as MemberIdRequired  # re-exported: it lives in errors, for the handlers


@dataclass
class Membership:
    """Who a member is and how long it may stay silent: what a JoinGroup says and a Member keeps."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int


@dataclass
class JoinRequest(Membership):
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]
    require_known_member_id: bool = True  # JoinGroup v4+


@dataclass(frozen=True)
class JoinResult:
    member_id: str
    generation_id: int
    protocol_type: str | None
    protocol_name: str | None
    leader_id: str
    members: tuple[tuple[str, str | None, bytes], ...]  # only the leader gets them


@dataclass(frozen=True)
class SyncResult:
    assignment: bytes
    protocol_type: str | None
    protocol_name: str | None


@dataclass(eq=False)
class Member(Membership):
    protocols: tuple[tuple[str, bytes], ...]
    assignment: bytes = b""
    session_deadline: int = 0  # on the coordinator's monotonic clock (ms)
    join_waiter: asyncio.Future | None = field(default=None, repr=False)
    sync_waiter: asyncio.Future | None = field(default=None, repr=False)

    @classmethod
    def from_request(cls, member_id: str, req: JoinRequest) -> Member:
        known = {f.name: getattr(req, f.name) for f in fields(Membership)}
        return cls(**{**known, "member_id": member_id}, protocols=tuple(req.protocols))

    def metadata(self, protocol: str | None) -> bytes:
        return dict(self.protocols).get(protocol or "", b"")

    def touch(self, now: int) -> None:
        """A sign of life: the session timeout starts again (``now`` in monotonic ms)."""
        self.session_deadline = now + self.session_timeout_ms

    @property
    def waiting(self) -> bool:
        """A member with a JoinGroup or SyncGroup in flight is alive by definition."""
        return self.join_waiter is not None or self.sync_waiter is not None


def new_member_id(prefix: str) -> str:
    """Kafka's shape: the client id (or instance id), a dash, a random UUID."""
    return f"{prefix}-{uuid.uuid4()}"


def subscribed_topics(metadata: bytes) -> set[str]:
    """Topics in a consumer protocol Subscription (int16 version, array of strings)."""
    try:
        (count,) = struct.unpack_from(">i", metadata, 2)
        topics, pos = set(), 6
        for _ in range(count):
            (n,) = struct.unpack_from(">h", metadata, pos)
            topics.add(metadata[pos + 2 : pos + 2 + n].decode())
            pos += 2 + n
        return topics
    except (struct.error, UnicodeDecodeError):
        return set()
