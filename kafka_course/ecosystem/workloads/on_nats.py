"""The three workloads on core NATS (nats-py): subjects, subscriptions and queue groups.

``settings``: ``queue_group``, the name that makes subscribers share a subject's messages
instead of each getting all of them (none by default). Core NATS stores nothing: a
message goes to whoever is subscribed at that moment, once, with no acknowledgement.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ...i18n import _
from . import DASHBOARDS, JOBS, LIMIT_S, PAYMENTS, TICK_EVERY, TICKS, WORKERS, Jobs, Run, in_thread, p99

if TYPE_CHECKING:
    from nats.aio.client import Client
    from nats.aio.msg import Msg

Subscriber = Callable[["Msg"], Awaitable[None]]  # what nats-py calls with each message (cb=)

KNOBS = {"work-queue": {"queue_group": None}, "fan-out": {"queue_group": None}}


async def _connect(url: str) -> Client:
    import nats
    return await nats.connect(url, connect_timeout=2, max_reconnect_attempts=0)


def replay(url: str, settings: dict[str, Any]) -> Run:
    return in_thread(lambda: _replay(url))


async def _replay(url: str) -> Run:
    nc = await _connect(url)
    subject = f"payments.{uuid.uuid4().hex[:6]}"
    ledger: list[bytes] = []
    fraud: list[bytes] = []
    await nc.subscribe(subject, cb=_into(ledger))
    history = [f"payment {i}".encode() for i in range(PAYMENTS)]
    for body in history:
        await nc.publish(subject, body)
    await nc.flush()
    started = time.perf_counter()
    await nc.subscribe(subject, cb=_into(fraud))
    await nc.flush()
    await asyncio.sleep(1.0)  # anything that was going to arrive has arrived
    await nc.close()
    run = Run("replay", "nats", time.perf_counter() - started, len(fraud), fraud == history[:len(fraud)])
    run.note = _("core NATS delivered the history to the subscribers of that moment and kept nothing")
    return run


def _into(values: list[bytes]) -> Subscriber:
    async def on_message(msg: Msg) -> None:
        values.append(msg.data)
    return on_message


def work_queue(url: str, settings: dict[str, Any]) -> Run:
    options = {**KNOBS["work-queue"], **settings}
    return in_thread(lambda: _work_queue(url, options["queue_group"]))


async def _work_queue(url: str, queue_group: str | None) -> Run:
    nc = await _connect(url)
    subject = f"jobs.{uuid.uuid4().hex[:6]}"
    jobs = Jobs("nats")

    def worker(name: str) -> Subscriber:
        async def on_job(msg: Msg) -> None:
            await jobs.attempt_async(int(msg.data), name)  # a failed job is simply gone: nothing redelivers it
        return on_job
    for w in range(WORKERS):  # each subscription handles its messages one at a time, like a worker
        await nc.subscribe(subject, queue=queue_group or "", cb=worker(f"worker {w + 1}"),
                           pending_msgs_limit=JOBS * 2)
    await nc.flush()
    started = time.perf_counter()
    for job in range(JOBS):
        await nc.publish(subject, str(job).encode())
    await nc.flush()
    deadline = time.monotonic() + LIMIT_S
    while not jobs.finished() and time.monotonic() < deadline and not jobs.idle(1.0):
        await asyncio.sleep(0.05)
    jobs.run.seconds = time.perf_counter() - started
    await nc.close()
    return jobs.run


def fan_out(url: str, settings: dict[str, Any]) -> Run:
    options = {**KNOBS["fan-out"], **settings}
    return in_thread(lambda: _fan_out(url, options["queue_group"]))


async def _fan_out(url: str, queue_group: str | None) -> Run:
    nc = await _connect(url)
    subject = f"ticks.{uuid.uuid4().hex[:6]}"
    run, latencies = Run("fan-out", "nats"), []
    counts = [0] * DASHBOARDS

    def dashboard(d: int) -> Subscriber:
        async def on_tick(msg: Msg) -> None:
            latencies.append(time.perf_counter() - float(msg.data))
            counts[d] += 1
        return on_tick
    for d in range(DASHBOARDS):
        await nc.subscribe(subject, queue=queue_group or "", cb=dashboard(d))
    await nc.flush()
    started = time.perf_counter()
    for _i in range(TICKS):
        await nc.publish(subject, repr(time.perf_counter()).encode())
        await asyncio.sleep(TICK_EVERY)
    await nc.flush()
    run.seconds = time.perf_counter() - started
    expected, deadline = TICKS if queue_group else TICKS * DASHBOARDS, time.monotonic() + LIMIT_S
    while sum(counts) < expected and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await nc.close()
    run.delivered, run.p99_ms = counts, p99(latencies)
    run.note = _("core NATS has no storage: a message exists only on its way to the subscribers of that moment")
    return run
