"""The consumer group protocol (KIP-848), as Kafka's ``group/modern/consumer/`` keeps it: the group
and its heartbeat (``group``), the member's reconciliation (``member``), the states both go
through (``states``), the server-side assignors (``assignors``), classic members inside a consumer
group during an online migration (``classic``), and the coordinator's part (``coordinator``)."""
