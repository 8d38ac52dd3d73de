"""Notebook 09's questions: a Faker producer, its JSON bytes, its key and its pacing loop."""

from ..i18n import N_
from ..quiz import Question

QUESTIONS = {
    "utf8-bytes": Question(
        N_("The name \"José Núñez\" has 10 characters, three of them accented (é, ñ, ú). How many bytes does it "
           "take in UTF-8 JSON written with `ensure_ascii=False`?"),
        [N_("10: one byte per character"), N_("13: each accented letter takes two bytes"),
         N_("20: UTF-8 uses two bytes for every character"), N_("Fewer than 10: JSON compresses text")],
        answer=1,
        why=N_("UTF-8 writes é, ñ and ú in two bytes each, so 7 + 3 × 2 = 13; Kafka's size limits count bytes, "
               "not characters.")),
    "country-keys": Question(
        N_("You key the sign-ups by country (7 countries) on a topic of 12 partitions. How many partitions can "
           "ever receive records?"),
        [N_("All 12: the producer spreads keys round robin"), N_("Exactly 1: keyed records share a partition"),
         N_("At most 7: each country always goes to one partition"), N_("It depends on the number of brokers")],
        answer=2,
        why=N_("A key always maps to the same partition (murmur2 of the key, modulo the partition count), so "
               "seven keys reach seven partitions at most, and two countries may share one.")),
    "paced-loop": Question(
        N_("The loop sends COUNT = 200 sign-ups at RATE = 100 per second, sleeping until each record's slot. "
           "About how long does it run?"),
        [N_("About 2 seconds: the sleep holds the rate"), N_("Almost no time: produce() only queues the record"),
         N_("About 200 seconds: produce() waits for each acknowledgement"),
         N_("About 4 seconds per record, as in the original script")],
        answer=0,
        why=N_("produce() only queues, so without the sleep the loop would end at once; sleeping until "
               "start + i / RATE keeps 100 records a second, 200 records in about 2 s.")),
    "faster-client": Question(
        N_("Which client sends the same 5,000 sign-ups faster here?"),
        [N_("kafka-python: pure Python has less overhead"), N_("Exactly the same: the broker sets the pace"),
         N_("It depends on acks: acks=1 is the default of one of them"),
         N_("confluent-kafka: librdkafka batches and sends in C")],
        answer=3,
        why=N_("confluent-kafka does the batching, compression and network work in C (librdkafka); "
               "kafka-python does it in Python. Both clients default to acks=all today.")),
    "seed-fields": Question(
        N_("Two runs of FakeUsers(seed=42) without start and interval: which fields are the same?"),
        [N_("Every field"), N_("Nothing: Faker is random"),
         N_("The people (names, ids, countries), but not the event time")],
        answer=2,
        why=N_("The seed fixes Faker's choices; the event time comes from the clock unless start and interval "
               "are given.")),
    "email-key": Question(
        N_("Why does the packaged `fakeusers` producer key by user id rather than by e-mail?"),
        [N_("A person can change their e-mail; a key that changes splits their history over partitions"),
         N_("E-mails are too long to be keys"), N_("Kafka keys must be numbers"),
         N_("E-mail keys go round robin")],
        answer=0,
        why=N_("Order holds per key; an id that never changes keeps every event of one person in one partition, "
               "an e-mail that changes moves the later events to another partition.")),
}

RECAP = ("seed-fields", "email-key", "faster-client")
