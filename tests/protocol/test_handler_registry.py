"""Handlers are declared as typed objects, and a handler module that misspells a hook fails
at registration (it used to be ignored: dispatch looked hooks up with getattr and a default)."""

from __future__ import annotations

import ast
import collections
import importlib
import inspect
import pkgutil
import types

import pytest
from kio.schema.heartbeat.v3.request import HeartbeatRequest as HeartbeatV3

from minikafka.errors import ErrorCode
from minikafka import handlers
from minikafka.handlers import registry
from minikafka.handlers.registry import PortHandler, RegistrationError, check, check_module, check_request_type
from minikafka.protocol.apis import API_TABLE


class Fake:
    """A handler class as a registry row's ``make``: built with its ports, answering a caller."""

    def __init__(self, ports: object) -> None:
        self.ports = ports

    async def handle(self, caller, request):
        return None


def fake_module(**functions) -> types.ModuleType:
    module = types.ModuleType("minikafka.handlers.fake")
    module.Fake = Fake
    for name, function in functions.items():
        setattr(module, name, function)
    return module


def error_response(caller, request, code: ErrorCode):
    return None


def test_every_api_of_the_table_has_a_handler_whose_hooks_are_its_modules():
    assert set(registry.HANDLERS) == {api.key for api in API_TABLE}
    check(registry.HANDLERS, {api.key for api in API_TABLE})  # what importing the registry ran
    fetch = registry.HANDLERS[1]
    assert fetch.upgrade is not None and registry.has_error_response(fetch)  # Fetch's: a method (its ports)
    assert registry.HANDLERS[12].upgrade is None  # Heartbeat: codec.upgrade does


def test_every_api_has_exactly_one_row_and_every_handler_module_one_api():
    """A key written twice in the table's literal would keep only its last row without a word
    (a dict), and a handler module left out of the table would never be called."""
    tree = ast.parse(inspect.getsource(registry))
    [table] = [node.value for node in tree.body if isinstance(node, ast.AnnAssign)
               and isinstance(node.target, ast.Name) and node.target.id == "HANDLERS"]
    assert isinstance(table, ast.Dict)
    rows = collections.Counter(ast.literal_eval(key) for key in table.keys if key is not None)
    assert rows == collections.Counter(api.key for api in API_TABLE)  # each API key once, no other key
    modules = collections.Counter(registry.handle_of(row).__module__ for row in registry.HANDLERS.values())
    assert [name for name, count in modules.items() if count > 1] == []
    with_handle = {f"{handlers.__name__}.{info.name}" for info in pkgutil.iter_modules(handlers.__path__)
                   if _defines_handle(importlib.import_module(f"{handlers.__name__}.{info.name}"))}
    assert with_handle == set(modules)


def _defines_handle(module: types.ModuleType) -> bool:
    """A class of its own with a ``handle`` (a ``PortHandler``'s make)."""
    return any(isinstance(v, type) and v.__module__ == module.__name__ and callable(getattr(v, "handle", None))
               and not getattr(v, "_is_protocol", False) for v in vars(module).values())


def test_a_misspelt_hook_fails_registration():
    module = fake_module(error_respons=error_response)
    with pytest.raises(RegistrationError, match=r"fake\.error_respons looks like a misspelt error_response"):
        check_module(module, PortHandler(Fake))
    module = fake_module(upgrdae=lambda decoded, latest: decoded)
    with pytest.raises(RegistrationError, match="misspelt upgrade"):
        check_module(module, PortHandler(Fake))


def test_a_hook_its_row_leaves_out_fails_registration():
    module = fake_module(error_response=error_response)
    with pytest.raises(RegistrationError, match="defines error_response but its handler leaves it out"):
        check_module(module, PortHandler(Fake))
    check_module(module, PortHandler(Fake, error_response=module.error_response))


def test_a_table_missing_an_api_fails_registration():
    partial = {k: v for k, v in registry.HANDLERS.items() if k != 3}
    with pytest.raises(RegistrationError, match=r"\[3\]"):
        check(partial, {api.key for api in API_TABLE})


def test_a_synchronous_handle_fails_registration():
    class Blocking(Fake):
        def handle(self, caller, request):  # type: ignore[override]
            return None

    with pytest.raises(RegistrationError, match="async"):
        check_module(fake_module(), PortHandler(Blocking))


class OldHeartbeat(Fake):
    async def handle(self, caller, request: HeartbeatV3) -> None:
        return None


def test_a_handle_annotated_with_another_class_than_dispatch_gives_fails_registration():
    with pytest.raises(RegistrationError, match=r"heartbeat\.v4\.request\.HeartbeatRequest"):
        check_request_type(12, PortHandler(OldHeartbeat))
    check_request_type(12, registry.HANDLERS[12])
    check_request_type(1, registry.HANDLERS[1])  # Fetch: a union, v13+ by id and older by name


def test_a_port_handler_row_is_checked_like_a_handler_row():
    """A converted API's row (a handler class built with its ports) meets the same checks."""
    from minikafka.handlers import txn_offset_commit

    check_request_type(26, registry.HANDLERS[26])  # EndTxn.handle reads the newest EndTxnRequest
    with pytest.raises(RegistrationError, match="defines error_response but its handler leaves it out"):
        check_module(txn_offset_commit, registry.PortHandler(txn_offset_commit.TxnOffsetCommit))
    check_module(txn_offset_commit, registry.HANDLERS[28])


def test_a_port_handler_class_may_answer_errors_itself_but_not_twice_or_misspelt():
    """Metadata's error answer needs its ports: the hook is a method of its class (``AnswersErrors``),
    which dispatch and the fault API use; a near miss of the name or a second hook in the row fails."""
    from minikafka.handlers import metadata_api
    from minikafka.handlers.dispatch import can_inject_error

    assert registry.has_error_response(registry.HANDLERS[3]) and can_inject_error(3)
    assert not registry.has_error_response(registry.HANDLERS[26])

    class Misspelt(metadata_api.Metadata):
        def error_respons(self, caller, request, code):
            return None

    with pytest.raises(RegistrationError, match=r"Misspelt\.error_respons looks like a misspelt error_response"):
        check_module(metadata_api, registry.PortHandler(Misspelt))
    with pytest.raises(RegistrationError, match="both an error_response hook and a method"):
        check_module(metadata_api, registry.PortHandler(metadata_api.Metadata, error_response=error_response))
