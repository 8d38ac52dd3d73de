"""The delivery states of a record in a share group, and the moves between them (KIP-932).

Every record between a share-partition's start offset (SPSO) and end offset (SPEO) is
*in flight* and in one of four states:

* **Available**: it may be given to the next consumer that fetches.
* **Acquired**: one consumer holds it under an acquisition lock
  (``group.share.record.lock.duration.ms``); nobody else gets it meanwhile.
* **Acknowledged**: the consumer accepted it; it will never be delivered again.
* **Archived**: rejected, a gap in the log, or delivered ``group.share.delivery.count.limit``
  times; it will never be delivered again.

The numbers are Kafka's own (``RecordState``), and so are the acknowledgement types a
consumer sends (``AcknowledgeType``). Renew (KIP-1222, ShareFetch and ShareAcknowledge v2)
is no move at all: the record stays Acquired by the same member, its acquisition lock
starts again and its delivery count is kept. ``TRANSITIONS`` lists every legal move as
``(from, event, to)``; a released or timed-out record that reached the delivery count
limit goes to Archived instead of Available.
"""

from __future__ import annotations

import enum

from ..state_table import IllegalTransition, StateTable

__all__ = ["TABLE", "AckType", "RecordState", "TRANSITIONS", "IllegalTransition", "next_state"]


class RecordState(enum.IntEnum):
    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4

    def __str__(self) -> str:
        return self.name.capitalize()

    @property
    def terminal(self) -> bool:
        """Never delivered again: the start offset may move past it."""
        return self in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)


class AckType(enum.IntEnum):
    """What a consumer says about a record it holds (ShareFetch/ShareAcknowledge)."""

    GAP = 0  # no record at this offset (compaction, a transaction marker): archive it
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4  # KIP-1222: keep holding it, the acquisition lock starts again


S = RecordState

# (from, event, to): every move a share-partition may make.
TRANSITIONS: tuple[tuple[RecordState, str, RecordState], ...] = (
    (S.AVAILABLE, "acquire", S.ACQUIRED),
    (S.ACQUIRED, "accept", S.ACKNOWLEDGED),
    (S.ACQUIRED, "release", S.AVAILABLE),
    (S.ACQUIRED, "reject", S.ARCHIVED),
    (S.ACQUIRED, "gap", S.ARCHIVED),
    (S.ACQUIRED, "lock timeout", S.AVAILABLE),
    (S.ACQUIRED, "release at the delivery count limit", S.ARCHIVED),
    (S.ACQUIRED, "lock timeout at the delivery count limit", S.ARCHIVED),
)

TABLE = StateTable("a record", TRANSITIONS)
next_state = TABLE.next

ACK_EVENTS = {AckType.GAP: "gap", AckType.ACCEPT: "accept", AckType.RELEASE: "release", AckType.REJECT: "reject"}

