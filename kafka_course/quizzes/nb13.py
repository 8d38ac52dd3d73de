"""Notebook 13's questions: Kafka, RabbitMQ and NATS, and Kafka's share groups as a queue."""

from ..i18n import N_
from ..quiz import Question

QUESTIONS = {
    "second-reader": Question(
        N_("Two readers read the same Kafka topic, then the same RabbitMQ queue, one after the other. What does "
           "the second reader get?"),
        [N_("Nothing from either: both systems delete what was read"),
         N_("Everything from Kafka, nothing from the RabbitMQ queue"), N_("Everything from both"),
         N_("Half of each: the readers share the messages")],
        answer=1,
        why=N_("Reading a Kafka record does not remove it; RabbitMQ deletes a message from the queue once it is "
               "acknowledged.")),
    "nobody-listening": Question(
        N_("A core NATS message is published while nobody is subscribed. What happens to it?"),
        [N_("It waits for the first subscriber"), N_("It goes to a dead-letter queue"), N_("It is dropped"),
         N_("It is kept for the retention period")],
        answer=2,
        why=N_("Core NATS delivers only to current subscribers; JetStream is the part of NATS that stores "
               "messages.")),
    "share-one-partition": Question(
        N_("Three consumers of one share group read a topic with a single partition. How many of them get "
           "records?"),
        [N_("One: the partition has one owner"), N_("None until the topic has three partitions"),
         N_("Two: one is kept as a standby"), N_("All three: the broker hands out records, not partitions")],
        answer=3,
        why=N_("A share group shares the records of a partition among its consumers; each record is acquired by "
               "one of them at a time.")),
    "released": Question(
        N_("worker-a takes a record and releases it; worker-b takes it next. What is its delivery count?"),
        [N_("1: it is the first time worker-b sees it"), N_("2: a release counts as a delivery"),
         N_("0: a released record starts over"), N_("It is dropped: released records are archived")],
        answer=1,
        why=N_("The broker counts deliveries per record; the second delivery has delivery_count() 2, so a "
               "consumer can tell a retry from a first try.")),
    "share-order": Question(
        N_("Two consumers of one Kafka share group take customer A's tasks A-1 and A-2; the first releases A-1. "
           "In which order are they finished?"),
        [N_("A-1, then A-2: a partition keeps its order"), N_("A-2 only: a released record is dropped"),
         N_("A-2, then A-1: a share group does not keep order across consumers"),
         N_("A-1 and A-2 together, in one batch")],
        answer=2,
        why=N_("Records of a share group are handed out one by one; a released record goes back and is taken "
               "again later, after records that were done in the meantime.")),
    "fanout": Question(
        N_("Three services each need every order. How does RabbitMQ do it?"),
        [N_("A fanout exchange that copies each message into one queue per service"),
         N_("Three consumers on one queue"), N_("It cannot"), N_("One consumer group per service")],
        answer=0,
        why=N_("Consumers on one queue compete for messages; fan-out needs a queue per consumer, filled by an "
               "exchange.")),
    "replay": Question(
        N_("Which system would you pick to replay last week's events into a new service?"),
        [N_("A RabbitMQ classic queue"), N_("Core NATS"), N_("Kafka (or NATS JetStream, or a RabbitMQ stream)"),
         N_("Any of them: all three keep messages after delivery")],
        answer=2,
        why=N_("Replay needs a stored, ordered history: a Kafka topic with enough retention, a JetStream stream "
               "or a RabbitMQ stream.")),
}

RECAP = ("fanout", "replay", "share-order")
