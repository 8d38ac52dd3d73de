"""What the three ACL APIs share: the store, the cluster check, and the wire's int8 enums.

Kafka answers them only with an authorizer configured (SECURITY_DISABLED otherwise);
creating and deleting need ALTER on the cluster, describing needs DESCRIBE.
"""

from __future__ import annotations

import enum
from typing import Any

from ..errors import ErrorCode
from ..security.acl import CLUSTER_NAME, Operation, ResourceType
from ..security.store import SecurityRecords
from .context import RequestContext

NO_AUTHORIZER = "No Authorizer is configured."


def store(ctx: RequestContext) -> SecurityRecords:
    return ctx.broker.metadata.security


def refusal(ctx: RequestContext, operation: Operation) -> tuple[ErrorCode, str] | None:
    """Why the whole request is refused, or None."""
    if ctx.authorizer is None:
        return ErrorCode.security_disabled, NO_AUTHORIZER
    if not ctx.allowed(operation, ResourceType.CLUSTER, CLUSTER_NAME):
        return ErrorCode.cluster_authorization_failed, f"Not authorized to {operation.name} the cluster's ACLs."
    return None


def as_enum(kind: type[enum.IntEnum], value: int) -> Any:
    """The enum member for a wire value; UNKNOWN (0) for a value Kafka does not define."""
    try:
        return kind(value)
    except ValueError:
        return kind(0)
