"""An authorizer for handler unit tests: it allows exactly the (operation, resource type, name)
triples it is given, and "any resource of a type" where one of them names that type."""

from __future__ import annotations

from minikafka.security.acl import Operation, ResourceType


class Acls:
    def __init__(self, *allowed: tuple[Operation, ResourceType, str]):
        self.allowed = set(allowed)

    def authorize(self, principal: str, host: str, operation: Operation, resource_type: ResourceType,
                  name: str) -> bool:
        return (operation, resource_type, name) in self.allowed

    def authorize_any(self, principal: str, host: str, operation: Operation, resource_type: ResourceType) -> bool:
        return any(o == operation and r == resource_type for o, r, _ in self.allowed)
