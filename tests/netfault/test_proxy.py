"""The fault proxy on real sockets: bytes pass unchanged, partitions stall a Kafka client
until healed, delays hold bytes, resets close, and the command line drives a running one."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest
from confluent_kafka import KafkaError, Producer

from minikafka.netfault import LinkRules, Mode, Network
from minikafka.netfault.rules import Verdict


class EchoServer:
    """Sends back every byte it gets, on each connection, until the peer closes."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._echo, args=(conn,), daemon=True).start()

    @staticmethod
    def _echo(conn: socket.socket) -> None:
        with conn:
            try:
                while data := conn.recv(65536):
                    conn.sendall(data)
            except OSError:
                pass


@pytest.fixture
def echo():
    server = EchoServer()
    yield server
    server.sock.close()


@pytest.fixture
def net(echo):
    with Network({"echo": echo.port}, clients=["client"], seed=7) as network:
        yield network


def connect(net: Network, timeout: float = 5.0) -> socket.socket:
    host, port = net.address("client", "echo").split(":")
    return socket.create_connection((host, int(port)), timeout=timeout)


def exchange(sock: socket.socket, payload: bytes) -> bytes:
    sender = threading.Thread(target=sock.sendall, args=(payload,))
    sender.start()
    got = bytearray()
    while len(got) < len(payload):
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        got += chunk
    sender.join()
    return bytes(got)


def test_bytes_pass_unchanged_both_ways(net):
    payload = os.urandom(8 << 20)  # 8 MiB: many chunks each way, back-pressure included
    with connect(net, timeout=30) as sock:
        assert exchange(sock, payload) == payload
    assert net.status()["client->echo"]["accepted"] == 1


def test_delay_holds_each_direction(net):
    with connect(net) as sock:
        exchange(sock, b"warm")
        net.delay("client", "echo", 150, jitter_ms=10, direction="request")
        start = time.monotonic()
        assert exchange(sock, b"ping") == b"ping"
        one_way = time.monotonic() - start
        net.delay("client", "echo", 150)  # both directions
        start = time.monotonic()
        assert exchange(sock, b"pong") == b"pong"
        both = time.monotonic() - start
    assert one_way >= 0.14 and both >= 0.28  # lower bounds only: the machine is shared


def test_partition_holds_bytes_and_heal_delivers_them(net):
    with connect(net) as sock:
        exchange(sock, b"before")
        net.partition("client", "echo")
        sock.sendall(b"held")
        sock.settimeout(0.5)
        with pytest.raises(TimeoutError):
            sock.recv(10)  # nothing arrives, nothing is closed: a blackhole
        with connect(net) as fresh:  # a new connection is accepted and held, not refused
            fresh.settimeout(0.5)
            fresh.sendall(b"new")
            with pytest.raises(TimeoutError):
                fresh.recv(10)
            net.heal()
            fresh.settimeout(5)
            assert fresh.recv(10) == b"new"
        sock.settimeout(5)
        assert sock.recv(10) == b"held"


def test_reset_closes_open_and_new_connections(net):
    with connect(net) as sock:
        exchange(sock, b"hello")
        net.reset("client", "echo")
        sock.settimeout(5)
        with contextlib.suppress(ConnectionResetError):
            assert sock.recv(10) == b""
    with connect(net) as sock:
        sock.settimeout(5)
        try:
            sock.sendall(b"x")
            assert sock.recv(10) == b""
        except (ConnectionResetError, BrokenPipeError):
            pass
    net.heal()
    with connect(net) as sock:
        assert exchange(sock, b"again") == b"again"


def test_dropping_every_connection_then_none(net):
    net.drop("client", "echo", 1.0)
    for _ in range(3):
        with connect(net) as sock:
            sock.settimeout(5)
            with contextlib.suppress(ConnectionResetError):
                assert sock.recv(10) == b""
    net.drop("client", "echo", 0.0)
    with connect(net) as sock:
        assert exchange(sock, b"ok") == b"ok"
    assert net.status()["client->echo"]["closed_by_rule"] == 3


def test_drop_rate_is_a_fraction_and_bad_values_are_refused():
    rules = LinkRules(seed=1)
    rules.set_drop_rate(0.3)
    closed = sum(rules.on_connect() is Verdict.CLOSE for _ in range(2000))
    assert 450 < closed < 750
    with pytest.raises(ValueError, match="between 0 and 1"):
        rules.set_drop_rate(1.5)
    with pytest.raises(ValueError, match="zero or more"):
        rules.set_delay(-1)
    rules.set_mode("partition")
    assert rules.mode is Mode.PARTITION and not rules.flowing


def test_network_routes_every_ordered_pair():
    with Network({"b1": 1, "b2": 2, "c1": 3}, clients=["client"]) as net:
        routes = net.routes()
        assert set(routes) == {"b1", "b2", "c1", "client"}
        assert set(routes["b1"]) == {"b2", "c1"} and set(routes["client"]) == {"b1", "b2", "c1"}
        assert len({a for peers in routes.values() for a in peers.values()}) == 9  # one proxy per link
        with pytest.raises(ValueError, match="no link b1->client"):
            net.partition("b1", "client")


