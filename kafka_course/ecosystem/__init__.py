"""The Kafka ecosystem in miniature, for notebooks 12 and 13 of the course.

Each module rebuilds one piece of the ecosystem around Kafka with ordinary clients, small
enough to read in one sitting:

* ``registry``: a schema registry (subjects, versions, compatibility rules, the
  5-byte record header), for JSON Schema.
* ``connect``: Kafka Connect's source and sink, with source offsets and transforms.
* ``streams``: a stateful processor with a changelog topic (Kafka Streams, ksqlDB).
* ``mirror``: copying topics between clusters (MirrorMaker 2).
* ``comparison``: the same workload on Kafka, RabbitMQ and NATS.
* ``workloads``: three workloads (replay, a work queue, fan-out) on each of them, for lab 13.
* ``servers``: where the outside servers are, and whether they answer.
"""
