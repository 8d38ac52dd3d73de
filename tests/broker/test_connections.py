"""Kafka's connection limits: connections.max.idle.ms, max.connections, max.connections.per.ip."""

from __future__ import annotations

import socket
import struct
import time

from confluent_kafka.admin import AdminClient

from tests.rawclient import RawClient


def api_versions(raw: RawClient) -> None:
    from kio.schema.api_versions.v0.request import ApiVersionsRequest
    raw.request(ApiVersionsRequest())


def closed(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def test_an_idle_connection_is_closed_and_a_busy_one_is_not(make_cluster):
    cluster = make_cluster(config={"connections.max.idle.ms": 300})
    host, port = cluster.bootstrap_servers.split(":")
    idle = socket.create_connection((host, int(port)))
    half = socket.create_connection((host, int(port)))
    half.sendall(struct.pack(">i", 100) + b"\x00\x12")  # a frame that never ends
    with RawClient(cluster.bootstrap_servers) as busy:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:  # a request every 100 ms keeps it open
            api_versions(busy)
            time.sleep(0.1)
        assert closed(idle, within=0.1) and closed(half, within=0.1)
        api_versions(busy)
    idle.close()
    half.close()


def test_connections_past_the_limits_are_closed_and_others_go_on(make_cluster):
    cluster = make_cluster(config={"max.connections.per.ip": 3})
    host, port = cluster.bootstrap_servers.split(":")
    clients = [RawClient(cluster.bootstrap_servers) for _ in range(3)]
    for c in clients:
        api_versions(c)
    extra = socket.create_connection((host, int(port)))
    assert closed(extra, within=2)
    clients.pop().close()
    time.sleep(0.2)
    with RawClient(cluster.bootstrap_servers) as again:  # a slot was freed
        api_versions(again)
    for c in clients:
        c.close()


def test_a_real_client_works_under_a_connection_limit(make_cluster):
    cluster = make_cluster(config={"max.connections": 10, "connections.max.idle.ms": 60_000})
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    assert admin.list_topics(timeout=10).brokers
