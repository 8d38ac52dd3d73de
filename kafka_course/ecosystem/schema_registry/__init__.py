"""A schema registry that speaks Confluent Schema Registry's REST API, for confluent-kafka's own client.

The course's rule for every tool: the real client, the same interface, a small server
behind it, and the real server on the compose path. Here the real client is
``confluent_kafka.schema_registry.SchemaRegistryClient`` with its Avro, JSON Schema and
Protobuf serializers; the small server is this package; the real one is
``confluentinc/cp-schema-registry`` in docker-compose.yml.

* ``store``: subjects, versions, ids and compatibility levels, rebuilt from ``_schemas``;
* ``formats`` with ``avro``, ``json_schema`` and ``protobuf``: parsing and compatibility;
* ``api``: the REST routes and their error codes; ``server``: HTTP and the Kafka topic.
"""

from .server import SchemaRegistryServer

__all__ = ["SchemaRegistryServer"]
