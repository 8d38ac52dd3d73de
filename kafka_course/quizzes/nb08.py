"""Notebook 08's questions: aborted records, the last stable offset, consume-transform-produce, fencing."""

from ..i18n import N_
from ..quiz import Question

QUESTIONS = {
    "aborted-in-log": Question(
        N_("Three orders were flushed to the brokers, then their transaction was aborted. Are they in the log?"),
        [N_("Yes: a read_uncommitted reader gets them, read_committed readers skip them"),
         N_("No: the abort deletes them from the log"),
         N_("Only until the next log compaction")],
        answer=0, why=N_("Aborted records stay in the log; the ABORT marker and the aborted-transaction index let "
                         "read_committed readers skip them.")),
    "open-transaction": Question(
        N_("A transaction is open in a partition, and a plain record (no transaction) is written after it. "
           "What does a read_committed reader get of that partition?"),
        [N_("The plain record at once: only transactional records wait"),
         N_("Everything, the pending order included"),
         N_("Nothing from the open transaction's first offset on, the plain record included, "
            "until the transaction ends")],
        answer=2, why=N_("read_committed readers stop at the last stable offset, the first offset of the oldest open "
                         "transaction, so every later record waits too.")),
    "after-kills": Question(
        N_("The worker was killed with kill -9 several times, then ran once undisturbed. How many times does each "
           "input appear in the committed output?"),
        [N_("Once or twice: the records of the killed transactions are there too"),
         N_("Exactly once"),
         N_("Some are missing: a kill loses the batch it was working on")],
        answer=1, why=N_("A killed transaction is aborted by the next init_transactions and its offsets were never "
                         "committed, so its input is processed again in a transaction that commits.")),
    "zombie": Question(
        N_("Two producers share a transactional.id; the second calls init_transactions while the first has a "
           "transaction open. What does a read_committed reader see afterwards?"),
        [N_("Both invoices: each producer commits its own transaction"),
         N_("Only the old instance's invoice: it started first"),
         N_("Only the new instance's invoice: the old transaction is aborted and its commit refused")],
        answer=2, why=N_("init_transactions bumps the epoch of the transactional.id: the coordinator aborts the old "
                         "transaction and refuses every later request of the older epoch.")),
    "why-exactly-once": Question(
        N_("Why does the committed output hold every input exactly once, despite the kills?"),
        [N_("The output records and the consumed offsets are committed in one transaction"),
         N_("The producer is idempotent"),
         N_("The worker commits its offsets after every record")],
        answer=0, why=N_("send_offsets_to_transaction puts the input progress in the same atomic commit as the output; "
                         "idempotence alone only removes the producer's own retries.")),
    "timeout": Question(
        N_("A producer dies with a transaction open. How long do read_committed readers of its partitions wait?"),
        [N_("Forever, until the producer is restarted"),
         N_("Until transaction.timeout.ms has passed and the coordinator aborts the transaction"),
         N_("Not at all: the broker notices the closed connection and aborts at once")],
        answer=1, why=N_("The coordinator aborts transactions older than transaction.timeout.ms (one minute by "
                         "default); until then the last stable offset stays put. Keep transactions short.")),
}

RECAP = ("why-exactly-once", "timeout", "after-kills")
