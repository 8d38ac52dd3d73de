"""What the topic-administration handlers share (CreateTopics, DeleteTopics, CreatePartitions,
DeleteRecords): the base of their handler objects, which hold the broker's ``TopicsPort``."""

from __future__ import annotations

from .ports import TopicsPort


class TopicsHandler:
    """A topic-administration API's handler, constructed by the registry with the broker's topics port."""

    def __init__(self, topics: TopicsPort) -> None:
        self.topics = topics
