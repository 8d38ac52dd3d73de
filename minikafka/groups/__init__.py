"""Consumer groups: Kafka's group coordinator and committed offsets.

``states`` declares the group states and their transitions (the table a notebook
draws), ``group`` and ``member`` are one group's rebalance protocol, ``offsets`` the
record format of ``__consumer_offsets``, ``offsets_topic`` the coordinator's only I/O,
``replay`` rebuilds state from that topic, and ``coordinator`` ties them to a broker.
"""
