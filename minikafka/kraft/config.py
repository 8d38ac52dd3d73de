"""The ``controller.quorum.*`` settings (KIP-595), by Kafka's names and with Kafka's defaults."""

from __future__ import annotations

from dataclasses import dataclass


class BadVoters(ValueError):
    """``controller.quorum.voters`` is not a list of ``id@host:port``."""


def parse_voters(text: str) -> dict[int, tuple[str, int]]:
    """``1@127.0.0.1:9093,2@127.0.0.1:9094`` -> {1: ("127.0.0.1", 9093), 2: ...}."""
    voters: dict[int, tuple[str, int]] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        node, at, address = item.partition("@")
        host, colon, port = address.rpartition(":")
        if not at or not colon or not node.isdigit() or not port.isdigit() or not host:
            raise BadVoters(f"controller.quorum.voters entry {item!r} is not id@host:port")
        if int(node) in voters:
            raise BadVoters(f"controller.quorum.voters names node {node} twice")
        voters[int(node)] = (host, int(port))
    if not voters:
        raise BadVoters("controller.quorum.voters is empty: a quorum needs at least one voter")
    return voters


@dataclass(frozen=True)
class QuorumConfig:
    """Kafka's quorum timers, in milliseconds.

    ``election_timeout_ms``: how long a voter with no leader waits before it stands for
    election (randomised up to twice that, so that voters rarely stand at once);
    ``fetch_timeout_ms``: how long a follower goes without a good Fetch answer before it
    stands; ``election_backoff_max_ms``: the longest a losing candidate waits before it
    tries again; ``request_timeout_ms``: how long one request between controllers may take.
    """

    election_timeout_ms: int = 1000  # controller.quorum.election.timeout.ms
    fetch_timeout_ms: int = 2000  # controller.quorum.fetch.timeout.ms
    election_backoff_max_ms: int = 1000  # controller.quorum.election.backoff.max.ms
    request_timeout_ms: int = 2000  # controller.quorum.request.timeout.ms
    retry_backoff_ms: int = 20  # controller.quorum.retry.backoff.ms
    fetch_poll_ms: int = 50  # minikafka: a caught-up follower fetches again after this (Kafka long-polls)

    @property
    def check_quorum_ms(self) -> int:
        """A leader that has not heard from a majority for this long resigns (KIP-595's check quorum)."""
        return self.fetch_timeout_ms * 3 // 2