def test_isolate_and_one_way_cuts_touch_only_their_links(echo):
    with Network({"b1": echo.port, "b2": echo.port, "b3": echo.port}) as net:
        net.isolate("b1")
        net.partition("b2", "b3", one_way=True)
        modes = {name: link["mode"] for name, link in net.status().items()}
        assert modes == {
            "b1->b2": "partition",
            "b1->b3": "partition",
            "b2->b1": "partition",
            "b3->b1": "partition",
            "b2->b3": "partition",
            "b3->b2": "pass",
        }
        host, port = net.address("b3", "b2").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            assert exchange(sock, b"still here") == b"still here"
        net.heal("b1", "b2")
        assert {name for name, link in net.status().items() if link["mode"] == "pass"} == {"b1->b2", "b2->b1", "b3->b2"}


def test_partition_times_out_a_kafka_producer_until_healed(make_cluster):
    """confluent-kafka reaches a broker only through the proxy (advertised.listeners): while
    partitioned its request stalls and the delivery times out; after heal it is acknowledged."""
    with socket.create_server(("127.0.0.1", 0)) as s:
        real = s.getsockname()[1]
    with Network({"b1": real}, clients=["client"]) as net:
        proxied = net.address("client", "b1")
        cluster = make_cluster(
            config={"listeners": f"PLAINTEXT://127.0.0.1:{real}", "advertised.listeners": f"PLAINTEXT://{proxied}"}
        )
        cluster.create_topic("events")
        producer = Producer(
            {
                "bootstrap.servers": proxied,
                "message.timeout.ms": 2500,
                "request.timeout.ms": 1000,
                "enable.idempotence": True,
                "acks": "all",
            }
        )
        reports: list = []

        def produce(value: bytes) -> object:
            reports.clear()
            producer.produce("events", value, on_delivery=lambda err, msg: reports.append(err))
            producer.flush(15)
            return reports[0]

        assert produce(b"before") is None
        net.partition("client", "b1")
        start = time.monotonic()
        err = produce(b"during")
        assert err is not None and err.code() == KafkaError._MSG_TIMED_OUT, err
        assert time.monotonic() - start >= 2.0
        net.heal()
        assert produce(b"after") is None
        assert cluster.partition_offsets("events")[0]["high_watermark"] >= 2
        assert net.status()["client->b1"]["accepted"] >= 2  # every connection went through the proxy


def test_the_command_line_changes_a_running_network(echo):
    proc = subprocess.Popen(
        [sys.executable, "-m", "minikafka", "link", "serve", "--node", f"echo={echo.port}", "--client", "client"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        started = json.loads(proc.stdout.readline())
        control, route = started["control"], started["routes"]["client"]["echo"]

        def cli(*words: str) -> subprocess.CompletedProcess:
            return subprocess.run(
                [sys.executable, "-m", "minikafka", "link", "--control", control, *words],
                capture_output=True,
                text=True,
                timeout=30,
            )

        host, port = route.split(":")
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            assert exchange(sock, b"one") == b"one"
            assert cli("partition", "client", "echo").stdout.strip() == "ok"
            sock.settimeout(0.5)
            sock.sendall(b"two")
            with pytest.raises(TimeoutError):
                sock.recv(10)
            status = json.loads(cli("status").stdout.split(" ", 1)[1])
            assert status["client->echo"]["mode"] == "partition"
            assert cli("heal").returncode == 0
            sock.settimeout(5)
            assert sock.recv(10) == b"two"
        bad = cli("delay", "client", "nowhere", "10")
        assert bad.returncode == 1 and "no link client->nowhere" in bad.stdout
    finally:
        proc.terminate()
        proc.wait(10)


def test_stopping_the_network_with_connections_open_destroys_no_pending_task(echo, caplog):
    """A process cluster's stop (notebook 05b's last cell) printed asyncio's 'Task was destroyed but it
    is pending!': the proxies' accept tasks were still finishing when the loop closed."""
    import gc
    import logging

    caplog.set_level(logging.ERROR, logger="asyncio")
    network = Network({"echo": echo.port}, clients=["client"]).start()
    host, port = network.address("client", "echo").rsplit(":", 1)
    clients = [socket.create_connection((host, port), timeout=5) for _ in range(5)]
    for c in clients:
        c.sendall(b"ping")
        assert c.recv(4) == b"ping"
    network.partition("client", "echo")  # and one connection held mid-way
    held = socket.create_connection((host, port), timeout=5)
    network.stop()
    del network  # what holds the finished loop's tasks: collected now, not after the test
    gc.collect()
    for c in [*clients, held]:
        c.close()
    assert not [r.getMessage() for r in caplog.records if "destroyed but it is pending" in r.getMessage()]
