"""Notebook 01's questions: groups read everything, members of a group share it, commits resume,
the Observer pattern against publish/subscribe, and the shell's lag and replay."""

from ..i18n import N_
from ..quiz import Question

QUESTIONS = {
    "groups-each-read-all": Question(
        N_("Three departments read the 30 sales, each with a consumer group of its own. How many sales does each"
           " one get?"),
        [N_("10 each: the groups share the sales"),
         N_("30 for the first group to read, none for the others"),
         N_("30 each: every group reads the whole topic")],
        answer=2,
        why=N_("Each consumer group reads the whole topic independently: publish/subscribe between groups.")),
    "second-run": Question(
        N_("The email service runs a second time with the same group name. How many sales does it handle?"),
        [N_("All 30 again: a consumer always starts at the beginning"),
         N_("None: the group resumes from its committed offsets"),
         N_("Only the sales of one partition")],
        answer=1,
        why=N_("The group committed its offsets after the first run, so it continues at the end of the log.")),
    "two-members": Question(
        N_("Two consumers with the same group id read a topic with 3 partitions. How is each sale handled?"),
        [N_("By exactly one of them: each partition has one owner in the group"),
         N_("By both: every consumer gets every record"),
         N_("In turns, one consumer per record")],
        answer=0,
        why=N_("Inside a group each partition is owned by one member, so each record goes to one member: a queue.")),
    "fraud": Question(
        N_("A fraud check must see every sale. What changes in the producer?"),
        [N_("The producer needs the fraud service's address"),
         N_("The producer sends every sale twice"),
         N_("Nothing: the fraud service reads the topic with a group of its own")],
        answer=2,
        why=N_("The producer only knows the topic; a new group is a new, independent reader.")),
    "observer": Question(
        N_("What separates the Observer pattern from publish/subscribe?"),
        [N_("Nothing: they are two names for the same thing"),
         N_("Observers are called at once, inside the subject's program; subscribers get messages from a broker,"
            " later, in their own processes"),
         N_("Observers can be written in any language, subscribers cannot")],
        answer=1,
        why=N_("Observer is an in-process, synchronous call; publish/subscribe puts a broker between the two "
               "sides.")),
    "lag": Question(
        N_("`consumer-groups --describe` shows CURRENT-OFFSET 4 and LOG-END-OFFSET 7 for a partition. What is "
           "the lag?"),
        [N_("3: records in the partition that the group has not handled yet"),
         N_("7: every record the group still has to read"),
         N_("4: the records the group has read")],
        answer=0,
        why=N_("Lag is the log end offset minus the group's committed offset.")),
    "reset": Question(
        N_("You reset the group `welcome` with `--reset-offsets --to-earliest --execute`, then run its consumer "
           "again. What does it print?"),
        [N_("Nothing: a group never reads a record twice"),
         N_("Only the records produced after the reset"),
         N_("Every record still in the log, again")],
        answer=2,
        why=N_("The reset moves the group's committed offsets back to the log start; the records were never "
               "removed.")),
}

RECAP = ("fraud", "observer", "lag", "reset")
