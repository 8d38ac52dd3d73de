"""Fetch from the closest replica (KIP-392): which replica a consumer should read from.

Since Kafka 2.4 a consumer may fetch from a follower. It says where it is
(``client.rack``, sent in Fetch v11+ as ``rack_id``); the partition leader asks its
``replica.selector.class`` which replica that consumer should use and, when the answer is
another broker, returns no records but ``preferred_read_replica``: the consumer then
fetches from that follower, which serves records up to its own high watermark. Cross-rack
(cross-zone) traffic, often billed, drops to the replication itself.

Kafka's default selector is the leader (nothing changes); ``RackAwareReplicaSelector``
picks a replica in the consumer's rack: the leader when it is there, else the most caught
up follower there, among those that have the offset being fetched.
"""

from __future__ import annotations

from collections.abc import Mapping

from .partition import Partition

RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
LEADER = "org.apache.kafka.common.replica.LeaderSelector"
NO_PREFERENCE = -1


def preferred_read_replica(selector: str, leader: Partition, client_rack: str, fetch_offset: int,
                           racks: Mapping[int, str | None], live: Mapping[int, object]) -> int:
    """The broker the consumer should fetch from, or -1 for "this leader is fine"."""
    if selector != RACK_AWARE or not client_rack:
        return NO_PREFERENCE
    if racks.get(leader.node_id) == client_rack:
        return NO_PREFERENCE
    candidates = {b: state.log_end_offset for b, state in leader.followers.items()
                  if b in live and b in leader.info.replicas and racks.get(b) == client_rack
                  and state.log_end_offset >= fetch_offset}
    if not candidates:
        return NO_PREFERENCE
    return max(candidates, key=lambda b: (candidates[b], -b))
