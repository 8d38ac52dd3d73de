"""Record the share-group request frames confluent-kafka 2.16's ``ShareConsumer`` sends
(run by hand; the frames are committed in ``golden.json``).

    python -m tests.share.record_golden

A share consumer joins, fetches, releases a record, commits its acknowledgements with
ShareAcknowledge, fetches again with acknowledgements piggybacked, and closes; every
share-group frame is kept, in order (a repeated heartbeat once).
"""

from __future__ import annotations

import json
from pathlib import Path

from minikafka import Cluster

OUT = Path(__file__).with_name("golden.json")
SHARE_APIS = {76: "ShareGroupHeartbeat", 77: "ShareGroupDescribe", 78: "ShareFetch", 79: "ShareAcknowledge"}


def record() -> list[dict]:
    frames: list[bytes] = []
    cluster = Cluster().start()
    real = cluster.dispatchers[1].handle_frame

    async def keep(frame: bytes, host: str = "127.0.0.1", conn: int = 0):
        api_key = int.from_bytes(frame[0:2], "big")
        if api_key in SHARE_APIS and bytes(frame[8:]) not in {f[8:] for f in frames}:  # past the correlation id
            frames.append(bytes(frame))
        return await real(frame, host, conn)
    for listener in cluster.listeners.values():
        listener.handle_frame = keep
    try:
        drive(cluster.bootstrap_servers)
    finally:
        cluster.stop()
    return [{"client": "confluent", "api": SHARE_APIS[int.from_bytes(f[0:2], "big")],
             "api_key": int.from_bytes(f[0:2], "big"), "version": int.from_bytes(f[2:4], "big"), "hex": f.hex()}
            for f in frames]


def drive(bootstrap: str) -> None:
    from confluent_kafka import AcknowledgeType

    from tests.share.helpers import earliest, explicit_consumer, poll_one, produce_batches
    earliest(bootstrap, "golden")
    produce_batches(bootstrap, "golden", 3)
    consumer = explicit_consumer(bootstrap, "golden", "golden")
    consumer.acknowledge(poll_one(consumer), AcknowledgeType.RELEASE)
    consumer.commit_sync(10)
    consumer.acknowledge(poll_one(consumer))
    consumer.acknowledge(poll_one(consumer))  # this poll carries the previous acknowledgement
    consumer.close()


if __name__ == "__main__":
    OUT.write_text(json.dumps(record(), indent=1) + "\n")
    print(f"wrote {OUT}")
