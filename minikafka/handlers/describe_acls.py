"""DescribeAcls: the ACLs matching a filter, grouped by resource pattern.

A filter field that is null (name, principal, host) or ANY (type, pattern, operation,
permission) matches everything; the pattern type MATCH finds every ACL that would
apply to one resource name: the literal one, the ``*`` wildcard and the prefixes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kio.schema.delete_acls.v3.request import DeleteAclsFilter
from kio.schema.describe_acls.v3.request import DescribeAclsRequest

from ..errors import ErrorCode
from ..security.acl import AclBinding, AclFilter, Operation, PatternType, Permission, ResourceType
from . import _acls
from .ports import Caller, Response


def acl_filter(f: DescribeAclsRequest | DeleteAclsFilter) -> AclFilter:
    """A DescribeAcls request, or one DeleteAcls filter (the same fields), as a filter."""
    return AclFilter(_acls.as_enum(ResourceType, f.resource_type_filter), f.resource_name_filter,
                     _acls.as_enum(PatternType, f.pattern_type_filter), f.principal_filter, f.host_filter,
                     _acls.as_enum(Operation, f.operation), _acls.as_enum(Permission, f.permission_type))


def _resources(caller: Caller, acls: Iterable[AclBinding]) -> tuple[Any, ...]:
    groups: dict[tuple, list] = {}
    for acl in sorted(acls, key=lambda a: (a.resource_type, a.name, a.pattern, a.principal, a.host)):
        groups.setdefault((acl.resource_type, acl.name, acl.pattern), []).append(
            caller.make("AclDescription", principal=acl.principal, host=acl.host, operation=int(acl.operation),
                        permission_type=int(acl.permission)))
    return tuple(caller.make("DescribeAclsResource", resource_type=int(t), resource_name=n, pattern_type=int(p),
                             acls=tuple(descriptions)) for (t, n, p), descriptions in groups.items())


class DescribeAcls(_acls.AclsHandler):
    async def handle(self, caller: Caller, request: DescribeAclsRequest) -> Response:
        refused = _acls.refusal(caller, Operation.DESCRIBE)
        if refused is not None:
            return caller.respond(error_code=refused[0], error_message=refused[1], resources=())
        wanted = acl_filter(request)
        problem = wanted.problem()
        if problem is not None:
            return caller.respond(error_code=ErrorCode.invalid_request, error_message=problem, resources=())
        found = [acl for acl in self.acls.acls() if wanted.matches(acl)]
        return caller.respond(error_code=ErrorCode.none, error_message=None, resources=_resources(caller, found))
