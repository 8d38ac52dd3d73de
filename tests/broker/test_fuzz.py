"""Random and mutated frames never take the broker down (a malformed frame closes
only the connection that sent it), and a normal client is served afterwards."""

from __future__ import annotations

import datetime
import random
import socket
import struct

from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.fetch.v11.request import FetchPartition, FetchRequest, FetchTopic
from kio.schema.metadata.v9.request import MetadataRequest, MetadataRequestTopic
from kio.schema.produce.v8.request import PartitionProduceData, ProduceRequest, TopicProduceData

from minikafka import records
from tests.rawclient import RawClient

SEED = 20261122
ROUNDS = 3000


def seed_frames(bootstrap: str) -> list[bytes]:
    """Valid requests of several APIs, as the starting point for mutation."""
    raw = RawClient(bootstrap)
    batch = records.build_batch([records.Record(0, 1, b"k", b"v" * 20)])
    reqs = [
        (ApiVersionsRequest(client_software_name="fuzz", client_software_version="1"), 18, 3),
        (MetadataRequest(topics=(MetadataRequestTopic(name="fuzzed"),), allow_auto_topic_creation=True,
                         include_cluster_authorized_operations=False, include_topic_authorized_operations=False), 3, 9),
        (ProduceRequest(transactional_id=None, acks=1, timeout=datetime.timedelta(seconds=1),
                        topic_data=(TopicProduceData(name="fuzzed", partition_data=(
                            PartitionProduceData(index=0, records=batch),)),)), 0, 8),
        (FetchRequest(replica_id=-1, max_wait=datetime.timedelta(milliseconds=10), min_bytes=1, max_bytes=1 << 20,
                      isolation_level=0, session_id=0, session_epoch=-1,
                      topics=(FetchTopic(topic="fuzzed", partitions=(FetchPartition(
                          partition=0, current_leader_epoch=-1, fetch_offset=0, log_start_offset=-1,
                          partition_max_bytes=1 << 20),)),), forgotten_topics_data=(), rack_id=""), 1, 11),
    ]
    frames = [raw.encode(r, k, v) for r, k, v in reqs]
    raw.close()
    return frames


def mutate(rng: random.Random, frame: bytes) -> bytes:
    data = bytearray(frame)
    for _ in range(rng.randint(1, 6)):
        op = rng.random()
        if op < 0.5 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif op < 0.7 and data:
            del data[rng.randrange(len(data)):]
        elif op < 0.85:
            data[rng.randrange(len(data) + 1):rng.randrange(len(data) + 1)] = rng.randbytes(rng.randint(1, 16))
        else:
            pos = rng.randrange(max(len(data) - 3, 1))
            data[pos:pos + 4] = struct.pack(">i", rng.choice([-1, 0, 0x7FFFFFFF, -0x80000000, 1 << 20]))
    return bytes(data)


def fire(addr: tuple[str, int], payload: bytes, declared_size: int | None = None) -> None:
    with socket.create_connection(addr, timeout=2) as s:
        size = len(payload) if declared_size is None else declared_size
        s.sendall(struct.pack(">i", size) + payload)
        s.shutdown(socket.SHUT_WR)
        s.settimeout(0.5)
        try:
            while s.recv(65536):
                pass
        except (TimeoutError, ConnectionError):
            pass


def test_fuzzed_frames_never_kill_the_broker(make_cluster):
    cluster = make_cluster(in_memory=True)
    host, port = cluster.bootstrap_servers.split(":")
    addr = (host, int(port))
    rng = random.Random(SEED)
    frames = seed_frames(cluster.bootstrap_servers)
    for i in range(ROUNDS):
        kind = i % 4
        if kind == 0:
            fire(addr, rng.randbytes(rng.randint(0, 64)))
        elif kind == 1:
            fire(addr, rng.randbytes(16), declared_size=rng.choice([-5, 0, 3, 1 << 30]))
        else:
            fire(addr, mutate(rng, rng.choice(frames)))
    # The broker still answers real clients after all that.
    from kafka import KafkaConsumer, KafkaProducer
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
    producer.send("after-fuzz", b"still alive").get(10)
    producer.close()
    consumer = KafkaConsumer("after-fuzz", bootstrap_servers=cluster.bootstrap_servers,
                             auto_offset_reset="earliest", consumer_timeout_ms=5000)
    assert [m.value for m in consumer] == [b"still alive"]
    consumer.close()


FRAMES = 100_000


