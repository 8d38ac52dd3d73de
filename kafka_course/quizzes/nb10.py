"""Notebook 10's questions: the php-rdkafka low-level consumer, its var_dump, and the fix with a group."""

from ..i18n import N_
from ..quiz import Question

QUESTIONS = {
    "partition-zero": Question(
        N_("The PHP-style consumer reads partition 0 of a 3-partition topic holding 90 sign-ups. About how many "
           "does it print?"),
        [N_("90: a consumer reads the whole topic"), N_("0: without a group it reads nothing"),
         N_("About 30: only partition 0's share"), N_("90, but in a random order")],
        answer=2,
        why=N_("The low-level consumer reads only the partition it names; the others are never read and nothing "
               "warns you.")),
    "second-run": Question(
        N_("You run the PHP-style consumer a second time. What does it print?"),
        [N_("Only the sign-ups that arrived since the first run"),
         N_("The same sign-ups again, from the beginning"), N_("Nothing: they were consumed"),
         N_("An error: the partition is still assigned")],
        answer=1,
        why=N_("The low-level consumer commits nothing and starts at RD_KAFKA_OFFSET_BEGINNING every time; "
               "reading a record never removes it.")),
    "group-restart": Question(
        N_("A consumer group has read the whole topic; 5 new sign-ups arrive and it restarts. How many does it "
           "read?"),
        [N_("5: it resumes after its committed offsets"), N_("All of them again"),
         N_("0: a group reads each topic once"), N_("About a third of 5: one partition's share")],
        answer=0,
        why=N_("The group committed its offsets when it closed, so the restart continues after them, on every "
               "partition.")),
    "string-bytes": Question(
        N_("In the var_dump, `string(94)` for a payload of 92 characters means..."),
        [N_("Two bytes of padding"), N_("A corrupted record"),
         N_("The payload has two accented letters: var_dump counts bytes"), N_("Two header bytes")],
        answer=2,
        why=N_("PHP's string length is in bytes, and UTF-8 uses two bytes for letters such as é or ñ.")),
    "partition-eof": Question(
        N_("An old PHP script prints \"No more messages\" at the end of a partition; after upgrading librdkafka it "
           "never does. Why?"),
        [N_("The broker stopped sending end-of-partition markers"),
         N_("`enable.partition.eof` has been off by default since librdkafka 1.0"),
         N_("The topic has fewer messages now"), N_("PHP 8 removed the constant")],
        answer=1,
        why=N_("End of partition is an event librdkafka makes up, only when `enable.partition.eof` is true; "
               "it was on by default before 1.0.")),
}

RECAP = ("string-bytes", "partition-eof", "group-restart")
