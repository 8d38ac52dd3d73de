"""Record golden request frames from the real clients (run by hand; the frames are committed).

    python -m tests.protocol.record_golden

Starts an embedded minikafka whose dispatcher keeps the first frame of every
(API, version, client) it sees, drives kafka-python and confluent-kafka through topic
admin, produce, fetch, a consumer group with commits and a transaction, and writes
``golden.json``: for each frame, the client, API key, version and the bytes in hex.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from minikafka import Cluster

OUT = Path(__file__).with_name("golden.json")


def record() -> list[dict]:
    frames: dict[tuple, bytes] = {}
    cluster = Cluster().start()
    dispatcher = cluster.dispatchers[1]
    real = dispatcher.handle_frame

    async def keep(frame: bytes, host: str = "127.0.0.1", conn: int = 0):
        api_key, version = int.from_bytes(frame[0:2], "big"), int.from_bytes(frame[2:4], "big")
        client_len = int.from_bytes(frame[8:10], "big", signed=True)
        client = frame[10:10 + max(client_len, 0)].decode(errors="replace")
        frames.setdefault((client.split("-")[0], api_key, version), bytes(frame))
        return await real(frame, host, conn)
    dispatcher.handle_frame = keep  # type: ignore[method-assign]
    for listener in cluster.listeners.values():
        listener.handle_frame = keep
    try:
        drive_confluent(cluster.bootstrap_servers)
        drive_kafka_python(cluster.bootstrap_servers)
    finally:
        cluster.stop()
    return [{"client": c, "api_key": k, "version": v, "hex": f.hex()} for (c, k, v), f in sorted(frames.items())]


def drive_confluent(bootstrap: str) -> None:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "confluent"})
    admin.create_topics([NewTopic("golden", 1, 1)])["golden"].result(10)
    admin.describe_configs([ConfigResource("topic", "golden")])
    producer = Producer({"bootstrap.servers": bootstrap, "client.id": "confluent", "transactional.id": "golden-tx"})
    producer.init_transactions(10)
    producer.begin_transaction()
    producer.produce("golden", b"value", b"key")
    producer.commit_transaction(10)
    consumer = Consumer({"bootstrap.servers": bootstrap, "client.id": "confluent", "group.id": "golden-g",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe(["golden"])
    for _ in range(50):
        msg = consumer.poll(0.2)
        if msg is not None and not msg.error():
            consumer.commit(msg, asynchronous=False)
            break
    consumer.close()


def drive_kafka_python(bootstrap: str) -> None:
    from kafka import KafkaConsumer, KafkaProducer
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="kafkapython", acks="all")
    producer.send("golden", b"v2", key=b"k2").get(10)
    producer.close()
    consumer = KafkaConsumer("golden", bootstrap_servers=bootstrap, client_id="kafkapython",
                             group_id="golden-kp-" + uuid.uuid4().hex[:4], auto_offset_reset="earliest",
                             consumer_timeout_ms=5000)
    for _ in consumer:
        consumer.commit()
        break
    consumer.close()


if __name__ == "__main__":
    OUT.write_text(json.dumps(record(), indent=1) + "\n")
    print(f"wrote {OUT}")