def test_a_hundred_thousand_fuzzed_frames_in_a_broker_process(tmp_path):
    """The broker runs as its own process (``tests/broker/fuzz_worker.py``) and is fed
    100,000 frames straight to its frame handler: every API and version with huge and null
    counts in every array at any depth, mutations of valid requests, random bytes. The
    process must survive (a native abort would end it), answer nothing with an internal
    error, stay small, and keep answering another client over TCP all along."""
    import json
    import subprocess
    import sys
    import threading
    import time

    proc = subprocess.Popen([sys.executable, "-m", "tests.broker.fuzz_worker", "--frames", str(FRAMES)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        bootstrap = proc.stdout.readline().strip()
        assert bootstrap, "the fuzz worker did not start"
        rss, delays, stop = [], [], threading.Event()

        def watch() -> None:
            with RawClient(bootstrap, timeout=30) as raw:
                while not stop.is_set():
                    with open(f"/proc/{proc.pid}/status") as f:
                        rss.append(next(int(x.split()[1]) for x in f if x.startswith("VmRSS:")) / 1024)
                    started = time.perf_counter()
                    raw.request(ApiVersionsRequest(client_software_name="bystander", client_software_version="1"))
                    delays.append(time.perf_counter() - started)
                    time.sleep(0.05)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        time.sleep(0.3)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        report = json.loads(proc.stdout.readline())
        stop.set()
        watcher.join(10)
        assert proc.wait(60) == 0, f"the broker process ended with {proc.returncode}"
    finally:
        if proc.poll() is None:
            proc.kill()
    outcomes = report["outcomes"]
    print(f"{FRAMES:,} frames in {report['seconds']} s: {outcomes}; peak RSS {max(rss):.0f} MiB; "
          f"bystander worst {max(delays) * 1000:.0f} ms over {len(delays)} requests")
    assert sum(outcomes.values()) == FRAMES and report["kinds"]["broken"] > 300
    assert outcomes.get("internal error", 0) == 0, report["errors"]
    assert outcomes["refused"] > FRAMES // 2 and outcomes["answered"] > 1000, outcomes
    assert len(delays) > 10 and max(delays) < 2.0, f"another client waited {max(delays):.1f} s"
    assert max(rss) - rss[0] < 300, f"the broker grew from {rss[0]:.0f} to {max(rss):.0f} MiB"


def huge_count_frames() -> list[tuple[str, bytes]]:
    """For every advertised API and version, and every top-level array of its request: the
    request up to that array, then a count of 0x7FFFFFFE (0xFFFFFFFE as a compact count)."""
    import io

    from kio.serial import entity_writer

    from minikafka.protocol import bounds, codec
    from minikafka.protocol.apis import API_TABLE

    out = []
    for api in API_TABLE:
        for version in range(api.min_version, api.max_version + 1):
            cls = codec.request_class(api.key, version)
            body = io.BytesIO()
            entity_writer(cls)(body, codec.empty(cls))
            data, pos = body.getvalue(), 0
            header = struct.pack(">hhih", api.key, version, 1, 4) + b"huge" + (b"\0" if cls.__flexible__ else b"")
            for field, kind, optional in bounds._plan(cls):
                if kind.is_array:
                    count = b"\xff\xff\xff\xff\x0f" if cls.__flexible__ else struct.pack(">i", 0x7FFFFFFE)
                    out.append((f"{api.name} v{version} {field.name}", header + data[:pos] + count))
                pos = bounds._field(data, pos, field, kind, optional, cls.__flexible__)
    return out


def test_a_huge_array_count_in_any_request_is_refused_without_allocating(make_cluster):
    """The 20-byte Metadata v12 frame of issue 13 used to abort the process (kio reserved
    34 GB); now every such frame is refused before kio sees it, over TCP too."""
    from minikafka.protocol.codec import MalformedRequest

    cluster = make_cluster(in_memory=True)
    frames = huge_count_frames()
    assert len(frames) > 100, "the advertised APIs and versions have top-level arrays to try"

    async def feed() -> list[str]:
        accepted = []
        for name, frame in frames:
            try:
                await cluster.dispatchers[1].handle_frame(frame)
                accepted.append(name)
            except MalformedRequest:
                pass
        return accepted
    assert cluster.run(feed()) == []
    host, port = cluster.bootstrap_servers.split(":")
    fire((host, int(port)), bytes.fromhex("000000100003000c00000001000000ffffffff0f")[4:])
    with RawClient(cluster.bootstrap_servers) as raw:
        assert raw.request(ApiVersionsRequest(client_software_name="after", client_software_version="1")).api_keys
