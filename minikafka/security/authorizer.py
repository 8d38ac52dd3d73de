"""The authorizer: may this principal, from this host, do this operation on this resource?

Kafka's ``StandardAuthorizer`` rules (``authorizer.class.name``), in order:

1. a super user (``super.users=User:admin;User:ops``) may do everything;
2. the ACLs that apply are those of the resource's type whose pattern covers its name:
   LITERAL with the same name, LITERAL ``*``, or PREFIXED with a prefix of the name;
   of those, the ones naming the principal (or ``User:*``) and the host (or ``*``);
3. a matching DENY wins over any ALLOW;
4. an ALLOW matches its operation, ALL, and what it implies: READ, WRITE, DELETE and
   ALTER imply DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS (implication never
   applies to DENY: denying READ does not deny DESCRIBE);
5. when no ACL at all covers the resource, ``allow.everyone.if.no.acl.found`` decides
   (false by default: a secured cluster refuses what nobody allowed).

``authorize_any`` is KIP-679's "authorize by resource type": whether some resource of a
type would allow the operation (an idempotent producer needs WRITE on any topic).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from .acl import OPERATIONS, AclBinding, Operation, PatternType, Permission, ResourceType, WILDCARD, \
    WILDCARD_PRINCIPAL, applies_to

AUTHORIZER_CLASSES = ("org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                      "kafka.security.authorizer.AclAuthorizer")  # the ZooKeeper-era name, same rules here

_IMPLIES_DESCRIBE = frozenset({Operation.DESCRIBE, Operation.READ, Operation.WRITE, Operation.DELETE,
                               Operation.ALTER})
_IMPLIES_DESCRIBE_CONFIGS = frozenset({Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS})
_PROBE_NAME = "hardcode"  # Kafka's stand-in resource name when authorizing by resource type


class AclSource(Protocol):
    def of_type(self, resource_type: ResourceType) -> Iterable[AclBinding]: ...


class Authorizer(Protocol):
    """What a request handler may ask: the narrow interface, not the ACL store."""

    def authorize(self, principal: str, host: str, operation: Operation, resource_type: ResourceType,
                  name: str) -> bool: ...

    def authorize_any(self, principal: str, host: str, operation: Operation,
                      resource_type: ResourceType) -> bool: ...


def _result(acl: AclBinding, principal: str, host: str, operation: Operation) -> Permission | None:
    """ALLOW or DENY when ``acl`` speaks about this principal, host and operation, else None."""
    if acl.principal not in (principal, WILDCARD_PRINCIPAL) or acl.host not in (host, WILDCARD):
        return None
    if acl.operation == Operation.ALL or acl.operation == operation:
        return acl.permission
    if acl.permission == Permission.ALLOW:
        if operation == Operation.DESCRIBE and acl.operation in _IMPLIES_DESCRIBE:
            return acl.permission
        if operation == Operation.DESCRIBE_CONFIGS and acl.operation in _IMPLIES_DESCRIBE_CONFIGS:
            return acl.permission
    return None


class StandardAuthorizer:
    def __init__(self, acls: AclSource, super_users: Iterable[str] = (), allow_everyone_if_no_acl: bool = False):
        self.acls = acls
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl = allow_everyone_if_no_acl

    def authorize(self, principal: str, host: str, operation: Operation, resource_type: ResourceType,
                  name: str) -> bool:
        if principal in self.super_users:
            return True
        found = allowed = False
        for acl in self.acls.of_type(resource_type):
            if not applies_to(acl, name):
                continue
            found = True
            verdict = _result(acl, principal, host, operation)
            if verdict == Permission.DENY:
                return False
            allowed = allowed or verdict == Permission.ALLOW
        return allowed or (not found and self.allow_everyone_if_no_acl)

    def authorize_any(self, principal: str, host: str, operation: Operation, resource_type: ResourceType) -> bool:
        if self.authorize(principal, host, operation, resource_type, _PROBE_NAME):
            return True
        rules = [a for a in self.acls.of_type(resource_type)
                 if a.principal in (principal, WILDCARD_PRINCIPAL) and a.host in (host, WILDCARD)
                 and a.operation in (operation, Operation.ALL)]
        denied = [a for a in rules if a.permission == Permission.DENY]
        if any(a.pattern == PatternType.LITERAL and a.name == WILDCARD for a in denied):
            return False
        return any(not _covered(a, denied) for a in rules if a.permission == Permission.ALLOW)

    def authorized_operations(self, principal: str, host: str, resource_type: ResourceType, name: str) -> int:
        """KIP-430's bit field: bit N set when operation N is allowed on the resource."""
        bits = 0
        for op in OPERATIONS.get(resource_type, ()):
            if self.authorize(principal, host, op, resource_type, name):
                bits |= 1 << int(op)
        return bits


def _covered(allow: AclBinding, denied: list[AclBinding]) -> bool:
    """Whether some DENY takes away every resource the ALLOW pattern grants."""
    for deny in denied:
        if deny.pattern == PatternType.PREFIXED and allow.name.startswith(deny.name):
            return True
        if deny.pattern == PatternType.LITERAL and allow.pattern == PatternType.LITERAL and deny.name == allow.name:
            return True
    return False
