"""AlterUserScramCredentials (KIP-554): add, replace or delete a user's SCRAM credential.

The admin client sends the salt, the iteration count and the salted password
(``PBKDF2(password, salt, iterations)``), never the password; the broker keeps only the
salt and the two keys derived from it (``security.scram``), in the cluster metadata,
so they survive a restart. Kafka's controller rules and sentences: iterations between
4096 and 16384 (UNACCEPTABLE_CREDENTIAL), a known mechanism (UNSUPPORTED_SASL_MECHANISM),
a non-empty user name, one change per user per request (DUPLICATE_RESOURCE), and no
deleting what does not exist (RESOURCE_NOT_FOUND). Needs ALTER on the cluster.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kio.schema.alter_user_scram_credentials.v0.request import (
    AlterUserScramCredentialsRequest,
    ScramCredentialDeletion,
    ScramCredentialUpsertion,
)

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation
from ..security.scram import BY_CODE, MAX_ITERATIONS, MIN_ITERATIONS, ScramMechanism
from .ports import Caller, Response, ScramPort

Change = ScramCredentialDeletion | ScramCredentialUpsertion
TWICE = "A user credential cannot be altered twice in the same request"


def _mechanism(user: str, code: int) -> ScramMechanism:
    if not user:
        raise KafkaError(ErrorCode.unacceptable_credential, "Username must not be empty")
    if code not in BY_CODE:
        raise KafkaError(ErrorCode.unsupported_sasl_mechanism, "Unknown SCRAM mechanism")
    return BY_CODE[code]


def _check_upsertion(u: ScramCredentialUpsertion) -> None:
    _mechanism(u.name, u.mechanism)
    if u.iterations < MIN_ITERATIONS:
        raise KafkaError(ErrorCode.unacceptable_credential, "Too few iterations")
    if u.iterations > MAX_ITERATIONS:
        raise KafkaError(ErrorCode.unacceptable_credential, "Too many iterations")
    if not u.salt or not u.salted_password:
        raise KafkaError(ErrorCode.unacceptable_credential, "Salt and salted password must not be empty")


def _result(caller: Caller, user: str, code: ErrorCode = ErrorCode.none, message: str | None = None) -> Any:
    return caller.make("AlterUserScramCredentialsResult", user=user, error_code=code, error_message=message)


def error_response(caller: Caller, request: AlterUserScramCredentialsRequest, code: ErrorCode) -> Response:
    """Every user's change refused with ``code`` (the fault API, or an unforwarded request)."""
    users = [d.name for d in request.deletions] + [u.name for u in request.upsertions]
    return caller.respond(results=tuple(caller.make("AlterUserScramCredentialsResult", user=user, error_code=code,
                                                    error_message=code.name) for user in users))


class AlterUserScramCredentials:
    def __init__(self, scram: ScramPort) -> None:
        self.scram = scram

    async def handle(self, caller: Caller, request: AlterUserScramCredentialsRequest) -> Response:
        users = list(dict.fromkeys([d.name for d in request.deletions] + [u.name for u in request.upsertions]))
        if not caller.allowed_cluster(Operation.ALTER):
            return caller.respond(results=tuple(_result(caller, u, ErrorCode.cluster_authorization_failed,
                                                        "Not authorized to alter SCRAM credentials.") for u in users))
        changes, errors = self._plan(request)
        for change in changes.values():
            self._apply(change)
        return caller.respond(results=tuple(_result(caller, u) if u in changes else
                                            _result(caller, u, errors[u].code, errors[u].message) for u in users))

    def _check_deletion(self, d: ScramCredentialDeletion) -> None:
        mechanism = _mechanism(d.name, d.mechanism)
        if self.scram.scram_credential(d.name, mechanism.name) is None:
            raise KafkaError(ErrorCode.resource_not_found, "Attempt to delete a user credential that does not exist")

    def _plan(self, request: AlterUserScramCredentialsRequest) -> tuple[dict[str, Change], dict[str, KafkaError]]:
        """(user -> accepted change, user -> KafkaError); a user named twice fails as a whole."""
        changes: dict[str, Change] = {}
        errors: dict[str, KafkaError] = {}
        checks: list[tuple[Change, Callable[[Any], None]]] = [
            *((d, self._check_deletion) for d in request.deletions),
            *((u, _check_upsertion) for u in request.upsertions)]
        for change, check in checks:
            if change.name in errors:
                continue
            if changes.pop(change.name, None) is not None:
                errors[change.name] = KafkaError(ErrorCode.duplicate_resource, TWICE)
                continue
            try:
                check(change)
                changes[change.name] = change
            except KafkaError as e:
                errors[change.name] = e
        return changes, errors

    def _apply(self, change: Change) -> None:
        mechanism = BY_CODE[change.mechanism]
        if isinstance(change, ScramCredentialUpsertion):
            credential = mechanism.credential(bytes(change.salted_password), bytes(change.salt), change.iterations)
            self.scram.set_scram_credential(change.name, mechanism.name, credential)
        else:
            self.scram.remove_scram_credential(change.name, mechanism.name)
