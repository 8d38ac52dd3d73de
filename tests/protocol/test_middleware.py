"""The chain every request passes before its handler (``minikafka.handlers.middleware``), without a socket."""

from __future__ import annotations

import asyncio

import pytest

from minikafka.errors import ErrorCode
from minikafka.faults import DropConnection, Faults
from minikafka.handlers import middleware
from minikafka.handlers.middleware import Call
from minikafka.handlers.ports import Caller
from tests.fake_authorizer import Acls

METADATA = 3


class NoTopics:
    def topic_name_of(self, topic_id: str) -> str | None:
        return None

    def topic_id_of(self, topic: str) -> str | None:
        return None


def call(api_key: int = METADATA, refused: ErrorCode | None = None, request: object = None) -> Call:
    """A request of a principal whom the ACLs allow nothing."""
    return Call(Caller(api_key, 0, authorizer=Acls()), request, refused)


def run(steps: list[middleware.Middleware], c: Call) -> tuple[object, list[str]]:
    seen: list[str] = []

    async def handler(c: Call) -> object:
        seen.append("handler")
        return "answer"

    return asyncio.run(middleware.chain(steps, handler)(c)), seen


def refuse(c: Call, code: ErrorCode) -> object:
    return ("refused", code)


def empty(c: Call, code: ErrorCode) -> object:
    return ("empty", code)


def test_a_plain_request_passes_every_step_to_its_handler():
    answer, seen = run(middleware.standard(Faults(), None, refuse, empty, NoTopics()), call())
    assert answer == "answer" and seen == ["handler"]


def test_a_request_before_sasl_authentication_gets_an_empty_answer_and_keeps_the_injected_error():
    faults = Faults()
    faults.push_errors(METADATA, ErrorCode.not_controller)
    steps = middleware.standard(faults, None, refuse, empty, NoTopics())
    answer, seen = run(steps, call(refused=ErrorCode.illegal_sasl_state))
    assert answer == ("empty", ErrorCode.illegal_sasl_state) and seen == []
    assert faults.take_error(METADATA) is ErrorCode.not_controller  # still there for the next real request


def test_an_injected_error_answers_before_the_acls_are_asked():
    faults = Faults()
    faults.push_errors(METADATA, ErrorCode.leader_not_available)
    steps = middleware.standard(faults, object(), refuse, empty, NoTopics())  # type: ignore[arg-type]
    assert [type(s).__name__ for s in steps] == ["FaultDelivery", "SaslGate", "InjectedErrors", "Authorization"]
    answer, seen = run(steps, call())
    assert answer == ("refused", ErrorCode.leader_not_available) and seen == []


def test_without_an_authorizer_there_is_no_acl_step():
    steps = middleware.standard(Faults(), None, refuse, empty, NoTopics())
    assert "Authorization" not in [type(s).__name__ for s in steps]


def test_a_denied_request_is_refused_by_the_acl_step():
    class JoinGroup:
        group_id = "payments"

    steps = middleware.standard(Faults(), object(), refuse, empty, NoTopics())  # type: ignore[arg-type]
    answer, seen = run(steps, call(api_key=11, request=JoinGroup()))
    assert answer == ("refused", ErrorCode.group_authorization_failed) and seen == []


def test_a_dropped_answer_closes_the_connection_even_when_the_request_was_refused():
    faults = Faults()
    faults.drop_responses(METADATA)
    with pytest.raises(DropConnection, match="dropped the Metadata response"):
        run(middleware.standard(faults, None, refuse, empty, NoTopics()), call(refused=ErrorCode.illegal_sasl_state))
