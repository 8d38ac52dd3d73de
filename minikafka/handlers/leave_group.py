"""LeaveGroup: members leave now instead of waiting for their session to time out.

A consumer closing cleanly sends it so its partitions move at once. v0-2 name one
member; v3+ (KIP-345) a list of members, each by member id and/or
``group.instance.id`` (an admin may remove a static member by instance id alone), with
one error code per member.
"""

from __future__ import annotations

from ..errors import ErrorCode, KafkaError
from ._groups import coordinator


def _leaving(request) -> list[tuple[str, str | None]]:
    if hasattr(request, "members"):
        return [(m.member_id, m.group_instance_id) for m in request.members]
    return [(request.member_id, None)]


async def handle(ctx, request):
    leaving = _leaving(request)
    try:
        codes = coordinator(ctx).leave(request.group_id, leaving)
    except KafkaError as e:  # NOT_COORDINATOR and the like: the whole request failed
        return ctx.respond(error_code=e.code, members=())
    if ctx.api_version < 3:
        return ctx.respond(error_code=codes[0])
    members = tuple(ctx.make("MemberResponse", member_id=m, group_instance_id=i, error_code=code)
                    for (m, i), code in zip(leaving, codes))
    return ctx.respond(error_code=ErrorCode.none, members=members)
