"""DescribeUserScramCredentials (KIP-554): which SCRAM mechanisms each user has, and
with how many iterations (never the salt or the keys).

No user list (or an empty one) means every user with a credential. A user asked for
twice is DUPLICATE_RESOURCE, one without credentials RESOURCE_NOT_FOUND, with Kafka's
sentences. Needs DESCRIBE on the cluster when an authorizer is configured.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from kio.schema.describe_user_scram_credentials.v0.request import DescribeUserScramCredentialsRequest

from ..errors import ErrorCode
from ..security.acl import Operation
from ..security.scram import MECHANISMS, ScramCredential
from .ports import Caller, Response, ScramPort


def _result(caller: Caller, user: str, infos: Iterable[Any], code: ErrorCode = ErrorCode.none,
            message: str | None = None) -> Any:
    return caller.make("DescribeUserScramCredentialsResult", user=user, error_code=code, error_message=message,
                       credential_infos=tuple(infos))


def _describe(caller: Caller, user: str, duplicated: bool,
              credentials: dict[tuple[str, str], ScramCredential]) -> Any:
    if duplicated:
        return _result(caller, user, (), ErrorCode.duplicate_resource,
                       f"Cannot describe SCRAM credentials for the same user twice in a single request: {user}")
    infos = [caller.make("CredentialInfo", mechanism=MECHANISMS[m].code, iterations=c.iterations)
             for (u, m), c in sorted(credentials.items()) if u == user]
    if not infos:
        return _result(caller, user, (), ErrorCode.resource_not_found,
                       f"Attempt to describe a user credential that does not exist: {user}")
    return _result(caller, user, infos)


class DescribeUserScramCredentials:
    def __init__(self, scram: ScramPort) -> None:
        self.scram = scram

    async def handle(self, caller: Caller, request: DescribeUserScramCredentialsRequest) -> Response:
        if not caller.allowed_cluster(Operation.DESCRIBE):
            return caller.respond(error_code=ErrorCode.cluster_authorization_failed,
                                  error_message="Not authorized to describe SCRAM credentials.", results=())
        credentials = self.scram.scram_credentials()
        asked = [u.name for u in request.users or ()]
        counts = Counter(asked) if asked else Counter(sorted({u for u, _ in credentials}))
        results = tuple(_describe(caller, user, n > 1, credentials) for user, n in counts.items())
        return caller.respond(error_code=ErrorCode.none, error_message=None, results=results)
