"""Partition replicas: the leader's write and read paths, followers catching up, the ISR.

``partition`` holds one replica (its log, high watermark, producer state and the
acks=all rules), ``producer_state`` the idempotent-producer table (KIP-98), ``epochs``
the leader epoch cache (KIP-101), ``fetcher`` the follower's fetch loop, ``isr`` the
rules for leaving and rejoining the ISR, and ``peers`` the one seam between brokers.
"""

from .partition import AppendInfo, FollowerState, Partition

__all__ = ["AppendInfo", "FollowerState", "Partition"]
