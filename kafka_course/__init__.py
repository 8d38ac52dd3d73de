"""The course helper: what every notebook and lab of Kafka Hands-On imports.

    import kafka_course as course
    BOOTSTRAP = course.bootstrap()      # embedded minikafka, or $KAFKA_BOOTSTRAP_SERVERS
    topic = course.new_topic("sales", partitions=3)
    course.produce_demo(topic, 100)
    course.show_offsets(topic)

``connection`` finds the cluster, ``handle`` looks at it and breaks it (on minikafka
or real Kafka), ``clients`` holds the client factories and small client helpers,
``members`` runs consumer group members in threads, ``rebalance`` measures what a
join costs on the classic and the KIP-848 protocol, ``queues`` runs share groups
(KIP-932), ``features`` tells what the cluster offers, ``transaction_v2`` is a producer of
transaction protocol v2 (KIP-890 part 2), ``kraft`` starts notebook 05b's cluster of broker and controller
processes and breaks it, ``secured`` finds a cluster to lock down
(SASL, TLS, ACLs), ``commands`` runs the tools' command lines, ``views``, ``replica_views`` and
``state_machines`` draw live cluster state, ``checks`` powers the lab checks (one
module per lab in ``labs``) and ``preflight`` checks a machine before the course
starts. ``spark`` is a Kafka source for PySpark, ``ecosystem`` the servers and demos of
notebooks 12 and 13, ``tools`` the command-line tools shaped like Kafka's scripts.
"""

from . import checks, preflight
from .commands import shell
from .clients import (PartitionOffsets, Message, admin, committed, consume_all, consumer, delete_topic, lag, new_topic,
                      offsets, partitions_of, produce_demo, producer, wait_until)
from .connection import ENV_VAR, bootstrap
from .handle import (COMPOSE_SERVICES, ClusterHandle, LogSizesHidden, MinikafkaOnly, PartitionState, cluster,
                     requires_broker_control, requires_minikafka, requires_real_kafka)
from .client_logs import client_log, show_client_logs
from .ecosystem.services import ConnectCluster, kafka_connect, schema_registry
from .errors import expect_error
from .exercise import exercise
from .kraft import KRaftCluster, kraft_cluster
from .features import requires_consumer_protocol, requires_share_groups, requires_transaction_v2
from .members import GroupMember, leave_all, wait_for_members
from .quiz import Question, predict, quiz
from .secured import SecuredCluster, secured_cluster
from .views import AssignmentTimeline, LagTimeline, OffsetsView, show_offsets

__all__ = [
    "AssignmentTimeline", "COMPOSE_SERVICES", "ClusterHandle", "ConnectCluster", "ENV_VAR", "GroupMember",
    "LagTimeline", "LogSizesHidden", "Message", "MinikafkaOnly", "OffsetsView", "PartitionOffsets", "PartitionState",
    "KRaftCluster", "Question", "SecuredCluster",
    "admin", "bootstrap", "checks", "client_log", "cluster", "committed", "consume_all", "consumer", "delete_topic",
    "exercise", "expect_error", "kafka_connect", "kraft_cluster", "lag", "leave_all", "new_topic", "offsets",
    "partitions_of", "preflight",
    "predict", "produce_demo", "producer", "quiz", "requires_broker_control", "requires_consumer_protocol",
    "requires_minikafka", "requires_real_kafka", "requires_share_groups", "requires_transaction_v2",
    "schema_registry", "secured_cluster", "shell", "show_client_logs", "show_offsets", "wait_for_members", "wait_until",
]
