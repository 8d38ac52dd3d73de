"""What happens to every request between decoding and its handler: a chain of small steps.

Kafka's KafkaApis checks a request before the API's own code runs; minikafka declares
those checks once, as a chain the dispatcher runs for every API, outermost first:

1. ``FaultDelivery``: the broker's injected latency and dropped answers (``minikafka.faults``),
   applied to whatever answer comes back, refused ones included;
2. ``SaslGate``: on a SASL listener, a request before authentication is answered with
   ILLEGAL_SASL_STATE and nothing else (the verdict was taken from the frame's header, before
   decoding: ``dispatch._sasl_verdict``);
3. ``InjectedErrors``: an error the course injected into this API's next answer;
4. ``Authorization``: the request-wide ACL checks of ``_authorize`` (per-topic and per-group
   checks stay in the handlers, where the answer is built item by item).

Each step either answers (with the API's error answer: ``Refuse``) or hands the call on to the
next. The last link is the handler itself. A step sees the ``Call``: the decoded request and
its ``Caller``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..errors import ErrorCode
from ..faults import DropConnection, Faults
from ..protocol.apis import BY_KEY
from ..security.authorizer import Authorizer
from . import _authorize
from .ports import Caller, TopicIdsPort


@dataclass(frozen=True, slots=True)
class Call:
    """One decoded request on its way to its handler."""

    caller: Caller
    request: object
    refused: ErrorCode | None = None  # the SASL gate's verdict, taken before decoding


Next = Callable[[Call], Awaitable[object]]
Refuse = Callable[[Call, ErrorCode], object]  # the API's answer carrying one error code


class Middleware(Protocol):
    async def __call__(self, call: Call, next_step: Next) -> object: ...


@dataclass(frozen=True, slots=True)
class FaultDelivery:
    """Injected latency before every answer, and an answer dropped with its connection."""

    faults: Faults

    async def __call__(self, call: Call, next_step: Next) -> object:
        response = await next_step(call)
        if self.faults.latency_ms:
            await asyncio.sleep(self.faults.latency_ms / 1000)
        if self.faults.take_drop(call.caller.api_key):
            raise DropConnection(f"fault injection: dropped the {BY_KEY[call.caller.api_key].name} response")
        return response


@dataclass(frozen=True, slots=True)
class SaslGate:
    """Nothing before authentication on a SASL listener: an empty answer, not even topic names."""

    empty_answer: Refuse

    async def __call__(self, call: Call, next_step: Next) -> object:
        if call.refused is not None:
            return self.empty_answer(call, call.refused)
        return await next_step(call)


@dataclass(frozen=True, slots=True)
class InjectedErrors:
    """The error the course injected into this API's next answer (``Cluster.inject_error``)."""

    faults: Faults
    refuse: Refuse

    async def __call__(self, call: Call, next_step: Next) -> object:
        injected = self.faults.take_error(call.caller.api_key)
        if injected is not None:
            return self.refuse(call, injected)
        return await next_step(call)


@dataclass(frozen=True, slots=True)
class Authorization:
    """Kafka's request-wide ACL checks (``_authorize``): a denied request gets its error everywhere.
    ``topics`` names the topics a request gives by id (ShareFetch, ShareAcknowledge)."""

    refuse: Refuse
    topics: TopicIdsPort

    async def __call__(self, call: Call, next_step: Next) -> object:
        denied = _authorize.refusal(call.caller, call.request, self.topics)
        if denied is not None:
            return self.refuse(call, denied)
        return await next_step(call)


def chain(steps: Sequence[Middleware], handler: Next) -> Next:
    """The steps around the handler, the first outermost."""
    answer = handler
    for step in reversed(steps):
        answer = _link(step, answer)
    return answer


def _link(step: Middleware, inner: Next) -> Next:
    async def run(call: Call) -> object:
        return await step(call, inner)
    return run


def standard(faults: Faults, authorizer: Authorizer | None, refuse: Refuse, empty_answer: Refuse,
             topics: TopicIdsPort) -> list[Middleware]:
    """The broker's chain: faults, the SASL gate, injected errors and, with an authorizer, the ACLs."""
    steps: list[Middleware] = [FaultDelivery(faults), SaslGate(empty_answer), InjectedErrors(faults, refuse)]
    if authorizer is not None:
        steps.append(Authorization(refuse, topics))
    return steps
