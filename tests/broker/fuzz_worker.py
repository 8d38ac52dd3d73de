"""A broker process that is fed fuzzed frames: ``python -m tests.broker.fuzz_worker``.

test_fuzz.py runs it as a child process, so a death of any kind (an uncatchable abort in
native code included) shows as the child's exit status, and its memory is measured on
its own. It starts an in-memory minikafka, prints its address, then feeds frames straight
to broker 1's frame handler on the brokers' event loop, yielding between frames so that
other clients are served over TCP meanwhile. The frames:

* for every advertised API and version, a valid request with one element in every array
  (three levels deep), then that request with each array count, at any depth, replaced
  by a huge count and by null;
* random mutations of those requests, and random bytes.

It prints one JSON line with how each frame ended, then stops.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import io
import json
import random
import struct
import sys
import time
import typing
from collections import Counter

from kio.serial import entity_writer

from minikafka import Cluster, records
from minikafka.faults import DropConnection
from minikafka.protocol import bounds, codec
from minikafka.protocol.apis import API_TABLE
from minikafka.protocol.codec import MalformedRequest

HUGE, HUGE_COMPACT = struct.pack(">i", 0x7FFFFFFE), b"\xff\xff\xff\xff\x0f"
NULL, NULL_COMPACT = struct.pack(">i", -1), b"\x00"


def full(cls: type, depth: int = 0) -> typing.Any:
    """An entity with one element in each array (down to three levels) and a small batch
    wherever records go: the shape real requests have."""
    hints = typing.get_type_hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        if f.name.startswith("_"):
            continue
        nested = codec._entity_type(hints[f.name])
        kind = f.metadata.get("kafka_type")
        hint = hints[f.name]
        is_array = any(typing.get_origin(a) is tuple for a in (hint, *typing.get_args(hint)))
        if nested is not None and is_array and depth < 3:
            values[f.name] = (full(nested, depth + 1),)
        elif kind == "records":
            values[f.name] = records.build_batch([records.Record(0, 1, b"k", b"v")])
        elif kind == "string" and f.default is dataclasses.MISSING:
            values[f.name] = "fuzzed"
    return codec.empty(cls, **values)


def header(api_key: int, version: int, flexible: bool) -> bytes:
    return struct.pack(">hhih", api_key, version, 7, 4) + b"fuzz" + (b"\0" if flexible else b"")


def encode(entity: typing.Any) -> bytes:
    buf = io.BytesIO()
    entity_writer(type(entity))(buf, entity)
    return buf.getvalue()


def array_counts(buf: bytes, pos: int, cls: type) -> list[int]:
    """Where each array count of an encoded entity starts, at every depth."""
    found = []
    flexible = cls.__flexible__  # type: ignore[attr-defined]
    for field, kind, optional in bounds._plan(cls):
        if kind.is_array and dataclasses.is_dataclass(kind.type_):
            found.append(pos)
            count, pos = bounds._count(buf, pos, flexible)
            for _ in range(max(count, 0)):
                found += array_counts(buf, pos, kind.type_)  # type: ignore[arg-type]
                pos = bounds._entity(buf, pos, kind.type_)  # type: ignore[arg-type]
        else:
            if kind.is_array:
                found.append(pos)
            pos = bounds._field(buf, pos, field, kind, optional, flexible)
    return found


def seeds() -> tuple[list[bytes], list[bytes]]:
    """Valid frames of every API and version, and their huge-count and null-array variants."""
    valid, broken = [], []
    for api in API_TABLE:
        for version in range(api.min_version, api.max_version + 1):
            cls = codec.request_class(api.key, version)
            flexible = cls.__flexible__
            body = encode(full(cls))
            head = header(api.key, version, flexible)
            valid.append(head + body)
            for pos in array_counts(body, 0, cls):
                _, end = bounds._count(body, pos, flexible)
                broken.append(head + body[:pos] + (HUGE_COMPACT if flexible else HUGE) + body[end:])
                broken.append(head + body[:pos] + (NULL_COMPACT if flexible else NULL) + body[end:])
    return valid, broken


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
            data[pos:pos + 4] = struct.pack(">i", rng.choice([-1, 0, 0x7FFFFFFE, -0x80000000, 1 << 20]))
    return bytes(data)


def frames(seed: int, total: int, valid: list[bytes], broken: list[bytes]):
    rng = random.Random(seed)
    yield from (("broken", f) for f in broken)
    for i in range(total - len(broken)):
        if i % 5 == 0:
            yield "random", rng.randbytes(rng.randint(0, 64))
        else:
            yield "mutated", mutate(rng, rng.choice(valid))


async def feed(cluster: Cluster, seed: int, total: int, per_frame_s: float, valid: list[bytes],
               broken: list[bytes]) -> dict:
    handle = cluster.dispatchers[cluster.node_ids[0]].handle_frame
    outcomes: Counter = Counter()
    errors: Counter = Counter()
    kinds: Counter = Counter()
    for i, (kind, frame) in enumerate(frames(seed, total, valid, broken)):
        kinds[kind] += 1
        try:
            answer = await asyncio.wait_for(handle(frame, "127.0.0.1", 1), per_frame_s)
            outcomes["answered" if answer is not None else "no answer"] += 1
        except (MalformedRequest, DropConnection):
            outcomes["refused"] += 1
        except TimeoutError:
            outcomes["long poll"] += 1
        except Exception as e:  # noqa: BLE001 - reported: the server would close this connection with a traceback
            outcomes["internal error"] += 1
            errors[f"{type(e).__name__}: {str(e)[:80]}"] += 1
        if i % 20 == 0:
            await asyncio.sleep(0)  # let the listener serve other clients
    return {"outcomes": dict(outcomes), "kinds": dict(kinds), "errors": errors.most_common(10)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=20261124)
    ap.add_argument("--per-frame-s", type=float, default=0.05)
    args = ap.parse_args()
    import logging
    logging.basicConfig(level=logging.CRITICAL)
    valid, broken = seeds()  # built before the broker starts: this takes the CPU for a moment
    cluster = Cluster(in_memory=True, config={"group.initial.rebalance.delay.ms": 0}).start()
    cluster.create_topic("fuzzed", partitions=2)
    print(cluster.bootstrap_servers, flush=True)
    sys.stdin.readline()  # the parent is ready to watch
    started = time.perf_counter()
    report = cluster.run(feed(cluster, args.seed, args.frames, args.per_frame_s, valid, broken))
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["topics"] = len(cluster.topics())
    print(json.dumps(report), flush=True)
    cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
