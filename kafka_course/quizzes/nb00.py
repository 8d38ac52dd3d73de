"""Notebook 00's questions: advertised listeners, offsets from 0 that only grow, reading that does not delete,
and the leader that takes a partition's writes."""

from ..i18n import N_
from ..quiz import Question

QUESTIONS = {
    "advertised": Question(
        N_("The bootstrap address answers, but the broker advertises `kafka:9092`, a name your laptop cannot "
           "resolve. What happens to a producer on your laptop?"),
        [N_("It works: a client only needs the bootstrap address"),
         N_("Its metadata request works, then sending fails: it connects to the advertised address"),
         N_("It falls back to the bootstrap address by itself")],
        answer=1,
        why=N_("After the metadata request, clients talk to the address each broker advertises; the fix is "
               "advertised.listeners on the broker.")),
    "first-offsets": Question(
        N_("You send five records to the new topic, which has one partition. Which offsets will they get?"),
        [N_("1 to 5: the first record is number 1"),
         N_("Five random numbers, unique in the topic"),
         N_("0 to 4: an offset is a position in the log, from 0")],
        answer=2,
        why=N_("Each partition numbers its records from 0, in the order they were appended.")),
    "reread": Question(
        N_("A new consumer reads the topic again, from the earliest offset. What does it get?"),
        [N_("The same five records, at the same offsets"),
         N_("Nothing: the first consumer consumed them"),
         N_("Only the records produced since the first read")],
        answer=0,
        why=N_("Reading does not remove anything in Kafka; records stay until retention deletes them.")),
    "offsets-continue": Question(
        N_("The topic holds offsets 0 to 4. You send five more records. Which offset does the first of them get?"),
        [N_("0: every produce call starts again at zero"),
         N_("5: offsets continue where the log ended"),
         N_("A random offset")],
        answer=1,
        why=N_("An offset is a position in the partition's log; it only grows and is never reused.")),
    "fix-where": Question(
        N_("A broker advertises an address your clients cannot reach. Where do you fix it?"),
        [N_("In every client, with a different bootstrap address"),
         N_("In the client's retry settings"),
         N_("On the broker, in `advertised.listeners`")],
        answer=2,
        why=N_("Clients use whatever address the broker advertises; only the broker's advertised.listeners "
               "changes it.")),
    "leader": Question(
        N_("Which broker does a producer send a partition's records to?"),
        [N_("The partition's leader, found in the metadata"),
         N_("The broker it bootstrapped from"),
         N_("Any broker: they forward records to each other")],
        answer=0,
        why=N_("Writes go to the leader of the partition; the client learns who that is from the metadata.")),
}

RECAP = ("offsets-continue", "fix-where", "leader")
