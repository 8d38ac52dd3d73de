"""Notebook 02's questions: order per partition, keys and the partitioner, growing a topic, finding records by time,
and the high watermark against the log end offset."""

from ..i18n import N_
from ..quiz import Question

QUESTIONS = {
    "order": Question(
        N_("You send the numbers 0, 1, 2, ... without keys to a 3-partition topic, then read the whole topic "
           "with one consumer. In what order do they come back?"),
        [N_("In the order sent: Kafka keeps the order of a topic"),
         N_("In no order at all, not even inside a partition"),
         N_("In order inside each partition, interleaved across partitions")],
        answer=2,
        why=N_("Order holds per partition; the consumer interleaves partitions as their fetches arrive.")),
    "same-key": Question(
        N_("A customer signs up, then changes plan twice; all three events carry the customer's e-mail as key, "
           "on a 3-partition topic. Where do they go?"),
        [N_("One partition per event, round robin"),
         N_("All to the same partition, in the order sent"),
         N_("To the partition whose leader has the least data")],
        answer=1,
        why=N_("The partition is computed from the key's hash, so equal keys always land in the same partition, "
               "and keep their order there.")),
    "grow": Question(
        N_("You grow a keyed topic from 3 to 4 partitions. What happens to the keys?"),
        [N_("Most keys map to a different partition from now on"),
         N_("None move: old keys stay where they are, new keys use the new partition"),
         N_("Exactly a quarter of the keys move")],
        answer=0,
        why=N_("The partition is hash % n; changing n changes the result for most keys, so per-key order breaks "
               "across the change.")),
    "by-time": Question(
        N_("The events are at 09:00, 09:10, ..., 10:50. You ask `offsets_for_times` for 10:05. Which event does "
           "the answer point at?"),
        [N_("The 10:10 event: the first at or after the time asked"),
         N_("The 10:00 event: the last one before the time asked"),
         N_("None: no event has exactly that time")],
        answer=0,
        why=N_("The time index answers with the first offset whose timestamp is at or after the time you give.")),
    "offsets-across": Question(
        N_("Partition 0 has offsets 0..99 and partition 1 has offsets 0..120. Which record was written first: "
           "offset 50 of partition 0, or offset 40 of partition 1?"),
        [N_("Offset 40 of partition 1: it has the lower offset"),
         N_("The offsets cannot tell you"),
         N_("Offset 50 of partition 0")],
        answer=1,
        why=N_("Each partition counts its own offsets; they say nothing about order across partitions. "
               "Timestamps can help, offsets cannot.")),
    "librdkafka": Question(
        N_("A confluent-kafka producer with default settings and a kafka-python producer both send the key "
           "\"ana@example.com\". Do they pick the same partition?"),
        [N_("Always: the key decides the partition"),
         N_("Never"),
         N_("Not necessarily: librdkafka hashes with CRC32 unless partitioner=murmur2_random")],
        answer=2,
        why=N_("librdkafka's default partitioner is consistent_random (CRC32); Java and kafka-python use murmur2.")),
    "high-watermark": Question(
        N_("A partition has three in-sync replicas. The leader has appended offsets 0..9; both followers have "
           "copied offsets 0..6 so far. What is the high watermark?"),
        [N_("10: the high watermark is the offset the next record will get"),
         N_("7: consumers can read offsets 0..6 for now"),
         N_("It depends on which replica the consumer reads from")],
        answer=1,
        why=N_("The high watermark is the offset up to which every in-sync replica has the records; 10 is the "
               "leader's log end offset.")),
}

RECAP = ("offsets-across", "librdkafka", "high-watermark")
