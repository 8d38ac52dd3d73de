"""DescribeConfigs, IncrementalAlterConfigs (KIP-339) and AlterConfigs handlers called
directly on one in-process broker (``minikafka.assembly``): no socket, no thread, no Cluster.

A topic's setting is changed one way, then read back the way an admin client reads it:
its value and its source (a topic override, or the default). The admin tests cover the
same APIs end to end with real clients.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from minikafka.errors import ErrorCode
from minikafka import assembly
from minikafka.assembly import DirectBroker
from minikafka.protocol import codec

DESCRIBE_CONFIGS, ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS = 32, 33, 44
TOPIC, BROKER = 2, 4  # config resource types
SET, DELETE, APPEND = 0, 1, 2  # IncrementalAlterConfigs operations
DYNAMIC_TOPIC_CONFIG, DEFAULT_CONFIG = 1, 5  # where a value comes from, as DescribeConfigs codes it
WEEK_MS = "604800000"  # retention.ms's default


def run(check: Callable[[DirectBroker], Awaitable[Any]]) -> Any:
    return assembly.run(check, topics={"orders": 1})


def describe(version: int, resource_type: int, name: str, *keys: str) -> Any:
    module = codec.request_module(DESCRIBE_CONFIGS, version)
    resource = codec.entity(module, "DescribeConfigsResource", resource_type=resource_type, resource_name=name,
                            configuration_keys=keys or None)
    return codec.downgrade(codec.request_class(DESCRIBE_CONFIGS, version), resources=(resource,),
                           include_synonyms=True)


def incremental(*changes: tuple[str, int, str | None], topic: str = "orders", validate_only: bool = False) -> Any:
    module = codec.request_module(INCREMENTAL_ALTER_CONFIGS, 1)
    configs = tuple(codec.entity(module, "AlterableConfig", name=n, config_operation=op, value=v)
                    for n, op, v in changes)
    resource = codec.entity(module, "AlterConfigsResource", resource_type=TOPIC, resource_name=topic,
                            configs=configs)
    return codec.make(codec.request_class(INCREMENTAL_ALTER_CONFIGS, 1), resources=(resource,),
                      validate_only=validate_only)


def alter(**configs: str) -> Any:
    module = codec.request_module(ALTER_CONFIGS, 2)
    entries = tuple(codec.entity(module, "AlterableConfig", name=n.replace("_", "."), value=v)
                    for n, v in configs.items())
    resource = codec.entity(module, "AlterConfigsResource", resource_type=TOPIC, resource_name="orders",
                            configs=entries)
    return codec.make(codec.request_class(ALTER_CONFIGS, 2), resources=(resource,), validate_only=False)


async def setting(broker: DirectBroker, name: str) -> tuple[str | None, int]:
    """The topic's value of ``name`` and its source code, as DescribeConfigs v4 answers them."""
    answer = await broker.call(describe(4, TOPIC, "orders", name))
    [result] = answer.results
    [entry] = result.configs
    return entry.value, entry.config_source


def codes(answer: Any) -> list[ErrorCode]:
    return [r.error_code for r in answer.responses]


@pytest.mark.parametrize("version", [1, 2, 4])
def test_describe_configs_lists_every_topic_setting_with_its_default(version):
    answer = run(lambda b: b.call(describe(version, TOPIC, "orders")))
    assert type(answer) is codec.response_class(DESCRIBE_CONFIGS, version)
    [result] = answer.results
    by_name = {c.name: c for c in result.configs}
    assert result.error_code == ErrorCode.none
    assert {"retention.ms", "cleanup.policy", "min.insync.replicas"} <= set(by_name)
    assert (by_name["retention.ms"].value, by_name["retention.ms"].config_source) == (WEEK_MS, DEFAULT_CONFIG)


def test_describe_configs_of_a_missing_topic_is_unknown_topic_or_partition():
    [result] = run(lambda b: b.call(describe(4, TOPIC, "missing"))).results
    assert (result.error_code, result.configs) == (ErrorCode.unknown_topic_or_partition, ())
    assert result.error_message


def test_incremental_set_overrides_then_delete_restores_the_default():
    async def check(broker: DirectBroker) -> list[Any]:
        seen = [await broker.call(incremental(("retention.ms", SET, "60000"))), await setting(broker, "retention.ms")]
        seen += [await broker.call(incremental(("retention.ms", DELETE, None))), await setting(broker, "retention.ms")]
        return seen

    set_answer, after_set, delete_answer, after_delete = run(check)
    assert codes(set_answer) == codes(delete_answer) == [ErrorCode.none]
    assert after_set == ("60000", DYNAMIC_TOPIC_CONFIG)
    assert after_delete == (WEEK_MS, DEFAULT_CONFIG)


def test_incremental_append_adds_to_a_list_setting():
    async def check(broker: DirectBroker) -> tuple[Any, Any]:
        answer = await broker.call(incremental(("cleanup.policy", APPEND, "compact")))
        return answer, await setting(broker, "cleanup.policy")

    answer, (value, source) = run(check)
    assert codes(answer) == [ErrorCode.none]
    assert (value, source) == ("delete,compact", DYNAMIC_TOPIC_CONFIG)


def test_validate_only_checks_and_changes_nothing():
    async def check(broker: DirectBroker) -> tuple[Any, Any]:
        answer = await broker.call(incremental(("retention.ms", SET, "60000"), validate_only=True))
        return answer, await setting(broker, "retention.ms")

    answer, after = run(check)
    assert codes(answer) == [ErrorCode.none]
    assert after == (WEEK_MS, DEFAULT_CONFIG)


@pytest.mark.parametrize(("change", "code"), [
    (("retention.mss", SET, "1"), ErrorCode.invalid_config),  # no such setting
    (("retention.ms", SET, "a week"), ErrorCode.invalid_config),  # not a number
    (("retention.ms", APPEND, "1"), ErrorCode.invalid_config),  # APPEND is for list settings
])
def test_a_bad_change_is_refused_with_a_sentence_and_nothing_changes(change, code):
    async def check(broker: DirectBroker) -> tuple[Any, Any]:
        answer = await broker.call(incremental(change))
        return answer, await setting(broker, "retention.ms")

    answer, after = run(check)
    [result] = answer.responses
    assert result.error_code == code and result.error_message
    assert after == (WEEK_MS, DEFAULT_CONFIG)


def test_incremental_on_a_missing_topic_is_unknown_topic_or_partition():
    answer = run(lambda b: b.call(incremental(("retention.ms", SET, "1"), topic="missing")))
    assert codes(answer) == [ErrorCode.unknown_topic_or_partition]


def test_alter_configs_replaces_every_override_of_the_topic():
    """The legacy API sets the whole set: an override it does not name goes back to its default."""
    async def check(broker: DirectBroker) -> list[Any]:
        await broker.call(incremental(("retention.ms", SET, "60000")))
        answer = await broker.call(alter(cleanup_policy="compact"))
        return [answer, await setting(broker, "retention.ms"), await setting(broker, "cleanup.policy")]

    answer, retention, policy = run(check)
    assert codes(answer) == [ErrorCode.none]
    assert retention == (WEEK_MS, DEFAULT_CONFIG)
    assert policy == ("compact", DYNAMIC_TOPIC_CONFIG)


def test_describe_configs_of_this_broker_names_its_id():
    [result] = run(lambda b: b.call(describe(4, BROKER, "1", "broker.id"))).results
    assert result.error_code == ErrorCode.none
    assert [(c.name, c.value) for c in result.configs] == [("broker.id", "1")]
