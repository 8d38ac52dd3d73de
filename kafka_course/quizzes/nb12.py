"""Notebook 12's questions: schemas, Connect, Faust and MirrorMaker 2."""

from ..i18n import N_
from ..quiz import Question

QUESTIONS = {
    "backward-first": Question(
        N_("Under BACKWARD compatibility, version 2 adds an `email` with a default. Which side must upgrade "
           "first?"),
        [N_("Producers: they write the new field first"), N_("Neither: BACKWARD means any order"),
         N_("Consumers: a reader on the new schema must read old records"),
         N_("The brokers: they validate the schema")],
        answer=2,
        why=N_("BACKWARD guarantees that the new schema reads old data; consumers on the new schema can then meet "
               "both. The brokers never look at schemas.")),
    "avro-header": Question(
        N_("What are the first five bytes of a record written by confluent-kafka's AvroSerializer?"),
        [N_("A magic byte 0 and the schema id, 4 bytes big-endian"), N_("The Avro schema's fingerprint"),
         N_("The subject name's length and the version"), N_("A CRC of the body")],
        answer=0,
        why=N_("The deserializer reads the id and fetches that exact schema from the registry: "
               "GET /schemas/ids/{id}.")),
    "replay-rows": Question(
        N_("The JDBC sink replays every sale under a new connector name. How many rows does the table have "
           "afterwards?"),
        [N_("Twice as many: every record is written again"), N_("None: the replay is refused"),
         N_("Only the rows written since the pause"), N_("One per sale: the sink upserts by id")],
        answer=3,
        why=N_("At-least-once delivery plus an idempotent write (an upsert by key) is effectively once for the "
               "table; the records were still written twice.")),
    "mirror-resume": Question(
        N_("A group committed offset 12 on the primary, after the last transaction marker. Where does it resume "
           "on the backup, whose copy ends at offset 9?"),
        [N_("At 9, exactly"), N_("At 12: offsets are copied as they are"),
         N_("At 7: one past the last offset sync, so two orders are read again"),
         N_("At 0: offsets are not translated")],
        answer=2,
        why=N_("Translation goes through the latest sync at or below the offset; anything past a sync maps to one "
               "past its downstream offset, so nothing is skipped.")),
    "repartition": Question(
        N_("The page views are keyed by user. Why does the Faust app write every view to a repartition topic "
           "before counting per page?"),
        [N_("To keep a backup copy of the input"),
         N_("So that every view of a page reaches the one partition, and task, that owns that page's count"),
         N_("Because tables can only read compacted topics"), N_("To slow the input down")],
        answer=1,
        why=N_("A count per page is correct only if one task sees all views of that page; re-keying by page "
               "through a repartition topic sends them to one partition. Kafka Streams' groupBy does the same.")),
}

RECAP = ("avro-header", "repartition", "mirror-resume")
