"""Notebook 07's questions: where the commit sits, lost acknowledgements, what exactly-once needs."""

from ..i18n import N_
from ..quiz import Question

QUESTIONS = {
    "commit-first": Question(
        N_("The loop commits before the work, and a crash comes in the middle of a batch. What happens to the "
           "rest of that batch?"),
        [N_("It is processed again after the restart"),
         N_("Another member of the group gets it"),
         N_("It is lost: the committed offset is already past it")],
        answer=2, why=N_("The restart begins at the committed offset; committing before the work skips whatever "
                         "was not done yet.")),
    "process-first": Question(
        N_("Now the commit comes after the work. What do the crashes cost?"),
        [N_("Payments processed since the last commit are processed again; none is lost"),
         N_("Payments are lost, as before"),
         N_("Nothing: processing before committing is exactly-once")],
        answer=0, why=N_("The restart begins at the last commit, so everything processed after it is repeated: "
                         "at-least-once.")),
    "lost-acks": Question(
        N_("Three acknowledgements are lost in a run of 30 one-record requests. How many duplicates are stored, "
           "without and with idempotence?"),
        [N_("3 and 3: the broker cannot tell a retry from a new record"),
         N_("3 without idempotence, 0 with it"),
         N_("0 and 0: acks=all already prevents duplicates")],
        answer=1, why=N_("A retry after a lost acknowledgement writes the batch again, unless the broker recognises "
                         "it by its producer id and sequence number; acks=all says nothing about retries.")),
    "window": Question(
        N_("A consumer commits after every record instead of every batch. What is left of the window?"),
        [N_("Nothing: per-record commits are exactly-once"),
         N_("A crash between the work and the commit of one record repeats that record"),
         N_("Each crash loses one record")],
        answer=1, why=N_("Work and commit are still two actions; a crash between them repeats one record. The "
                         "window shrinks, at the price of a commit request per record, but never closes.")),
    "eos": Question(
        N_("Which of these makes a consume-transform-produce service exactly-once inside Kafka?"),
        [N_("Committing after every record"),
         N_("An idempotent producer alone"),
         N_("A transaction that writes the output and commits the input offsets together")],
        answer=2, why=N_("Only an atomic transaction removes the window between writing results and recording "
                         "progress; notebook 08 shows it.")),
}

RECAP = ("process-first", "window", "eos")
