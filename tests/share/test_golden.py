"""Golden bytes: the share-group conversation of confluent-kafka 2.16's ``ShareConsumer``
(``record_golden.py``: join, fetch, release, commit, fetch with a piggybacked accept,
leave, close), replayed frame by frame into the dispatcher of one in-process broker
(``minikafka.assembly``: no socket, no thread, no Cluster).

Every frame decodes as its header says, and the replay ends where the real run did:
the released record delivered again with delivery count 2, then accepted, and the last
record accepted by the acknowledgement the consumer sends as it closes.
"""

from __future__ import annotations

import asyncio
import datetime
import json
from pathlib import Path

import pytest
from kio.serial import entity_reader

from minikafka import assembly
from minikafka.assembly import DirectBroker
from minikafka.errors import ErrorCode
from minikafka.protocol import codec
from minikafka.records import Record, build_batch

GOLDEN = json.loads(Path(__file__).with_name("golden.json").read_text())
PRODUCE, INCREMENTAL_ALTER_CONFIGS, GROUP_RESOURCE = 0, 44, 32


def request(entry: dict):
    return codec.decode_request(bytes.fromhex(entry["hex"]), entry["api_key"], entry["version"])[1]


def test_the_recorded_frames_are_the_versions_the_broker_advertises():
    from minikafka.protocol.apis import BY_KEY
    assert {(e["api"], e["version"]) for e in GOLDEN} == {("ShareGroupHeartbeat", 1), ("ShareFetch", 1),
                                                            ("ShareAcknowledge", 1)}
    assert all(BY_KEY[e["api_key"]].supports(e["version"]) for e in GOLDEN)


async def earliest(broker: DirectBroker, group: str) -> None:
    """``share.auto.offset.reset=earliest`` for the group, as the recording's admin client set it."""
    module = codec.request_module(INCREMENTAL_ALTER_CONFIGS, 1)
    setting = codec.entity(module, "AlterableConfig", name="share.auto.offset.reset", config_operation=0,
                           value="earliest")
    resource = codec.entity(module, "AlterConfigsResource", resource_type=GROUP_RESOURCE, resource_name=group,
                            configs=(setting,))
    answer = await broker.call(codec.make(codec.request_class(INCREMENTAL_ALTER_CONFIGS, 1), resources=(resource,),
                                          validate_only=False))
    assert answer.responses[0].error_code == ErrorCode.none, answer


async def produce_batches(broker: DirectBroker, topic: str, count: int) -> None:
    """``count`` records to partition 0, each in its own batch, as the recording's producer sent them."""
    module = codec.request_module(PRODUCE, 9)
    for i in range(count):
        batch = build_batch([Record(offset=0, timestamp=1_700_000_000_000, key=None, value=f"r{i}".encode())])
        data = codec.entity(module, "PartitionProduceData", index=0, records=batch)
        topics = (codec.entity(module, "TopicProduceData", name=topic, partition_data=(data,)),)
        answer = await broker.call(codec.downgrade(codec.request_class(PRODUCE, 9), transactional_id=None, acks=-1,
                                                   timeout=datetime.timedelta(seconds=1), topic_data=topics))
        assert answer.responses[0].partition_responses[0].error_code == ErrorCode.none, answer


def test_replaying_the_conversation_ends_where_the_real_one_did():
    async def replay(broker: DirectBroker) -> tuple[list[tuple[int, int]], dict | None]:
        await earliest(broker, "golden")
        await produce_batches(broker, "golden", 3)
        topic_id = next(str(t.topic_id) for e in GOLDEN if e["api"] == "ShareFetch" for t in request(e).topics)
        broker.metadata.topics["golden"].topic_id = topic_id  # the id the client knew
        acquired = []
        for entry in GOLDEN:
            raw = await asyncio.wait_for(broker.dispatcher.handle_frame(bytes.fromhex(entry["hex"])), 10)
            cls = codec.response_class(entry["api_key"], entry["version"])
            answer, _ = entity_reader(cls)(raw, 9)  # size, correlation id, tagged fields
            assert answer.error_code == ErrorCode.none, (entry["api"], answer)
            for topic in getattr(answer, "responses", ()):
                for part in topic.partitions:
                    assert getattr(part, "acknowledge_error_code", part.error_code) == ErrorCode.none
                    acquired += [(a.first_offset, a.delivery_count) for a in getattr(part, "acquired_records", ())]
        return acquired, broker.broker.share_partitions.describe("golden", "golden", 0)
    acquired, state = assembly.run(replay, topics={"golden": 1})
    assert acquired == [(0, 1), (0, 2), (1, 1)]
    assert state is not None
    assert (state["start_offset"], state["end_offset"], state["records"]) == (2, 2, {})


@pytest.mark.parametrize("entry", GOLDEN, ids=lambda e: f"{e['api']}-v{e['version']}")
def test_every_frame_lifts_to_the_newest_request_class(entry):
    lifted = codec.upgrade(request(entry), codec.latest_request_class(entry["api_key"]))
    assert type(lifted) is codec.latest_request_class(entry["api_key"])
