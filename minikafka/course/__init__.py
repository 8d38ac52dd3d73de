"""The course helper: what every notebook and lab of Kafka Hands-On imports.

    from minikafka import course
    BOOTSTRAP = course.bootstrap()      # embedded minikafka, or $KAFKA_BOOTSTRAP_SERVERS
    topic = course.new_topic("sales", partitions=3)
    course.produce_demo(topic, 100)
    course.show_offsets(topic)

``backend`` finds the cluster and controls it, ``clients`` holds the small client
helpers, ``members`` runs consumer group members in threads, ``views`` draws live
cluster state, ``checks`` powers the lab checks and ``preflight`` checks a machine
before the course starts.
"""

from . import checks, preflight
from .backend import (COMPOSE_SERVICES, ENV_VAR, ClusterHandle, MinikafkaOnly, PartitionInfo, bootstrap, cluster,
                      requires_minikafka, requires_real_kafka)
from .clients import (PartitionOffsets, Record, admin, committed, consume_all, delete_topic, lag, new_topic, offsets,
                      partitions_of, produce_demo, producer, wait_until)
from .members import GroupMember, leave_all, wait_for_members
from .views import AssignmentTimeline, LagTimeline, OffsetsView, show_offsets

__all__ = [
    "COMPOSE_SERVICES", "ENV_VAR", "AssignmentTimeline", "ClusterHandle", "GroupMember", "LagTimeline", "MinikafkaOnly",
    "OffsetsView", "PartitionInfo", "PartitionOffsets", "Record", "admin", "bootstrap", "checks", "cluster",
    "committed", "consume_all", "delete_topic", "lag", "leave_all", "new_topic", "offsets", "partitions_of", "preflight",
    "produce_demo", "producer", "requires_minikafka", "requires_real_kafka", "show_offsets", "wait_for_members",
    "wait_until",
]
