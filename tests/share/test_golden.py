"""Golden bytes: the share-group conversation of confluent-kafka 2.16's ``ShareConsumer``
(``record_golden.py``: join, fetch, release, commit, fetch with a piggybacked accept,
leave, close), replayed frame by frame into a broker's dispatcher with no socket.

Every frame decodes as its header says, and the replay ends where the real run did:
the released record delivered again with delivery count 2, then accepted, and the last
record accepted by the acknowledgement the consumer sends as it closes.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from kio.serial import entity_reader

from minikafka.errors import ErrorCode
from minikafka.protocol import codec
from tests.share.helpers import earliest, produce_batches

GOLDEN = json.loads(Path(__file__).with_name("golden.json").read_text())


def request(entry: dict):
    return codec.decode_request(bytes.fromhex(entry["hex"]), entry["api_key"], entry["version"])[1]


def test_the_recorded_frames_are_the_versions_the_broker_advertises():
    from minikafka.protocol.apis import BY_KEY
    assert {(e["api"], e["version"]) for e in GOLDEN} == {("ShareGroupHeartbeat", 1), ("ShareFetch", 1),
                                                            ("ShareAcknowledge", 1)}
    assert all(BY_KEY[e["api_key"]].supports(e["version"]) for e in GOLDEN)


def test_replaying_the_conversation_ends_where_the_real_one_did(make_cluster):
    cluster = make_cluster(in_memory=True)
    earliest(cluster.bootstrap_servers, "golden")
    produce_batches(cluster.bootstrap_servers, "golden", 3)
    topic_id = next(str(t.topic_id) for e in GOLDEN if e["api"] == "ShareFetch" for t in request(e).topics)
    cluster.call(setattr, cluster.metadata.topics["golden"], "topic_id", topic_id)  # the id the client knew
    acquired = []
    for entry in GOLDEN:
        frame = bytes.fromhex(entry["hex"])
        raw = asyncio.run_coroutine_threadsafe(cluster.dispatchers[1].handle_frame(frame), cluster._loop).result(10)
        cls = codec.response_class(entry["api_key"], entry["version"])
        answer, _ = entity_reader(cls)(raw, 9)  # size, correlation id, tagged fields
        assert answer.error_code == ErrorCode.none, (entry["api"], answer)
        for topic in getattr(answer, "responses", ()):
            for part in topic.partitions:
                assert getattr(part, "acknowledge_error_code", part.error_code) == ErrorCode.none
                acquired += [(a.first_offset, a.delivery_count) for a in getattr(part, "acquired_records", ())]
    assert acquired == [(0, 1), (0, 2), (1, 1)]
    state = cluster.share_partition_state("golden", "golden")
    assert (state["start_offset"], state["end_offset"], state["records"]) == (2, 2, {})


@pytest.mark.parametrize("entry", GOLDEN, ids=lambda e: f"{e['api']}-v{e['version']}")
def test_every_frame_lifts_to_the_newest_request_class(entry):
    lifted = codec.upgrade(request(entry), codec.latest_request_class(entry["api_key"]))
    assert type(lifted) is codec.latest_request_class(entry["api_key"])
