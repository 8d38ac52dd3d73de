"""Topic ids on the wire (KIP-516), with nothing of the broker: the all-zero id for "none", and the
``upgrade`` hook of an API whose newest versions name topics by id. ``_topic_ids`` (the old-style
handlers' lookups through the context) re-exports them; a converted handler asks its port instead."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from ..protocol import codec

ZERO = uuid.UUID(int=0)


def upgrade_within(api_key: int, first_with_ids: int) -> Callable[[object, type], object]:
    """An ``upgrade`` hook: named requests up to ``first_with_ids - 1``, the others to the newest."""
    def upgrade(decoded: Any, latest: type) -> Any:
        if type(decoded).__version__ >= first_with_ids:
            return codec.upgrade(decoded, latest)
        return codec.upgrade(decoded, codec.request_class(api_key, first_with_ids - 1))
    return upgrade


def absent(topic_id: uuid.UUID | None) -> bool:
    """No id given: Kafka writes the all-zero id for "none", and the codec reads it as None."""
    return topic_id is None or topic_id == ZERO


def given(topic_id: uuid.UUID | None) -> uuid.UUID | None:
    """The id, or None when none was given (``absent``)."""
    return None if absent(topic_id) else topic_id
