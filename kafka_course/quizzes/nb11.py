"""Notebook 11's questions: Spark Structured Streaming on the fakeusers topic."""

from ..i18n import N_
from ..quiz import Question

QUESTIONS = {
    "batches": Question(
        N_("600 sign-ups are in the topic and maxOffsetsPerTrigger is 300. How many micro-batches read "
           "records?"),
        [N_("1: a trigger reads everything there is"), N_("2: at most 300 records each"),
         N_("600: one per record"), N_("3: one per partition")],
        answer=1,
        why=N_("maxOffsetsPerTrigger caps each batch, shared among the partitions; a last batch may read "
               "nothing and only move the watermark.")),
    "watermark": Question(
        N_("The watermark delay is 10 seconds and the latest sign-up seen has event time 12:00:30. Which windows "
           "can still change?"),
        [N_("Every window: Spark keeps all the state"), N_("None: a window is final when it ends"),
         N_("Only windows that end after the latest event, 12:00:30"),
         N_("Only windows that end after 12:00:20")],
        answer=3,
        why=N_("The watermark is 12:00:30 − 10 s = 12:00:20; windows that end before it are final, later ones "
               "can still receive sign-ups.")),
    "restart": Question(
        N_("The query restarts with the same checkpoint after 205 new records arrived. How many records does it "
           "read?"),
        [N_("All of them, from the earliest offset"), N_("None: a checkpoint only stores state"),
         N_("The 205 new ones"), N_("Only the records of the last window")],
        answer=2,
        why=N_("The checkpoint stores the offsets already processed, so the restarted query continues after "
               "them.")),
    "append-twice": Question(
        N_("A query writes final windows to Kafka in append mode. Can a consumer of that topic see one window's "
           "count twice?"),
        [N_("No: append mode writes each window exactly once"),
         N_("Yes: the Kafka sink is at-least-once, so a batch retried after a failure is written again"),
         N_("Only in update mode"), N_("No: the checkpoint makes the Kafka sink transactional")],
        answer=1,
        why=N_("Append writes a window once per successful batch, but Spark's Kafka sink is at-least-once: a "
               "batch that failed after writing is run again on restart. Consumers deduplicate by key "
               "(window and country).")),
    "late": Question(
        N_("Five sign-ups arrive with event times a minute and a half in the past, after their windows were "
           "written. What happens to them?"),
        [N_("The written counts are corrected"), N_("They are dropped as too late, and the written counts stay"),
         N_("The query fails"), N_("They open new windows at the current time")],
        answer=1,
        why=N_("Behind the watermark, records are dropped (numRowsDroppedByWatermark); append mode never revises "
               "a window it wrote.")),
}

RECAP = ("watermark", "append-twice", "late")
