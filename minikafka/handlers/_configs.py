"""What the config handlers share: the ACL check of a resource (DESCRIBE_CONFIGS or ALTER_CONFIGS on
the topic, or on the cluster for a broker's settings and loggers; a group's settings need none
here), the per-resource answer of the two alter APIs, and the base of their handler objects,
which hold the broker's ``ConfigsPort``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ErrorCode, KafkaError
from ..security.acl import CLUSTER_NAME, Operation, ResourceType
from .ports import Caller, ConfigsPort

TOPIC, BROKER, BROKER_LOGGER, GROUP = 2, 4, 8, 32


def check_access(caller: Caller, resource_type: int, name: str, op: Operation) -> None:
    """TOPIC_ or CLUSTER_AUTHORIZATION_FAILED unless the caller may do ``op`` on the resource's settings."""
    if resource_type == TOPIC and not caller.allowed(op, ResourceType.TOPIC, name):
        raise KafkaError(ErrorCode.topic_authorization_failed, f"Not authorized to {op.name} of topic {name!r}.")
    if resource_type in (BROKER, BROKER_LOGGER) and not caller.allowed(op, ResourceType.CLUSTER, CLUSTER_NAME):
        raise KafkaError(ErrorCode.cluster_authorization_failed, f"Not authorized to {op.name} of the cluster.")


def altered(caller: Caller, resource_type: int, name: str, change: Callable[[], None]) -> Any:
    """One resource's answer to AlterConfigs or IncrementalAlterConfigs: ``change`` run if allowed."""
    try:
        check_access(caller, resource_type, name, Operation.ALTER_CONFIGS)
        change()
        code, message = ErrorCode.none, None
    except KafkaError as e:
        code, message = e.code, e.message
    return caller.make("AlterConfigsResourceResponse", error_code=code, error_message=message,
                       resource_type=resource_type, resource_name=name)


class ConfigsHandler:
    """A config API's handler, constructed by the registry with the broker's configs port."""

    def __init__(self, configs: ConfigsPort) -> None:
        self.configs = configs
