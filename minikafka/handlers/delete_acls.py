"""DeleteAcls: remove every ACL matching each filter, and say which ones went.

The filters are DescribeAcls' (null and ANY match everything, MATCH every pattern that
applies to a name); each filter's answer lists the ACLs it removed. Removals are
recorded in the cluster metadata.
"""

from __future__ import annotations

from typing import Any

from kio.schema.delete_acls.v3.request import DeleteAclsFilter, DeleteAclsRequest

from ..errors import ErrorCode
from ..security.acl import AclBinding, Operation
from . import _acls
from .ports import Caller, Response
from .describe_acls import acl_filter


def _matching(caller: Caller, acl: AclBinding) -> Any:
    return caller.make("DeleteAclsMatchingAcl", error_code=ErrorCode.none, error_message=None,
                       resource_type=int(acl.resource_type), resource_name=acl.name, pattern_type=int(acl.pattern),
                       principal=acl.principal, host=acl.host, operation=int(acl.operation),
                       permission_type=int(acl.permission))


def error_response(caller: Caller, request: DeleteAclsRequest, code: ErrorCode) -> Response:
    """Every filter refused with ``code``, nothing deleted (the fault API, or an unforwarded request)."""
    return caller.respond(filter_results=tuple(
        caller.make("DeleteAclsFilterResult", error_code=code, error_message=code.name, matching_acls=())
        for _ in request.filters))


class DeleteAcls(_acls.AclsHandler):
    async def handle(self, caller: Caller, request: DeleteAclsRequest) -> Response:
        refused = _acls.refusal(caller, Operation.ALTER)
        if refused is not None:
            return caller.respond(filter_results=tuple(
                caller.make("DeleteAclsFilterResult", error_code=refused[0], error_message=refused[1],
                            matching_acls=()) for _ in request.filters))
        return caller.respond(filter_results=tuple(self._delete(caller, f) for f in request.filters))

    def _delete(self, caller: Caller, f: DeleteAclsFilter) -> Any:
        wanted = acl_filter(f)
        problem = wanted.problem()
        if problem is not None:
            return caller.make("DeleteAclsFilterResult", error_code=ErrorCode.invalid_request, error_message=problem,
                               matching_acls=())
        gone = [acl for acl in self.acls.acls() if wanted.matches(acl)]
        for acl in gone:
            self.acls.remove_acl(acl)
        return caller.make("DeleteAclsFilterResult", error_code=ErrorCode.none, error_message=None,
                           matching_acls=tuple(_matching(caller, acl) for acl in gone))
