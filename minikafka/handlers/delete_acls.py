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
from .context import RequestContext, Response
from .describe_acls import acl_filter


def _matching(ctx: RequestContext, acl: AclBinding) -> Any:
    return ctx.make("DeleteAclsMatchingAcl", error_code=ErrorCode.none, error_message=None,
                    resource_type=int(acl.resource_type), resource_name=acl.name, pattern_type=int(acl.pattern),
                    principal=acl.principal, host=acl.host, operation=int(acl.operation),
                    permission_type=int(acl.permission))


def _delete(ctx: RequestContext, f: DeleteAclsFilter) -> Any:
    wanted = acl_filter(f)
    problem = wanted.problem()
    if problem is not None:
        return ctx.make("DeleteAclsFilterResult", error_code=ErrorCode.invalid_request, error_message=problem,
                        matching_acls=())
    store = _acls.store(ctx)
    gone = [acl for acl in store.acls() if wanted.matches(acl)]
    for acl in gone:
        store.remove_acl(acl)
    return ctx.make("DeleteAclsFilterResult", error_code=ErrorCode.none, error_message=None,
                    matching_acls=tuple(_matching(ctx, acl) for acl in gone))


async def handle(ctx: RequestContext, request: DeleteAclsRequest) -> Response:
    refused = _acls.refusal(ctx, Operation.ALTER)
    if refused is not None:
        return ctx.respond(filter_results=tuple(
            ctx.make("DeleteAclsFilterResult", error_code=refused[0], error_message=refused[1], matching_acls=())
            for _ in request.filters))
    return ctx.respond(filter_results=tuple(_delete(ctx, f) for f in request.filters))
