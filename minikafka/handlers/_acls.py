"""What the three ACL APIs share: the cluster check, the wire's int8 enums, and the base of their
handler objects, which hold the broker's ``AclsPort``.

Kafka answers them only with an authorizer configured (SECURITY_DISABLED otherwise);
creating and deleting need ALTER on the cluster, describing needs DESCRIBE.
"""

from __future__ import annotations

import enum
from typing import Any

from ..errors import ErrorCode
from ..security.acl import Operation
from .ports import AclsPort, Caller

NO_AUTHORIZER = "No Authorizer is configured."


class AclsHandler:
    """An ACL API's handler, constructed by the registry with the broker's ACLs port."""

    def __init__(self, acls: AclsPort) -> None:
        self.acls = acls


def refusal(caller: Caller, operation: Operation) -> tuple[ErrorCode, str] | None:
    """Why the whole request is refused, or None."""
    if caller.authorizer is None:
        return ErrorCode.security_disabled, NO_AUTHORIZER
    if not caller.allowed_cluster(operation):
        return ErrorCode.cluster_authorization_failed, f"Not authorized to {operation.name} the cluster's ACLs."
    return None


def as_enum(kind: type[enum.IntEnum], value: int) -> Any:
    """The enum member for a wire value; UNKNOWN (0) for a value Kafka does not define."""
    try:
        return kind(value)
    except ValueError:
        return kind(0)
