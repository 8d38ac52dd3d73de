"""Three small workloads, each runnable on Kafka, RabbitMQ and core NATS, measured the same way.

* ``replay``: a history of payments is published and read by the ledger service; then a
  new service starts and must read that whole history, in order.
* ``work_queue``: jobs of uneven length for three workers; a few jobs fail on their first
  attempt and must be handed out again. Every third job is slow (the big uploads of one
  camera, which Kafka keys to one partition).
* ``fan_out``: live price ticks to three dashboards, at once, and nothing kept afterwards.

``on_kafka``, ``on_rabbitmq`` and ``on_nats`` hold the runs; ``RUNS[workload][system]``
names them all. Each run uses each system the way its documentation teaches (Kafka: a partition per
worker, a consumer per dashboard, retry by seeking back; RabbitMQ: a queue with acks and
``basic_qos``, a fanout exchange with a queue per dashboard; NATS: subscriptions, queue
groups), with only the settings the caller passes changed, and returns what it measured.
Every wait is bounded. NATS runs on its own event loop in a thread, so these calls also
work inside a notebook, whose own loop is already running.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PAYMENTS = 200
JOBS, SLOW_EVERY, SLOW_S, QUICK_S, WORKERS = 45, 3, 0.3, 0.01, 3
FAILING = frozenset({4, 16, 28})  # quick jobs that fail on their first attempt
TICKS, TICK_EVERY, DASHBOARDS = 200, 0.005, 3
LIMIT_S = 8.0  # no run waits longer than this for what it expects


@dataclass
class Run:
    """What one workload showed on one system."""
    workload: str
    system: str
    seconds: float = 0.0
    received: int = 0  # replay: records the new service read
    in_order: bool = True
    done: dict[int, int] = field(default_factory=dict)  # work queue: job -> times completed
    delivered: list[int] = field(default_factory=list)  # fan-out: ticks each dashboard got
    slow_by_worker: dict[str, int] = field(default_factory=dict)  # work queue: who did the slow jobs
    p99_ms: float = 0.0
    held: int = 0  # fan-out: ticks the server still holds once every dashboard has them
    note: str = ""


def job_seconds(job: int) -> float:
    return SLOW_S if job % SLOW_EVERY == 0 else QUICK_S


def ideal_makespan() -> float:
    return sum(job_seconds(j) for j in range(JOBS)) / WORKERS


def p99(latencies: list[float]) -> float:
    ordered = sorted(latencies)
    return ordered[max(0, int(0.99 * len(ordered)) - 1)] * 1000 if ordered else float("inf")


def in_thread(coroutine_fn: Callable[[], Any]) -> Any:
    """Run an async function on a fresh event loop in a thread and return its result."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = asyncio.run(coroutine_fn())
        except BaseException as e:  # noqa: BLE001 - handed back to the caller's thread
            out["error"] = e
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(LIMIT_S * 3)
    if "error" in out:
        raise out["error"]
    return out.get("value")


class Jobs:
    """The work queue's bookkeeping, shared by the workers of every system."""

    def __init__(self, system: str) -> None:
        self.lock = threading.Lock()
        self.attempts: dict[int, int] = {}
        self.slow_by_worker: dict[str, int] = {}  # worker -> slow jobs it did (attempts)
        self.run = Run("work-queue", system)
        self.run.slow_by_worker = self.slow_by_worker
        self.last = time.monotonic()  # the last time a job started or ended

    def begin(self, job: int, worker: str) -> bool:
        """Count an attempt; True if this attempt will fail (its first, for a job in FAILING)."""
        with self.lock:
            if job_seconds(job) == SLOW_S:
                self.slow_by_worker[worker] = self.slow_by_worker.get(worker, 0) + 1
            self.attempts[job] = self.attempts.get(job, 0) + 1
            self.last = time.monotonic()
            return self.attempts[job] == 1 and job in FAILING

    def complete(self, job: int) -> None:
        with self.lock:
            self.run.done[job] = self.run.done.get(job, 0) + 1
            self.last = time.monotonic()

    def attempt(self, job: int, worker: str) -> bool:
        """Do the job in this thread (it takes job_seconds); False if the attempt failed."""
        fails = self.begin(job, worker)
        time.sleep(job_seconds(job))
        if not fails:
            self.complete(job)
        return not fails

    async def attempt_async(self, job: int, worker: str) -> bool:
        fails = self.begin(job, worker)
        await asyncio.sleep(job_seconds(job))
        if not fails:
            self.complete(job)
        return not fails

    def idle(self, seconds: float) -> bool:
        """Nothing started or ended for ``seconds``, and something did start once."""
        return bool(self.attempts) and time.monotonic() - self.last > seconds

    def finished(self) -> bool:
        with self.lock:
            return len(self.run.done) >= JOBS


def publish_ticks(send: Callable[[bytes], Any]) -> float:
    """Send TICKS ticks, one every TICK_EVERY seconds, each carrying its send time; return the seconds taken."""
    started = time.perf_counter()
    for _ in range(TICKS):
        send(repr(time.perf_counter()).encode())
        time.sleep(TICK_EVERY)
    return time.perf_counter() - started


def wait_for(condition: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)


def runs() -> dict[str, dict[str, Callable[..., Run]]]:
    """workload -> system -> run(address, settings)."""
    from . import on_kafka, on_nats, on_rabbitmq
    return {workload: {"kafka": getattr(on_kafka, name), "rabbitmq": getattr(on_rabbitmq, name),
                       "nats": getattr(on_nats, name)}
            for workload, name in (("replay", "replay"), ("work-queue", "work_queue"), ("fan-out", "fan_out"))}
