"""Golden bytes: request frames recorded from kafka-python 3.0.12 and confluent-kafka 2.16
(``record_golden.py``), fed straight to the frame handler of one in-process broker
(``minikafka.assembly``: no socket, no thread, no Cluster).

Every frame decodes as the API and version its header names and lifts to the newest
version's class; every answer decodes as that version's response; and a few answers
are exact (these clients break when they are not).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from kio.serial import entity_reader

from minikafka.errors import ErrorCode
from minikafka.assembly import DirectBroker
from minikafka.protocol import codec
from minikafka.protocol.apis import BY_KEY

GOLDEN = json.loads(Path(__file__).with_name("golden.json").read_text())
API_VERSIONS, METADATA, PRODUCE, CREATE_TOPICS, FIND_COORDINATOR, LIST_OFFSETS = 18, 3, 0, 19, 10, 2


def ids(entry: dict) -> str:
    return f"{entry['client']}-api{entry['api_key']}-v{entry['version']}"


@pytest.fixture(scope="module")
def broker():
    """One broker for the module's frames, on an event loop of its own that each answer runs on."""
    async def build() -> DirectBroker:
        built = DirectBroker()
        built.create_topic("golden", partitions=1)
        return built

    with asyncio.Runner() as runner:
        built = runner.run(build())
        yield runner, built
        runner.run(built.close())


def answer(runner: asyncio.Runner, broker: DirectBroker, entry: dict):
    frame = bytes.fromhex(entry["hex"])
    raw = runner.run(asyncio.wait_for(broker.dispatcher.handle_frame(frame), 10))
    key, version = entry["api_key"], entry["version"]
    if key == API_VERSIONS and version > BY_KEY[API_VERSIONS].max_version:
        version = 0  # an unsupported ApiVersions is answered with a v0 body
    cls = codec.response_class(key, version)
    offset = 8 + (1 if cls.__flexible__ and key != API_VERSIONS else 0)  # size, correlation id, tagged fields
    body, _ = entity_reader(cls)(raw, offset)
    return body


@pytest.mark.parametrize("entry", GOLDEN, ids=ids)
def test_every_recorded_frame_decodes_as_what_its_header_says(entry):
    frame = bytes.fromhex(entry["hex"])
    assert codec.peek_api(frame)[:2] == (entry["api_key"], entry["version"])
    if entry["api_key"] == API_VERSIONS and entry["version"] > BY_KEY[API_VERSIONS].max_version:
        return  # beyond the advertised range: answered without decoding the body
    _, request = codec.decode_request(frame, entry["api_key"], entry["version"])
    assert type(codec.upgrade(request, codec.latest_request_class(entry["api_key"]))) is \
        codec.latest_request_class(entry["api_key"])


@pytest.mark.parametrize("entry", GOLDEN, ids=ids)
def test_every_recorded_frame_gets_an_answer_of_its_version(broker, entry):
    assert answer(*broker, entry) is not None


def exact(entry_filter):
    return [e for e in GOLDEN if entry_filter(e)]


@pytest.mark.parametrize("entry", exact(lambda e: e["api_key"] == API_VERSIONS), ids=ids)
def test_api_versions_answers_ranges_or_unsupported_version(broker, entry):
    body = answer(*broker, entry)
    if entry["version"] > BY_KEY[API_VERSIONS].max_version:
        assert body.error_code == ErrorCode.unsupported_version and body.api_keys  # kafka-python retries lower
    else:
        assert body.error_code == ErrorCode.none
        assert {k.api_key for k in body.api_keys} >= {0, 1, 3, 18}


@pytest.mark.parametrize("entry", exact(lambda e: e["api_key"] in (METADATA, FIND_COORDINATOR, LIST_OFFSETS)),
                         ids=ids)
def test_lookups_succeed(broker, entry):
    body = answer(*broker, entry)
    if entry["api_key"] == METADATA:
        assert all(t.error_code == ErrorCode.none for t in body.topics if t.name == "golden") and body.brokers
    elif entry["api_key"] == FIND_COORDINATOR:
        assert body.error_code == ErrorCode.none and body.node_id == 1
    else:
        assert all(p.error_code == ErrorCode.none for t in body.topics for p in t.partitions)


@pytest.mark.parametrize("entry", exact(lambda e: e["api_key"] == CREATE_TOPICS), ids=ids)
def test_creating_an_existing_topic_says_so(broker, entry):
    body = answer(*broker, entry)
    assert [t.error_code for t in body.topics] == [ErrorCode.topic_already_exists]
