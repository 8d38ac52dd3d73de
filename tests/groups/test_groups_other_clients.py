"""Groups with the other clients of the course: aiokafka and kcat (librdkafka 2.0.2).

kcat's older librdkafka enables group consumption only if the broker's ranges contain
exact versions (FindCoordinator 0, JoinGroup/SyncGroup/Heartbeat/LeaveGroup 0,
OffsetFetch 1, OffsetCommit 2): ``kcat -G`` consuming and committing proves they do.
aiokafka speaks older versions (JoinGroup v5, OffsetCommit/OffsetFetch v3).
"""

from __future__ import annotations

import asyncio
import subprocess

import pytest

from tests.conftest import has_kcat
from tests.groups.helpers import committed, create_topic, produce

pytestmark = pytest.mark.timeout(60)


@pytest.mark.skipif(not has_kcat(), reason="kcat is not installed")
def test_kcat_balanced_consumer_reads_and_commits(bootstrap, topic_name):
    create_topic(bootstrap, topic_name, 2)
    sent = produce(bootstrap, topic_name, 20, 2)
    done = subprocess.run(["kcat", "-b", bootstrap, "-G", "kcat-group", "-o", "beginning", "-e", "-f", "%s\n",
                           topic_name], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.split()) == sorted(v.decode() for v in sent)
    assert committed(bootstrap, "kcat-group", topic_name, 2) == {0: 10, 1: 10}


def test_aiokafka_group_consumer_reads_and_commits(bootstrap, topic_name):
    from aiokafka import AIOKafkaConsumer
    create_topic(bootstrap, topic_name, 2)
    sent = produce(bootstrap, topic_name, 20, 2)

    async def consume() -> list[bytes]:
        consumer = AIOKafkaConsumer(topic_name, bootstrap_servers=bootstrap, group_id="aio-group",
                                    auto_offset_reset="earliest", enable_auto_commit=False)
        await consumer.start()
        got: list[bytes] = []
        try:
            async with asyncio.timeout(30):
                while len(got) < len(sent):
                    batch = await consumer.getmany(timeout_ms=500)
                    got += [r.value for records in batch.values() for r in records]
            await consumer.commit()
        finally:
            await consumer.stop()
        return got

    assert sorted(asyncio.run(consume())) == sorted(sent)
    assert committed(bootstrap, "aio-group", topic_name, 2) == {0: 10, 1: 10}
