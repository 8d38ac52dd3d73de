"""The three config handlers alone (issue 27): each gets a ``Caller`` and a fake ``ConfigsPort``
(a tiny class below), never a broker, a socket or a Cluster. Requests are built at a version a
client sends and lifted as dispatch lifts them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from kio.schema.alter_configs.v0 import request as alter_v0
from kio.schema.describe_configs.v1 import request as describe_v1
from kio.schema.describe_configs.v4 import request as describe_v4
from kio.schema.incremental_alter_configs.v0 import request as incremental_v0

from minikafka.broker import Broker
from minikafka.errors import ErrorCode, KafkaError
from minikafka.handlers.alter_configs import AlterConfigs
from minikafka.handlers.describe_configs import DescribeConfigs
from minikafka.handlers.dispatch import lift
from minikafka.handlers.incremental_alter_configs import IncrementalAlterConfigs
from minikafka.handlers.ports import Caller, ConfigsPort, Described
from minikafka.resource_configs import APPEND, merge
from minikafka.security.acl import CLUSTER_NAME, Operation, ResourceType
from tests.fake_authorizer import Acls
from tests.port_checks import assert_provides

TOPIC, BROKER, BROKER_LOGGER, GROUP = 2, 4, 8, 32
RETENTION: Described = ("retention.ms", "1000", 1, 5, False, "How long to keep.", (("retention.ms", "1000", 1),
                                                                                  ("log.retention.ms", None, 5)))
SEGMENT: Described = ("segment.bytes", "1024", 5, 3, False, "A segment's size.", ())


class FakeConfigs:
    """A ConfigsPort: every resource describes RETENTION and SEGMENT, except topic "gone"."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def describe_resource_configs(self, resource_type: int, name: str) -> list[Described]:
        self.calls.append(("describe", resource_type, name))
        if name == "gone":
            raise KafkaError(ErrorCode.unknown_topic_or_partition, "Topic 'gone' does not exist.")
        return [RETENTION, SEGMENT]

    def replace_resource_configs(self, resource_type: int, name: str, overrides: dict[str, str],
                                 validate_only: bool) -> None:
        self.calls.append(("replace", resource_type, name, overrides, validate_only))

    def alter_resource_configs(self, resource_type: int, name: str, changes: list[tuple[int, str, str | None]],
                               validate_only: bool) -> None:
        self.calls.append(("alter", resource_type, name, changes, validate_only))




def run(handler: Any, api_key: int, request: Any, authorizer: Any = None) -> Any:
    caller = Caller(api_key, request.__version__, principal="User:alice", authorizer=authorizer)
    return asyncio.run(handler.handle(caller, lift(api_key, request)))


def test_broker_provides_the_configs_port():
    assert_provides(ConfigsPort, Broker, FakeConfigs)


# -- DescribeConfigs -------------------------------------------------------------------------------

def test_describe_configs_with_synonyms_and_documentation_only_when_asked():
    resource = describe_v4.DescribeConfigsResource(resource_type=TOPIC, resource_name="t",
                                                   configuration_keys=("retention.ms",))
    for asked in (False, True):
        request = describe_v4.DescribeConfigsRequest(resources=(resource,), include_synonyms=asked,
                                                     include_documentation=asked)
        [result] = run(DescribeConfigs(FakeConfigs()), 32, request).results
        [entry] = result.configs  # only the key asked for
        assert (entry.name, entry.value, entry.config_source, entry.config_type) == ("retention.ms", "1000", 1, 5)
        assert [(s.name, s.value, s.source) for s in entry.synonyms] == (
            [("retention.ms", "1000", 1), ("log.retention.ms", None, 5)] if asked else [])
        assert entry.documentation == ("How long to keep." if asked else None)


def test_describe_configs_answers_each_resource_its_own_error():
    resources = tuple(describe_v1.DescribeConfigsResource(resource_type=TOPIC, resource_name=n, configuration_keys=None)
                      for n in ("gone", "t"))
    answer = run(DescribeConfigs(FakeConfigs()), 32, describe_v1.DescribeConfigsRequest(resources=resources))
    assert [(r.resource_name, r.error_code, len(r.configs)) for r in answer.results] == [
        ("gone", ErrorCode.unknown_topic_or_partition, 0), ("t", ErrorCode.none, 2)]
    assert answer.results[0].error_message == "Topic 'gone' does not exist."


