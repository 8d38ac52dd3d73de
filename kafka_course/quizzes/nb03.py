"""Notebook 03's questions: a lost acknowledgement, the default acks, linger, compression and the size limit."""

from ..i18n import N_
from ..quiz import Question

QUESTIONS = {
    "lost-ack": Question(
        N_("A producer with idempotence off sends one record; the broker stores it but the acknowledgement is lost, "
           "and the producer retries. How many copies does the topic hold?"),
        [N_("0"), N_("1"), N_("2")],
        answer=2,
        why=N_("Without idempotence the broker cannot tell a retry from a new record; with it, the sequence number "
               "exposes the duplicate.")),
    "acks-default": Question(
        N_("You create a producer with no settings at all, with kafka-python 3, librdkafka or a current Java "
           "client. Which acks does it use?"),
        [N_("all: it waits for every in-sync replica"),
         N_("1: it waits for the leader only, the classic default"),
         N_("0: it does not wait")],
        answer=0,
        why=N_("acks=all has been the default of the Java client since Kafka 3.0, and it is librdkafka's and "
               "kafka-python 3's default too; acks=1 was the Java default before 3.0.")),
    "linger": Question(
        N_("Records arrive one per millisecond. You raise linger.ms from 0 to 50. What happens?"),
        [N_("Fewer records per request"),
         N_("More records per request, and each record waits a bit longer"),
         N_("Nothing: linger only matters for large records")],
        answer=1,
        why=N_("The producer waits up to 50 ms to fill a batch, so requests carry dozens of records at the cost of "
               "some latency.")),
    "compression": Question(
        N_("Which compression codec stores the JSON sign-ups in the fewest bytes here?"),
        [N_("none"), N_("lz4 or snappy"), N_("gzip or zstd")],
        answer=2,
        why=N_("gzip and zstd squeeze hardest; snappy and lz4 trade ratio for speed.")),
    "too-big": Question(
        N_("You produce a 2 MB record with confluent-kafka's default settings. Where is it refused?"),
        [N_("By the broker, with MESSAGE_TOO_LARGE"), N_("By the client, before it is sent"),
         N_("Nowhere: it is stored")],
        answer=1,
        why=N_("The client's message.max.bytes (about 1 MB) refuses it locally; raise it and the broker refuses it "
               "instead.")),
}

RECAP = ("lost-ack", "linger", "compression", "too-big")
