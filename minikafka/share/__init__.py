"""Share groups (KIP-932, "queues for Kafka"): many consumers reading one partition.

``states`` declares a record's delivery states and the moves between them (the table
a notebook draws), ``partition`` is one share-partition's state machine (the start and
end offsets, in-flight records, acquisition locks, delivery counts), ``group`` is a
share group's membership and its server-side assignment, ``sessions`` the share
session cache of ShareFetch, ``configs`` the group-level settings, ``state_topic`` the
record format of ``__share_group_state``, and ``coordinator`` and ``manager`` tie them
to one broker: the group coordinator side and the share-partition leader side.
"""
