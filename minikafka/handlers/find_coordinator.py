"""FindCoordinator: which broker coordinates a consumer group or a transactional id.

A group's coordinator is the leader of its partition of ``__consumer_offsets``
(``abs(hashCode(group)) % partitions``), a transactional id's the leader of its
``__transaction_state`` partition; both topics are created here on first need, as
Kafka does. v0 has no key type (always a group). From v4 one request may ask for
several keys of one type (KIP-699), each answered on its own.
"""

from __future__ import annotations

from typing import Any

from kio.schema.find_coordinator.v6.request import FindCoordinatorRequest

from ..errors import ErrorCode, KafkaError
from ..protocol import codec
from ..security.acl import Operation, ResourceType
from .ports import Caller, CoordinatorsPort, Response

API_KEY, BATCHED_SINCE = 10, 4
GROUP, TRANSACTION = 0, 1


def upgrade(decoded: Any, latest: type) -> Any:
    """v0-3 ask for one key; as the newest version, that is a list of one."""
    if type(decoded).__version__ >= BATCHED_SINCE:
        return codec.upgrade(decoded, latest)
    single = codec.upgrade(decoded, codec.request_class(API_KEY, BATCHED_SINCE - 1))
    return codec.make(latest, key_type=single.key_type, coordinator_keys=(single.key,))


def _authorize(caller: Caller, key: str, key_type: int) -> None:
    """DESCRIBE on the group or transactional id, as Kafka asks before it answers."""
    if key_type == TRANSACTION and not caller.allowed(Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key):
        raise KafkaError(ErrorCode.transactional_id_authorization_failed)
    if key_type == GROUP and not caller.allowed(Operation.DESCRIBE, ResourceType.GROUP, key):
        raise KafkaError(ErrorCode.group_authorization_failed)


class FindCoordinator:
    def __init__(self, coordinators: CoordinatorsPort) -> None:
        self.coordinators = coordinators

    async def handle(self, caller: Caller, request: FindCoordinatorRequest) -> Response:
        found = [(key, *self._find(caller, key, request.key_type)) for key in request.coordinator_keys]
        if caller.api_version < BATCHED_SINCE:
            _, node_id, host, port, code, message = found[0]
            return caller.respond(error_code=code, error_message=message, node_id=node_id, host=host, port=port)
        return caller.respond(coordinators=tuple(
            caller.make("Coordinator", key=key, node_id=node_id, host=host, port=port, error_code=code,
                        error_message=message) for key, node_id, host, port, code, message in found))

    def _leader(self, key: str, key_type: int) -> int:
        if key_type == GROUP:
            return self.coordinators.group_coordinator(key)
        if key_type == TRANSACTION:
            return self.coordinators.transaction_coordinator(key)
        raise KafkaError(ErrorCode.invalid_request, f"Unknown coordinator key type {key_type}.")

    def _find(self, caller: Caller, key: str, key_type: int) -> tuple[int, str, int, ErrorCode, str | None]:
        """(node id, host, port, error, message) of ``key``'s coordinator."""
        try:
            _authorize(caller, key, key_type)
            leader = self._leader(key, key_type)
            address = self.coordinators.listener_address(leader, caller.listener)
            if address is None:
                raise KafkaError(ErrorCode.coordinator_not_available,
                                 f"The coordinator of {key!r} (broker {leader}) is not available right now.")
        except KafkaError as e:
            return -1, "", -1, e.code, e.message
        return leader, address[0], address[1], ErrorCode.none, None
