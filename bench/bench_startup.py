"""Time from starting a broker to its first answered request (ApiVersions).

    python bench/bench_startup.py            # embedded Cluster, and `minikafka serve` as a process
"""

from __future__ import annotations

import socket
import statistics
import struct
import subprocess
import sys
import time


def first_answer(host: str, port: int, deadline: float) -> None:
    request = struct.pack(">hhih", 18, 0, 1, 5) + b"bench"
    while time.perf_counter() < deadline:
        try:
            with socket.create_connection((host, port), timeout=1) as s:
                s.sendall(struct.pack(">i", len(request)) + request)
                if s.recv(4):
                    return
        except OSError:
            time.sleep(0.002)
    raise SystemExit("no answer")


def embedded() -> float:
    from minikafka import Cluster
    start = time.perf_counter()
    c = Cluster(in_memory=True).start()
    host, port = c.bootstrap_servers.split(":")
    first_answer(host, int(port), start + 10)
    elapsed = time.perf_counter() - start
    c.stop()
    return elapsed


def process(port: int) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "minikafka.cli.main", "serve", "--in-memory", "--port", str(port),
                             "--log-level", "WARNING"], stdout=subprocess.DEVNULL)
    try:
        first_answer("127.0.0.1", port, start + 20)
        return time.perf_counter() - start
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    import minikafka  # noqa: F401 - import cost is paid once per process, measured by `process`
    emb = [embedded() for _ in range(5)]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = [process(port) for _ in range(3)]
    print(f"embedded Cluster start -> first answer: median {statistics.median(emb) * 1000:.1f} ms")
    print(f"`minikafka serve` process start (Python start-up and imports included) -> first answer: "
          f"median {statistics.median(proc) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
