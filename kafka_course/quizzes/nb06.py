"""Notebook 06's questions: retention by whole segments, the active segment, compaction, committed offsets."""

from ..i18n import N_
from ..quiz import Question

QUESTIONS = {
    "retention-steps": Question(
        N_("The topic keeps 3 s of data and rolls a segment every second; a producer writes ten records a second. "
           "How does the log start offset move?"),
        [N_("Smoothly, always exactly 3 s of records behind the high watermark"),
         N_("In steps: a whole segment at a time"),
         N_("Not at all while the producer writes: retention waits for a quiet partition")],
        answer=1, why=N_("Retention deletes whole segments whose newest record is older than retention.ms, so the "
                         "log start offset jumps by one segment at a time.")),
    "active-segment": Question(
        N_("The producer has stopped. A few seconds later, what is left of the window topic?"),
        [N_("Nothing: once the active segment's newest record is older than retention.ms, it is rolled and "
            "deleted too"),
         N_("The active segment: Kafka never deletes the segment being written"),
         N_("Everything: retention only runs while records arrive")],
        answer=0, why=N_("Time retention covers the active segment as well: Kafka rolls a new, empty one and "
                         "deletes the expired segment, so an idle partition can be emptied. Offsets keep counting.")),
    "compaction-offsets": Question(
        N_("After the cleaner has compacted the prices, what happens to the offsets of the records that stay?"),
        [N_("They are renumbered from 0, without gaps"),
         N_("Only the records in the active segment are renumbered"),
         N_("They stay as they were: the log now has gaps, and consumers skip them")],
        answer=2, why=N_("Compaction removes records but never renumbers; an offset stays a permanent address.")),
    "tombstone": Question(
        N_("You produce key \"flute\" with a null value to a compacted topic. What does it mean?"),
        [N_("An error: compacted topics refuse null values"),
         N_("A tombstone: the key is deleted, and the tombstone itself goes after delete.retention.ms"),
         N_("Nothing: records with a null value are dropped")],
        answer=1, why=N_("A null value is a tombstone; it is kept for delete.retention.ms so every reader can "
                         "learn of the deletion, then the cleaner removes it too.")),
    "offsets-where": Question(
        N_("A consumer group commits its offsets. Where are they stored?"),
        [N_("In the compacted internal topic __consumer_offsets"),
         N_("In ZooKeeper"),
         N_("On the consumer's local disk")],
        answer=0, why=N_("Since Kafka 0.8.2, commits are records keyed by (group, topic, partition) in "
                         "__consumer_offsets; ZooKeeper is gone altogether since Kafka 4.0.")),
}

RECAP = ("tombstone", "offsets-where", "retention-steps")
