"""CreateAcls (KIP-140, prefixed patterns KIP-290): add ALLOW and DENY rules.

Each creation is checked as Kafka's controller checks it (a known resource type, a
LITERAL or PREFIXED pattern, a real operation and permission, a TYPE:NAME principal)
and refused alone with INVALID_REQUEST; the others are stored in the cluster
metadata, so they hold on every broker and survive a restart. Creating an ACL that
exists already succeeds and changes nothing.
"""

from __future__ import annotations

from typing import Any

from kio.schema.create_acls.v3.request import AclCreation, CreateAclsRequest

from ..errors import ErrorCode
from ..security.acl import AclBinding, InvalidAcl, Operation, PatternType, Permission, ResourceType
from . import _acls
from .ports import Caller, Response


def _binding(c: AclCreation) -> AclBinding:
    return AclBinding(_acls.as_enum(ResourceType, c.resource_type), c.resource_name,
                      _acls.as_enum(PatternType, c.resource_pattern_type), c.principal, c.host,
                      _acls.as_enum(Operation, c.operation), _acls.as_enum(Permission, c.permission_type))


def error_response(caller: Caller, request: CreateAclsRequest, code: ErrorCode) -> Response:
    """Every creation refused with ``code`` (the fault API, or a broker process that could not forward it)."""
    return caller.respond(results=tuple(caller.make("AclCreationResult", error_code=code, error_message=code.name)
                                        for _ in request.creations))


class CreateAcls(_acls.AclsHandler):
    async def handle(self, caller: Caller, request: CreateAclsRequest) -> Response:
        refused = _acls.refusal(caller, Operation.ALTER)
        if refused is not None:
            code, message = refused
            return caller.respond(results=tuple(caller.make("AclCreationResult", error_code=code,
                                                            error_message=message) for _ in request.creations))
        return caller.respond(results=tuple(self._create(caller, c) for c in request.creations))

    def _create(self, caller: Caller, creation: AclCreation) -> Any:
        try:
            binding = _binding(creation)
            binding.validate()
        except InvalidAcl as e:
            return caller.make("AclCreationResult", error_code=ErrorCode.invalid_request, error_message=str(e))
        self.acls.add_acl(binding)
        return caller.make("AclCreationResult", error_code=ErrorCode.none, error_message=None)
