"""The three workloads on RabbitMQ (pika, AMQP 0-9-1): exchanges, queues and acknowledgements.

``settings`` for the work queue: ``prefetch_count`` (``basic_qos``; 0, pika's default,
means no limit) and ``auto_ack`` (False, pika's default: the worker acknowledges each job,
or rejects it back into the queue when it fails). The other two workloads take none.
Every queue and exchange is private to the run and deleted at its end.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from ...i18n import _
from . import DASHBOARDS, JOBS, LIMIT_S, PAYMENTS, TICKS, WORKERS, Jobs, Run, p99, publish_ticks, wait_for

if TYPE_CHECKING:  # (pika ships no types: mypy reads these as Any)
    from pika import BasicProperties, BlockingConnection
    from pika.adapters.blocking_connection import BlockingChannel
    from pika.spec import Basic

KNOBS = {"work-queue": {"prefetch_count": 0, "auto_ack": False}}


def _connect(url: str) -> BlockingConnection:
    import pika
    params = pika.URLParameters(url)
    params.socket_timeout = params.blocked_connection_timeout = 5
    params.connection_attempts = 1
    return pika.BlockingConnection(params)


def _drain(channel: BlockingChannel, queue: str, expected: int, idle: float = 1.0) -> list[bytes]:
    """Take what the queue delivers (acknowledged at once) until ``expected`` or ``idle`` s of nothing."""
    got: list[bytes] = []
    for method, _properties, body in channel.consume(queue, auto_ack=True, inactivity_timeout=idle):
        if method is None:
            break
        got.append(body)
        if len(got) >= expected:
            break
    channel.cancel()
    return got


def replay(url: str, settings: dict[str, Any]) -> Run:
    """A fanout exchange with the ledger's queue; the new service's queue is declared when it starts."""
    connection = _connect(url)
    channel = connection.channel()
    exchange = f"payments-{uuid.uuid4().hex[:6]}"
    channel.exchange_declare(exchange, exchange_type="fanout", auto_delete=True)
    ledger = channel.queue_declare("", exclusive=True).method.queue
    channel.queue_bind(ledger, exchange)
    history = [f"payment {i}".encode() for i in range(PAYMENTS)]
    for body in history:
        channel.basic_publish(exchange, "", body)
    _drain(channel, ledger, PAYMENTS)
    started = time.perf_counter()
    fraud = channel.queue_declare("", exclusive=True).method.queue
    channel.queue_bind(fraud, exchange)
    values = _drain(channel, fraud, PAYMENTS)
    connection.close()
    run = Run("replay", "rabbitmq", time.perf_counter() - started, len(values), values == history[:len(values)])
    run.note = _("a message goes to the queues bound when it is published and leaves a queue once acknowledged, so "
                 "the new service's queue began empty and the ledger's has been emptied")
    return run


def work_queue(url: str, settings: dict[str, Any]) -> Run:
    """One queue, three workers on their own connections; a failed job is rejected back into the queue."""
    options = {**KNOBS["work-queue"], **settings}
    queue = f"jobs-{uuid.uuid4().hex[:6]}"
    connection = _connect(url)
    channel = connection.channel()
    channel.queue_declare(queue, auto_delete=True)
    jobs, ready = Jobs("rabbitmq"), threading.Barrier(WORKERS + 1, timeout=LIMIT_S)
    workers = [threading.Thread(target=_worker, args=(url, queue, jobs, options, ready, f"worker {w + 1}"),
                                daemon=True) for w in range(WORKERS)]
    for worker in workers:
        worker.start()
    ready.wait()  # every worker is consuming: the queue deals the jobs out among all three
    started = time.perf_counter()
    for job in range(JOBS):
        channel.basic_publish("", queue, str(job).encode())
    for worker in workers:
        worker.join(LIMIT_S + 5)
    jobs.run.seconds = time.perf_counter() - started
    connection.close()
    return jobs.run


def _worker(url: str, queue: str, jobs: Jobs, options: dict, ready: threading.Barrier, name: str) -> None:
    connection = _connect(url)
    channel = connection.channel()
    if options["prefetch_count"]:
        channel.basic_qos(prefetch_count=int(options["prefetch_count"]))
    auto_ack = bool(options["auto_ack"])

    def on_job(ch: BlockingChannel, method: Basic.Deliver, _properties: BasicProperties, body: bytes) -> None:
        if jobs.attempt(int(body), name):
            if not auto_ack:
                ch.basic_ack(method.delivery_tag)
        elif not auto_ack:
            ch.basic_nack(method.delivery_tag, requeue=True)  # back into the queue, for any worker
    channel.basic_consume(queue, on_job, auto_ack=auto_ack)
    ready.wait()
    deadline = time.monotonic() + LIMIT_S
    while not jobs.finished() and time.monotonic() < deadline and not jobs.idle(1.0):
        connection.process_data_events(time_limit=0.05)
    connection.close()


def fan_out(url: str, settings: dict[str, Any]) -> Run:
    """A fanout exchange and one queue per dashboard, each read by its dashboard as ticks arrive."""
    connection = _connect(url)
    channel = connection.channel()
    exchange = f"ticks-{uuid.uuid4().hex[:6]}"
    channel.exchange_declare(exchange, exchange_type="fanout", auto_delete=True)
    queues: list[str] = []
    for _i in range(DASHBOARDS):
        queues.append(channel.queue_declare(f"{exchange}-dashboard-{len(queues)}", auto_delete=True).method.queue)
        channel.queue_bind(queues[-1], exchange)
    latencies: list[float] = []
    run, ready = Run("fan-out", "rabbitmq"), threading.Barrier(DASHBOARDS + 1, timeout=LIMIT_S)
    counted = threading.Event()  # the dashboards stay connected (their queues alive) until the count
    dashboards = [threading.Thread(target=_dashboard, args=(url, q, latencies, run, ready, counted), daemon=True)
                  for q in queues]
    for dashboard in dashboards:
        dashboard.start()
    ready.wait()
    run.seconds = publish_ticks(lambda body: channel.basic_publish(exchange, "", body))
    wait_for(lambda: len(run.delivered) == DASHBOARDS, LIMIT_S)
    run.held = sum(channel.queue_declare(q, passive=True).method.message_count for q in queues)
    counted.set()
    for dashboard in dashboards:
        dashboard.join(LIMIT_S)
    connection.close()
    run.p99_ms = p99(latencies)
    run.note = _("each queue drops a message once its dashboard has acknowledged it")
    return run


def _dashboard(url: str, queue: str, latencies: list[float], run: Run, ready: threading.Barrier,
               counted: threading.Event) -> None:
    connection = _connect(url)
    channel = connection.channel()
    got = 0

    def on_tick(_ch: BlockingChannel, _method: Basic.Deliver, _properties: BasicProperties, body: bytes) -> None:
        nonlocal got
        latencies.append(time.perf_counter() - float(body))
        got += 1
    channel.basic_consume(queue, on_tick, auto_ack=True)
    ready.wait()
    deadline = time.monotonic() + LIMIT_S
    while got < TICKS and time.monotonic() < deadline:
        connection.process_data_events(time_limit=0.05)
    run.delivered.append(got)
    counted.wait(LIMIT_S)
    connection.close()
