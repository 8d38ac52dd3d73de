"""Share sessions: what a share-partition leader remembers of each member between fetches (KIP-932).

Like a fetch session (KIP-227), a share session lets a consumer send only what changed:
the partitions it adds, the ones it forgets, and its acknowledgements. It is keyed by
(group id, member id) and numbered by an epoch the client increments with every
request. Kafka's ``ShareSessionCache`` rules, with the same error codes:

====================  =====================================================================
request epoch          meaning
====================  =====================================================================
0                      open a session (a full request): any old session of the member is
                       dropped and its records released; acknowledgements are refused
                       (INVALID_REQUEST); no room (``group.share.max.share.sessions``):
                       SHARE_SESSION_LIMIT_REACHED
1 ... 2^31-1           the next request of an open session: no session,
                       SHARE_SESSION_NOT_FOUND; another epoch, INVALID_SHARE_SESSION_EPOCH
-1                     the last request: acknowledge, release what is still held, close
====================  =====================================================================

ShareAcknowledge follows the same numbering but never opens a session (epoch 0 is
INVALID_SHARE_SESSION_EPOCH).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ErrorCode, KafkaError

INITIAL_EPOCH, FINAL_EPOCH = 0, -1
MAX_EPOCH = 2**31 - 1

SharePartitionId = tuple[str, int]  # (topic name, partition)


def next_epoch(epoch: int) -> int:
    return 1 if epoch >= MAX_EPOCH else epoch + 1


@dataclass
class ShareSession:
    group_id: str
    member_id: str
    epoch: int = 1  # the epoch the next request must carry
    partitions: set[SharePartitionId] = field(default_factory=set)
    connection_id: int = 0
    topic_ids: dict[str, str] = field(default_factory=dict)  # topic name -> the id the member fetched it by


class ShareSessionCache:
    def __init__(self, max_sessions: int = 2000):
        self.max_sessions = max_sessions
        self.sessions: dict[tuple[str, str], ShareSession] = {}

    def get(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.get((group_id, member_id))

    def open(self, group_id: str, member_id: str, partitions: set[SharePartitionId],
             connection_id: int = 0) -> tuple[ShareSession, ShareSession | None]:
        """A full request (epoch 0): the new session, and the member's old one if any
        (whose records the caller releases)."""
        old = self.sessions.pop((group_id, member_id), None)
        if len(self.sessions) >= self.max_sessions:
            if old is not None:
                self.sessions[(group_id, member_id)] = old
            raise KafkaError(ErrorCode.share_session_limit_reached,
                             f"This broker already holds {self.max_sessions} share sessions "
                             "(group.share.max.share.sessions).")
        session = ShareSession(group_id, member_id, 1, set(partitions), connection_id)
        self.sessions[(group_id, member_id)] = session
        return session, old

    def existing(self, group_id: str, member_id: str, epoch: int) -> ShareSession:
        """The open session a request with ``epoch`` (not 0) belongs to."""
        session = self.sessions.get((group_id, member_id))
        if session is None:
            raise KafkaError(ErrorCode.share_session_not_found,
                             f"Member {member_id} of group {group_id!r} has no share session on this broker; "
                             "open one with epoch 0.")
        if epoch != FINAL_EPOCH and epoch != session.epoch:
            raise KafkaError(ErrorCode.invalid_share_session_epoch,
                             f"The share session of member {member_id} expects epoch {session.epoch}, not {epoch}.")
        return session

    def advance(self, session: ShareSession, added: set[SharePartitionId],
                forgotten: set[SharePartitionId]) -> set[SharePartitionId]:
        """An incremental request: apply its changes, move to the next epoch; the partitions forgotten."""
        dropped = session.partitions & forgotten
        session.partitions = (session.partitions - forgotten) | added
        session.epoch = next_epoch(session.epoch)
        return dropped

    def close(self, session: ShareSession) -> None:
        self.sessions.pop((session.group_id, session.member_id), None)

    def of_connection(self, connection_id: int) -> list[ShareSession]:
        return [s for s in self.sessions.values() if s.connection_id == connection_id]
