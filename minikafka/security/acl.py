"""ACL bindings: the rules the authorizer applies, in Kafka's vocabulary (KIP-290).

A binding says that a principal (``User:alice``, or ``User:*`` for everyone) from a host
(or ``*``) is ALLOWed or DENYed an operation on a resource pattern: a resource type and
a name matched LITERALly (``*`` meaning every name) or as a PREFIXED name. The enum
values are the int8 codes of the CreateAcls, DescribeAcls and DeleteAcls wire formats.
A filter (DescribeAcls, DeleteAcls) matches bindings field by field, with ANY and null
matching everything and MATCH finding every pattern that would apply to one name.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass

WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"  # the one CLUSTER resource's name


class ResourceType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class Operation(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class Permission(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


class PatternType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


# The operations that mean something for each resource type (KIP-430's authorized operations).
OPERATIONS: dict[ResourceType, frozenset[Operation]] = {
    ResourceType.TOPIC: frozenset({Operation.READ, Operation.WRITE, Operation.CREATE, Operation.DESCRIBE,
                                   Operation.DELETE, Operation.ALTER, Operation.DESCRIBE_CONFIGS,
                                   Operation.ALTER_CONFIGS}),
    ResourceType.GROUP: frozenset({Operation.READ, Operation.DESCRIBE, Operation.DELETE}),
    ResourceType.CLUSTER: frozenset({Operation.CREATE, Operation.CLUSTER_ACTION, Operation.DESCRIBE_CONFIGS,
                                     Operation.ALTER_CONFIGS, Operation.IDEMPOTENT_WRITE, Operation.ALTER,
                                     Operation.DESCRIBE}),
    ResourceType.TRANSACTIONAL_ID: frozenset({Operation.DESCRIBE, Operation.WRITE, Operation.TWO_PHASE_COMMIT}),
    ResourceType.DELEGATION_TOKEN: frozenset({Operation.DESCRIBE}),
    ResourceType.USER: frozenset({Operation.CREATE_TOKENS, Operation.DESCRIBE_TOKENS}),
}


class InvalidAcl(ValueError):
    """A binding CreateAcls must refuse (INVALID_REQUEST), with the reason."""


@dataclass(frozen=True, slots=True)
class AclBinding:
    resource_type: ResourceType
    name: str
    pattern: PatternType
    principal: str
    host: str
    operation: Operation
    permission: Permission

    def to_record(self) -> dict:
        return {k: int(v) if isinstance(v, enum.IntEnum) else v for k, v in asdict(self).items()}

    @classmethod
    def from_record(cls, rec: dict) -> AclBinding:
        return cls(ResourceType(rec["resource_type"]), rec["name"], PatternType(rec["pattern"]),
                   rec["principal"], rec["host"], Operation(rec["operation"]), Permission(rec["permission"]))

    def validate(self) -> None:
        """Raise InvalidAcl unless this is a binding Kafka would store (its controller's checks)."""
        if self.resource_type in (ResourceType.ANY, ResourceType.UNKNOWN):
            raise InvalidAcl(f"Invalid resourceType {self.resource_type.name}")
        if self.pattern not in (PatternType.LITERAL, PatternType.PREFIXED):
            raise InvalidAcl(f"Invalid patternType {self.pattern.name}")
        if self.operation in (Operation.ANY, Operation.UNKNOWN):
            raise InvalidAcl(f"Invalid operation {self.operation.name}")
        if self.permission not in (Permission.ALLOW, Permission.DENY):
            raise InvalidAcl(f"Invalid permissionType {self.permission.name}")
        if not self.name:
            raise InvalidAcl("Resource name should not be empty")
        if self.resource_type == ResourceType.CLUSTER and self.name != CLUSTER_NAME:
            raise InvalidAcl(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")
        kind, _, name = self.principal.partition(":")
        if not kind or not name:
            raise InvalidAcl(f"Could not parse principal from `{self.principal}` (no colon is present "
                             "separating the principal type from the principal name)")
        if not self.host:
            raise InvalidAcl("Host must not be empty: give an address or '*'")


@dataclass(frozen=True, slots=True)
class AclFilter:
    """DescribeAcls' and DeleteAcls' filter: None and ANY match every value."""

    resource_type: ResourceType
    name: str | None
    pattern: PatternType
    principal: str | None
    host: str | None
    operation: Operation
    permission: Permission

    def matches(self, acl: AclBinding) -> bool:
        return (self.resource_type in (ResourceType.ANY, acl.resource_type)
                and self._pattern_matches(acl)
                and self.principal in (None, acl.principal) and self.host in (None, acl.host)
                and self.operation in (Operation.ANY, acl.operation)
                and self.permission in (Permission.ANY, acl.permission))

    def _pattern_matches(self, acl: AclBinding) -> bool:
        if self.pattern == PatternType.MATCH:  # every pattern that applies to the resource self.name
            return self.name is None or applies_to(acl, self.name)
        if self.pattern not in (PatternType.ANY, acl.pattern):
            return False
        return self.name is None or self.name == acl.name

    def problem(self) -> str | None:
        """Why Kafka would refuse this filter (INVALID_REQUEST), or None."""
        for value, enum_type in ((self.resource_type, ResourceType), (self.pattern, PatternType),
                                 (self.operation, Operation), (self.permission, Permission)):
            if value == enum_type.UNKNOWN:
                return f"The filter's {enum_type.__name__} is UNKNOWN."
        return None


def applies_to(acl: AclBinding, name: str) -> bool:
    """Whether the ACL's resource pattern covers the resource ``name`` (same type assumed)."""
    if acl.pattern == PatternType.PREFIXED:
        return name.startswith(acl.name)
    return acl.name == name or acl.name == WILDCARD
