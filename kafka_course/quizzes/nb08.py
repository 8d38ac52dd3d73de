"""Notebook 08's questions: aborted records, the last stable offset, consume-transform-produce, fencing,
the epoch under transaction protocol v1 and v2."""

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
    "epoch-v1": Question(
        N_("One confluent-kafka producer (transaction protocol v1) commits three transactions in a row. What "
           "does DescribeTransactions show as its producer epoch after each commit?"),
        [N_("The same epoch each time: the one init_transactions gave it"),
         N_("One more after every commit"),
         N_("A new producer id after every commit")],
        answer=0, why=N_("Under v1 only init_transactions bumps the epoch; transaction protocol v2 (KIP-890 part 2) "
                         "bumps it at the end of every transaction.")),
    "late-write": Question(
        N_("Under transaction protocol v2, a write of the first transaction (sent at the epoch the producer had "
           "then) reaches the broker again after three commits. What happens to it?"),
        [N_("It is added to the producer's next transaction"),
         N_("It is refused: its epoch is older than the one the partition has seen in the commit markers"),
         N_("It is written as a duplicate and becomes visible to read_committed readers")],
        answer=1, why=N_("Every commit bumped the epoch and the markers carried it, so the partition refuses a write "
                         "of an older epoch (INVALID_PRODUCER_EPOCH). Under v1 the next transaction has the same "
                         "epoch, so a late write could slip into it.")),
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

RECAP = ("why-exactly-once", "timeout", "after-kills", "epoch-v1")