@pytest.mark.parametrize(("resource_type", "name", "code"), [
    (TOPIC, "t", ErrorCode.topic_authorization_failed), (BROKER, "1", ErrorCode.cluster_authorization_failed),
    (BROKER_LOGGER, "1", ErrorCode.cluster_authorization_failed), (GROUP, "g", ErrorCode.none)])
def test_describe_configs_asks_describe_configs_on_the_topic_or_the_cluster(resource_type, name, code):
    port = FakeConfigs()
    request = describe_v1.DescribeConfigsRequest(resources=(describe_v1.DescribeConfigsResource(
        resource_type=resource_type, resource_name=name, configuration_keys=None),))
    [result] = run(DescribeConfigs(port), 32, request, Acls()).results
    assert result.error_code == code
    assert bool(port.calls) == (code == ErrorCode.none)  # a refused resource is not described
    allowed = Acls((Operation.DESCRIBE_CONFIGS, ResourceType.TOPIC, "t"),
                   (Operation.DESCRIBE_CONFIGS, ResourceType.CLUSTER, CLUSTER_NAME))
    assert run(DescribeConfigs(FakeConfigs()), 32, request, allowed).results[0].error_code == ErrorCode.none


# -- AlterConfigs and IncrementalAlterConfigs ------------------------------------------------------

def alter_request(resource_type: int, name: str, validate_only: bool) -> Any:
    return alter_v0.AlterConfigsRequest(validate_only=validate_only, resources=(alter_v0.AlterConfigsResource(
        resource_type=resource_type, resource_name=name, configs=(
            alter_v0.AlterableConfig(name="retention.ms", value="5"),
            alter_v0.AlterableConfig(name="segment.bytes", value=None))),))


def incremental_request(resource_type: int, name: str, validate_only: bool) -> Any:
    return incremental_v0.IncrementalAlterConfigsRequest(validate_only=validate_only, resources=(
        incremental_v0.AlterConfigsResource(resource_type=resource_type, resource_name=name, configs=(
            incremental_v0.AlterableConfig(name="cleanup.policy", config_operation=APPEND, value="compact"),)),))


@pytest.mark.parametrize("validate_only", [False, True])
def test_alter_configs_passes_validate_only_and_only_the_values_given(validate_only):
    port = FakeConfigs()
    [result] = run(AlterConfigs(port), 33, alter_request(TOPIC, "t", validate_only)).responses
    assert (result.error_code, result.resource_name) == (ErrorCode.none, "t")
    assert port.calls == [("replace", TOPIC, "t", {"retention.ms": "5"}, validate_only)]


@pytest.mark.parametrize("validate_only", [False, True])
def test_incremental_alter_configs_passes_each_operation_and_validate_only(validate_only):
    port = FakeConfigs()
    [result] = run(IncrementalAlterConfigs(port), 44, incremental_request(TOPIC, "t", validate_only)).responses
    assert result.error_code == ErrorCode.none
    assert port.calls == [("alter", TOPIC, "t", [(APPEND, "cleanup.policy", "compact")], validate_only)]


@pytest.mark.parametrize(("api_key", "handler", "build"), [(33, AlterConfigs, alter_request),
                                                           (44, IncrementalAlterConfigs, incremental_request)])
@pytest.mark.parametrize(("resource_type", "name", "code"), [
    (TOPIC, "t", ErrorCode.topic_authorization_failed), (BROKER, "", ErrorCode.cluster_authorization_failed),
    (BROKER_LOGGER, "1", ErrorCode.cluster_authorization_failed), (GROUP, "g", ErrorCode.none)])
def test_altering_needs_alter_configs_on_the_topic_or_the_cluster(api_key, handler, build, resource_type, name, code):
    port = FakeConfigs()
    [result] = run(handler(port), api_key, build(resource_type, name, False), Acls()).responses
    assert result.error_code == code
    assert bool(port.calls) == (code == ErrorCode.none)


def test_append_to_a_list_setting_starts_from_its_value_and_adds_each_item_once():
    overrides: dict[str, str] = {}
    merge(overrides, APPEND, "cleanup.policy", "compact,delete", now="delete")
    assert overrides == {"cleanup.policy": "delete,compact"}
    with pytest.raises(KafkaError) as refused:
        merge(overrides, APPEND, "retention.ms", "5")
    assert refused.value.code == ErrorCode.invalid_config
