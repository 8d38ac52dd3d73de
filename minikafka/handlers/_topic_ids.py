"""Topic ids in requests (KIP-516): the newest Fetch and Produce versions name topics by id.

The dispatcher lifts every request to the newest version's class, but Fetch v13+ and
Produce v13 drop the topic *name* for its id, so an older request lifted that far would
lose its names. These handlers lift a request only within its own family: versions that
name topics to the newest one that still does, versions with ids to the newest one; and
the handler turns ids back into names (``name_of``: None for an unknown id, which Kafka
answers with UNKNOWN_TOPIC_ID). Both lookups read a ``ports.TopicLookupPort``: the broker's
topics as a converted handler's port gives them (an old-style handler passes its
``RequestContext``, which offers the same two methods).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from ..protocol import codec
from .ports import TopicLookupPort

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


def name_of(topics: TopicLookupPort, topic_id: uuid.UUID | None) -> str | None:
    found = topics.topic_by_id(str(topic_id))
    return found.name if found is not None else None


def id_of(topics: TopicLookupPort, name: str | None) -> uuid.UUID:
    topic = topics.topics().get(name) if name is not None else None
    return uuid.UUID(topic.topic_id) if topic is not None else ZERO
