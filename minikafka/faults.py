"""Faults a teacher or a test can inject into a running broker.

Modelled on librdkafka's mock cluster (``rd_kafka_mock_broker_set_rtt``,
``rd_kafka_mock_push_request_errors``): each fault is a documented method, used alike
by tests, labs and notebooks. All of them act on the request/response path of one
broker and leave its stored data alone.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable

from .errors import ErrorCode
from .protocol.apis import API_TABLE

_API_KEYS = {api.name: api.key for api in API_TABLE}


def _key(api: str | int) -> int:
    return api if isinstance(api, int) else _API_KEYS[api]


class DropConnection(Exception):
    """Raised on the request path to close a connection without answering."""


class Faults:
    def __init__(self, can_inject: Callable[[int], bool] = lambda api_key: True) -> None:
        self._can_inject = can_inject  # the dispatcher knows which answers can carry an error
        self.latency_ms = 0
        self._drops: dict[int, int] = defaultdict(int)
        self._errors: dict[int, deque[ErrorCode]] = defaultdict(deque)

    def set_latency(self, ms: int) -> None:
        """Delay every response of this broker by ``ms`` milliseconds (a slow network)."""
        self.latency_ms = max(0, int(ms))

    def drop_responses(self, api: str | int, count: int = 1) -> None:
        """Process the next ``count`` requests of ``api``, then drop the connection
        instead of answering, as a network failure would.

        With Produce this is the lost acknowledgement that makes a producer retry a
        batch the broker already wrote: the case idempotence exists for.
        """
        self._drops[_key(api)] += count

    def push_errors(self, api: str | int, *codes: ErrorCode) -> None:
        """Answer the next requests of ``api`` with these errors, one per request.

        The request is not processed: the answer carries only the error (in every
        partition or topic of it, for APIs that answer per partition).
        """
        key = _key(api)
        if not self._can_inject(key):
            raise ValueError(f"errors cannot be injected into {api} answers")
        self._errors[key].extend(codes)

    def take_drop(self, api_key: int) -> bool:
        if self._drops.get(api_key, 0) > 0:
            self._drops[api_key] -= 1
            return True
        return False

    def take_error(self, api_key: int) -> ErrorCode | None:
        queue = self._errors.get(api_key)
        return queue.popleft() if queue else None

    def clear(self) -> None:
        self.latency_ms = 0
        self._drops.clear()
        self._errors.clear()
