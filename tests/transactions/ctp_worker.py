"""A consume-transform-produce worker for the exactly-once test (run as a process).

It reads ``input`` in a consumer group, upper-cases each value into ``output``, and
commits its consumed offsets inside the same transaction
(``send_offsets_to_transaction``). It prints ``in-flight`` when a transaction's output
has reached the broker and ``committed`` when it is committed; the test SIGKILLs it
right after an ``in-flight`` line, at a random point of the stream.
"""

from __future__ import annotations

import sys
import time

from confluent_kafka import Consumer, Producer


BATCH = 10  # small transactions, so a kill often lands inside one
WORK_S = 0.02  # pretend processing time per transaction


def main(bootstrap: str, rounds: int) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "ctp", "enable.auto.commit": False,
                         "isolation.level": "read_committed", "auto.offset.reset": "earliest",
                         "session.timeout.ms": 6000,
                         # static membership: a restarted worker takes its old place at once
                         "group.instance.id": "ctp-worker"})
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": "ctp-worker",
                         "transaction.timeout.ms": 10000})
    producer.init_transactions(20)
    consumer.subscribe(["input"])
    for _ in range(rounds):
        batch = [m for m in consumer.consume(BATCH, 0.5) if m.error() is None]
        if not batch:
            continue
        producer.begin_transaction()
        for m in batch:
            producer.produce("output", m.value().upper(), m.key(), partition=m.partition())
        producer.flush(20)
        print("in-flight", flush=True)  # the batch's output is on the broker, not yet committed
        time.sleep(WORK_S)
        producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                             consumer.consumer_group_metadata(), 20)
        producer.commit_transaction(20)
        print("committed", len(batch), flush=True)
    consumer.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
