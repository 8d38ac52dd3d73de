"""What a cluster can do: the APIs and feature levels its brokers advertise (KIP-35, KIP-584).

Every broker answers ApiVersions with the range of each API it speaks and, since
ApiVersions v3, the *features* it supports and the levels the cluster has finalized.
Kafka 4 gates its new group protocols on both:

* the consumer group protocol (KIP-848, ``group.protocol=consumer``) needs the
  ConsumerGroupHeartbeat API (key 68) and, where the broker reports it, ``group.version`` 1;
* share groups (KIP-932) need ShareGroupHeartbeat (key 76) at version 1 or later (what
  Kafka 4.1's clients and confluent-kafka 2.16's ``ShareConsumer`` send) and, where the
  broker reports it, ``share.version`` 1: Kafka 4.1 ships share groups switched off
  (``kafka-features upgrade --feature share.version=1`` switches them on).

* transaction protocol v2 (KIP-890 part 2) needs ``transaction.version`` 2 finalized, EndTxn v5
  and Produce v12: a new Kafka 4.0+ cluster finalizes it; one upgraded from 3.x may not.

A notebook cell asks ``requires_consumer_protocol()``, ``requires_share_groups()`` or
``requires_transaction_v2()``
and, on a cluster without the feature, prints one sentence and skips itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .connection import current_bootstrap
from .i18n import _
from .tools.wire import Connection, WireError

CONSUMER_GROUP_HEARTBEAT, SHARE_GROUP_HEARTBEAT = 68, 76
PRODUCE, END_TXN = 0, 26


@dataclass(frozen=True)
class Features:
    """One broker's ApiVersions answer: API ranges, supported features, finalized levels."""
    apis: dict[int, tuple[int, int]]
    supported: dict[str, tuple[int, int]] = field(default_factory=dict)
    finalized: dict[str, int] = field(default_factory=dict)

    def speaks(self, api_key: int, version: int = 0) -> bool:
        """Whether the broker speaks this API at ``version`` or later."""
        return api_key in self.apis and self.apis[api_key][1] >= version

    def enabled(self, feature: str, level: int = 1) -> bool:
        """True unless the broker reports ``feature`` and the cluster finalized a lower level.

        A broker that does not report the feature at all (older Kafka, minikafka) is
        judged by its API ranges alone.
        """
        if feature not in self.supported and feature not in self.finalized:
            return True
        return self.finalized.get(feature, 0) >= level


_asked: dict[str, Features] = {}


def features(bootstrap: str | None = None) -> Features:
    """ApiVersions of the first bootstrap broker (asked once per address)."""
    servers = bootstrap or current_bootstrap()
    if servers not in _asked:
        host, port = servers.split(",")[0].strip().rsplit(":", 1)
        with Connection(host, int(port)) as conn:
            answer = conn.request(18, 3, client_software_name="kafka-hands-on", client_software_version="1")
        _asked[servers] = Features(
            {a.api_key: (a.min_version, a.max_version) for a in answer.api_keys},
            {f.name: (f.min_version, f.max_version) for f in answer.supported_features},
            {f.name: f.max_version_level for f in answer.finalized_features})
    return _asked[servers]


def supports_consumer_protocol(bootstrap: str | None = None) -> bool:
    """Whether ``group.protocol=consumer`` (KIP-848) works on this cluster."""
    found = _features_or_none(bootstrap)
    return found is not None and found.speaks(CONSUMER_GROUP_HEARTBEAT) and found.enabled("group.version")


def supports_share_groups(bootstrap: str | None = None) -> bool:
    """Whether share groups (KIP-932) as Kafka 4.1's clients speak them work on this cluster."""
    found = _features_or_none(bootstrap)
    return found is not None and found.speaks(SHARE_GROUP_HEARTBEAT, 1) and found.enabled("share.version")


def supports_transaction_v2(bootstrap: str | None = None) -> bool:
    """Whether the cluster finalizes ``transaction.version`` 2 (KIP-890 part 2) and speaks its requests."""
    found = _features_or_none(bootstrap)
    return (found is not None and found.finalized.get("transaction.version", 0) >= 2
            and found.speaks(END_TXN, 5) and found.speaks(PRODUCE, 12))


def _features_or_none(bootstrap: str | None) -> Features | None:
    try:
        return features(bootstrap)
    except (WireError, OSError):
        return None


def requires_consumer_protocol(what: str | None = None) -> bool:
    """True where KIP-848 works; elsewhere print why the cell skips itself (``what``: the caller's
    words for what is skipped, "This cell" in the course's language by default)."""
    if supports_consumer_protocol():
        return True
    print(_("{what} needs the consumer group protocol of Kafka 4 (KIP-848, ConsumerGroupHeartbeat), which "
            "{servers} does not offer, so it is skipped.").format(what=what or _("This cell"),
                                                                   servers=current_bootstrap()))
    return False


def requires_share_groups(what: str | None = None) -> bool:
    """True where share groups work; elsewhere print why the cell skips itself."""
    if supports_share_groups():
        return True
    print(_("{what} needs share groups (KIP-932: Kafka 4.1 or later with share.version=1, or minikafka), which "
            "{servers} does not offer, so it is skipped.").format(what=what or _("This cell"),
                                                                   servers=current_bootstrap()))
    return False


def requires_transaction_v2(what: str | None = None) -> bool:
    """True where transaction protocol v2 works; elsewhere print why the cell skips itself."""
    if supports_transaction_v2():
        return True
    print(_("{what} needs transaction protocol v2 (KIP-890 part 2: transaction.version=2, as a new Kafka 4 "
            "cluster sets it), which {servers} does not offer, so it is skipped.").format(
        what=what or _("This cell"), servers=current_bootstrap()))
    return False
