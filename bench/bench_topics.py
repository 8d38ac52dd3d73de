"""Create many topics on a `minikafka serve` process and watch another client meanwhile.

    python bench/bench_topics.py                     # 10,000 topics, 100 per CreateTopics request
    python bench/bench_topics.py --topics 2000 --bootstrap-server HOST:PORT

Reports the total time, the rate, how the time of a batch changes as topics accumulate
(a cost that grows with the cluster's size shows up as later batches being slower), and
the worst delay another client saw for an ApiVersions round trip while this ran.
"""

from __future__ import annotations

import argparse
import socket
import struct
import threading
import time

from confluent_kafka.admin import AdminClient, NewTopic

from _broker import broker
from minikafka.processes import read_exactly


def watch(host: str, port: int, stop: threading.Event, delays: list[float]) -> None:
    """Another client: one ApiVersions request every 20 ms, its round trip recorded."""
    request = struct.pack(">hhih", 18, 0, 1, 7) + b"watcher"
    with socket.create_connection((host, port), timeout=120) as s:
        while not stop.is_set():
            start = time.perf_counter()
            s.sendall(struct.pack(">i", len(request)) + request)
            size = struct.unpack(">i", read_exactly(s, 4))[0]
            read_exactly(s, size)
            delays.append(time.perf_counter() - start)
            time.sleep(0.02)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--topics", type=int, default=10_000)
    ap.add_argument("--batch", type=int, default=100, help="topics per CreateTopics request")
    ap.add_argument("--bootstrap-server")
    args = ap.parse_args()
    with broker(args.bootstrap_server) as bootstrap:
        host, port = bootstrap.rsplit(":", 1)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        stop, delays = threading.Event(), []
        watcher = threading.Thread(target=watch, args=(host, int(port), stop, delays), daemon=True)
        watcher.start()
        batch_times = []
        start = time.perf_counter()
        for first in range(0, args.topics, args.batch):
            names = [f"bench-{i:05d}" for i in range(first, min(first + args.batch, args.topics))]
            t0 = time.perf_counter()
            for fut in admin.create_topics([NewTopic(n, 1, 1) for n in names], operation_timeout=60).values():
                fut.result(120)
            batch_times.append(time.perf_counter() - t0)
        total = time.perf_counter() - start
        stop.set()
        watcher.join(5)
        listed = len(admin.list_topics(timeout=60).topics)
    tenth = max(1, len(batch_times) // 10)
    early, late = sum(batch_times[:tenth]) / tenth, sum(batch_times[-tenth:]) / tenth
    print(f"command: python bench/bench_topics.py --topics {args.topics} --batch {args.batch}")
    print(f"created {args.topics:,} topics in {total:.1f} s ({args.topics / total:,.0f} topics/s); "
          f"the broker lists {listed:,}")
    print(f"a batch of {args.batch}: {early * 1000:.0f} ms in the first tenth, {late * 1000:.0f} ms in the last "
          f"(ratio {late / early:.2f})")
    print(f"another client's ApiVersions round trip meanwhile: worst {max(delays) * 1000:.0f} ms, "
          f"median {sorted(delays)[len(delays) // 2] * 1000:.1f} ms over {len(delays):,} requests")


if __name__ == "__main__":
    main()
