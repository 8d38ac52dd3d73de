"""Topic ids in requests (KIP-516): the newest Fetch and Produce versions name topics by id.

The dispatcher lifts every request to the newest version's class, but Fetch v13+ and
Produce v13 drop the topic *name* for its id, so an older request lifted that far would
lose its names. These handlers lift a request only within its own family: versions that
name topics to the newest one that still does, versions with ids to the newest one; and
the handler turns ids back into names (``name_of``: None for an unknown id, which Kafka
answers with UNKNOWN_TOPIC_ID). Both lookups read a ``ports.TopicLookupPort``: the broker's
topics as a handler's port gives them.
"""

from __future__ import annotations

import uuid

from ._ids import ZERO, absent, upgrade_within
from .ports import TopicLookupPort

__all__ = ["ZERO", "absent", "id_of", "name_of", "upgrade_within"]


def name_of(topics: TopicLookupPort, topic_id: uuid.UUID | None) -> str | None:
    found = topics.topic_by_id(str(topic_id))
    return found.name if found is not None else None


def id_of(topics: TopicLookupPort, name: str | None) -> uuid.UUID:
    topic = topics.topics().get(name) if name is not None else None
    return uuid.UUID(topic.topic_id) if topic is not None else ZERO
