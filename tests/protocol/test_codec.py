"""The codec builds messages from names the message class really has.

A misspelt field used to be dropped without a word, so ``log_start_ofset=7`` went out as
the default ``log_start_offset=-1``. Now ``codec.make`` refuses a name its class lacks,
and ``codec.downgrade`` (what a handler's ``ctx.respond`` uses to fit one answer to the
negotiated version) drops only the fields some other version of the message has.
"""

from __future__ import annotations

import pytest

from minikafka.errors import ErrorCode
from minikafka.protocol import codec

FETCH, METADATA = 1, 3


def test_a_misspelt_field_raises_naming_the_field_and_the_class():
    partition = codec.response_module(FETCH, 12).PartitionData
    with pytest.raises(codec.UnknownField, match=r"PartitionData .*'log_start_ofset'"):
        codec.make(partition, partition_index=0, error_code=ErrorCode.none, high_watermark=9,
                   last_stable_offset=9, log_start_ofset=7, aborted_transactions=(), records=None)


def test_the_correctly_spelt_field_is_kept():
    partition = codec.response_module(FETCH, 12).PartitionData
    built = codec.make(partition, partition_index=0, error_code=ErrorCode.none, high_watermark=9,
                       last_stable_offset=9, log_start_offset=7, aborted_transactions=(), records=None)
    assert built.log_start_offset == 7


def test_downgrade_drops_only_what_the_older_version_lacks():
    old = codec.response_class(METADATA, 0)  # no cluster_id, controller_id or throttle_time in v0
    answer = codec.downgrade(old, brokers=(), topics=(), cluster_id="c", controller_id=1)
    assert answer == old(brokers=(), topics=())
    with pytest.raises(codec.UnknownField, match="MetadataResponse has no field 'cluster_idd' in any version"):
        codec.downgrade(old, brokers=(), topics=(), cluster_idd="c")


def test_a_nested_entity_is_checked_against_every_version_of_its_api():
    module = codec.response_module(FETCH, 4)  # log_start_offset arrived in v5
    fields = dict(partition_index=0, error_code=ErrorCode.none, high_watermark=9, last_stable_offset=9,
                  aborted_transactions=(), records=None)
    assert codec.entity(module, "PartitionData", log_start_offset=7, **fields).partition_index == 0
    with pytest.raises(codec.UnknownField, match="log_start_ofset"):
        codec.entity(module, "PartitionData", log_start_ofset=7, **fields)


def test_an_error_answer_carries_the_code_where_the_answer_has_one():
    assert codec.error_answer(codec.response_class(12, 4), ErrorCode.illegal_sasl_state).error_code == (
        ErrorCode.illegal_sasl_state)
    assert codec.error_answer(codec.response_class(METADATA, 12), ErrorCode.illegal_sasl_state).topics == ()


def test_downgrade_reads_no_other_version_when_this_one_has_every_field(monkeypatch):
    def every_version(cls):
        raise AssertionError(f"read every version of {cls.__name__}")

    monkeypatch.setattr(codec, "known_fields", every_version)
    newest = codec.response_class(METADATA, 12)
    answer = codec.downgrade(newest, brokers=(), topics=(), cluster_id="c", controller_id=1)
    assert answer.cluster_id == "c"


WARMED = """
import sys
from minikafka.protocol import codec
from minikafka.protocol.apis import API_TABLE
loaded = codec.warm_up()
before = set(sys.modules)
for api in API_TABLE:
    latest = codec.latest_request_class(api.key)
    for version in range(api.min_version, api.max_version + 1):
        codec.upgrade(codec.empty(codec.request_class(api.key, version)), latest)
        module = codec.response_module(api.key, version)
        for value in vars(module).values():
            if isinstance(value, type) and getattr(value, "__module__", "") == module.__name__:
                codec.known_fields(value)
print(loaded, sorted(set(sys.modules) - before))
"""


def test_warm_up_leaves_no_schema_for_a_request_to_load():
    """What ``minikafka serve`` does before its first request: after it, no API version a client
    may use makes the event loop import a module (which stalls every connection for ms)."""
    import subprocess
    import sys

    from minikafka.protocol.apis import API_TABLE
    run = subprocess.run([sys.executable, "-c", WARMED], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    loaded, imported = run.stdout.split(" ", 1)
    assert int(loaded) == sum(api.max_version - api.min_version + 1 for api in API_TABLE)
    assert imported.strip() == "[]"


def test_a_constant_answer_is_encoded_once_and_sent_with_each_correlation_id(monkeypatch):
    import struct

    answer = codec.constant(codec.empty(codec.response_class(codec.API_VERSIONS_KEY, 3)))
    first = codec.encode_response(1, answer)

    def encode_again(response):
        raise AssertionError("encoded again")

    monkeypatch.setattr(codec, "_encode_body", encode_again)
    second = codec.encode_response(2, answer)
    assert second[8:] == first[8:]
    assert struct.unpack(">ii", second[:8]) == (len(second) - 4, 2)
    other = codec.empty(codec.response_class(codec.API_VERSIONS_KEY, 3))  # equal, but not marked constant
    with pytest.raises(AssertionError, match="encoded again"):
        codec.encode_response(3, other)
