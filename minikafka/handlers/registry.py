"""The handlers of the broker's APIs, declared as typed objects: the port dispatch calls.

Each API of ``protocol.apis.API_TABLE`` has one row here, of one of two kinds while issue 27's
move off the service locator is under way:

- ``PortHandler`` (the new style): ``make`` is a handler class taking the broker's ports
  (``ports.Ports``, e.g. the ``TransactionsPort``); dispatch builds it once per broker and calls
  ``handle(caller, request)`` with a ``ports.Caller``, never the broker. Its hooks take the caller.
  Converted so far: the five transaction APIs (InitProducerId, AddPartitionsToTxn,
  AddOffsetsToTxn, EndTxn, TxnOffsetCommit) and the three config APIs (DescribeConfigs,
  AlterConfigs, IncrementalAlterConfigs).
- ``Handler`` (the old style, every other API): ``handle(ctx, request)`` with a
  ``context.RequestContext``, whose ``broker`` is the whole broker. An API moves from this kind
  to the other with its port; when none is left, ``Handler`` and ``RequestContext`` go.

Either kind has, where its module defines them, the optional hooks ``upgrade`` (how a request
whose shape changed between versions is lifted to the newest version's class; ``codec.upgrade``
otherwise) and ``error_response`` (the answer carrying one error code, for the fault API and
refused requests; an empty answer with a top-level error code otherwise). The table names them
as attributes of imported modules, so mypy checks their signatures and a missing name fails
at import. ``check`` (run at import) refuses a table that misses an API of API_TABLE, a hook
a module defines that its row leaves out, a public function whose name is a near miss
of a hook's (``error_respons``: such a hook used to be ignored without a word), and a
``handle`` whose request annotation is not the kio class dispatch gives it.
"""

from __future__ import annotations

import difflib
import inspect
import types
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, fields
from types import ModuleType
from typing import Any, Protocol

from ..errors import ErrorCode
from ..protocol import codec
from ..protocol.apis import API_TABLE
from . import (
    add_offsets_to_txn,
    add_partitions_to_txn,
    alter_configs,
    alter_partition_reassignments,
    alter_replica_log_dirs,
    alter_user_scram_credentials,
    api_versions,
    consumer_group_describe,
    consumer_group_heartbeat,
    create_acls,
    create_partitions,
    create_topics,
    delete_acls,
    delete_groups,
    delete_records,
    offset_for_leader_epoch,
    delete_topics,
    describe_acls,
    describe_cluster,
    list_config_resources,
    describe_configs,
    describe_groups,
    describe_log_dirs,
    describe_quorum,
    describe_share_group_offsets,
    describe_topic_partitions,
    describe_transactions,
    describe_user_scram_credentials,
    elect_leaders,
    end_txn,
    fetch,
    find_coordinator,
    heartbeat,
    incremental_alter_configs,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    list_partition_reassignments,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    produce,
    sasl_authenticate,
    sasl_handshake,
    share_acknowledge,
    share_fetch,
    share_group_describe,
    share_group_heartbeat,
    sync_group,
    txn_offset_commit,
)
from .context import RequestContext
from .ports import Caller, Ports

Handle = Callable[[RequestContext, Any], Awaitable[Any]]  # the answer (a kio response), or None for none
Upgrade = Callable[[Any, type], Any]  # (the decoded request of any version, the newest request class)
ErrorResponse = Callable[[RequestContext, Any, ErrorCode], Any]  # (ctx, the upgraded request, the error)

CallerErrorResponse = Callable[[Caller, Any, ErrorCode], Any]  # (caller, the upgraded request, the error)

HOOKS = ("upgrade", "error_response")


class RegistrationError(TypeError):
    """The handler table and a handler module disagree (a misspelt or forgotten hook)."""


@dataclass(frozen=True, slots=True)
class Handler:
    handle: Handle
    upgrade: Upgrade | None = None
    error_response: ErrorResponse | None = None


class Served(Protocol):
    """A handler object of the new style: it holds its ports and sees only the caller and the request."""

    async def handle(self, caller: Caller, request: Any) -> Any: ...


@dataclass(frozen=True, slots=True)
class PortHandler:
    """An API whose handler sees only its ports: ``make(ports)`` builds it once per broker."""

    make: Callable[[Ports], Served]
    upgrade: Upgrade | None = None
    error_response: CallerErrorResponse | None = None


Row = Handler | PortHandler


def handle_of(row: Row) -> Callable[..., Any]:
    """A row's ``handle``: the function, or the handler class's (unbound), whose annotations ``check`` reads."""
    if isinstance(row, Handler):
        return row.handle
    handle: Callable[..., Any] = getattr(row.make, "handle")  # noqa: B009 (``make`` is typed as a callable)
    return handle

HANDLERS: dict[int, Row] = {
    0: Handler(produce.handle, upgrade=produce.upgrade, error_response=produce.error_response),
    1: Handler(fetch.handle, upgrade=fetch.upgrade, error_response=fetch.error_response),
    2: Handler(list_offsets.handle, error_response=list_offsets.error_response),
    3: Handler(metadata.handle, error_response=metadata.error_response),
    8: Handler(offset_commit.handle, upgrade=offset_commit.upgrade, error_response=offset_commit.error_response),
    9: Handler(offset_fetch.handle, upgrade=offset_fetch.upgrade, error_response=offset_fetch.error_response),
    10: Handler(find_coordinator.handle, upgrade=find_coordinator.upgrade),
    11: Handler(join_group.handle),
    12: Handler(heartbeat.handle),
    13: Handler(leave_group.handle, upgrade=leave_group.upgrade),
    14: Handler(sync_group.handle),
    15: Handler(describe_groups.handle),
    16: Handler(list_groups.handle),
    17: Handler(sasl_handshake.handle),
    18: Handler(api_versions.handle),
    19: Handler(create_topics.handle),
    20: Handler(delete_topics.handle, upgrade=delete_topics.upgrade),
    21: Handler(delete_records.handle),
    23: Handler(offset_for_leader_epoch.handle),
    22: PortHandler(init_producer_id.InitProducerId),
    24: PortHandler(add_partitions_to_txn.AddPartitionsToTxn, upgrade=add_partitions_to_txn.upgrade,
                    error_response=add_partitions_to_txn.error_response),
    25: PortHandler(add_offsets_to_txn.AddOffsetsToTxn),
    26: PortHandler(end_txn.EndTxn),
    28: PortHandler(txn_offset_commit.TxnOffsetCommit, error_response=txn_offset_commit.error_response),
    29: Handler(describe_acls.handle),
    30: Handler(create_acls.handle),
    31: Handler(delete_acls.handle),
    32: PortHandler(describe_configs.DescribeConfigs),
    33: PortHandler(alter_configs.AlterConfigs),
    34: Handler(alter_replica_log_dirs.handle),
    35: Handler(describe_log_dirs.handle),
    36: Handler(sasl_authenticate.handle),
    37: Handler(create_partitions.handle),
    42: Handler(delete_groups.handle),
    43: Handler(elect_leaders.handle),
    44: PortHandler(incremental_alter_configs.IncrementalAlterConfigs),
    45: Handler(alter_partition_reassignments.handle),
    46: Handler(list_partition_reassignments.handle),
    47: Handler(offset_delete.handle),
    50: Handler(describe_user_scram_credentials.handle),
    51: Handler(alter_user_scram_credentials.handle),
    55: Handler(describe_quorum.handle),
    60: Handler(describe_cluster.handle),
    65: Handler(describe_transactions.handle),
    68: Handler(consumer_group_heartbeat.handle, error_response=consumer_group_heartbeat.error_response),
    69: Handler(consumer_group_describe.handle, error_response=consumer_group_describe.error_response),
    74: Handler(list_config_resources.handle),
    75: Handler(describe_topic_partitions.handle),
    76: Handler(share_group_heartbeat.handle),
    77: Handler(share_group_describe.handle),
    78: Handler(share_fetch.handle),
    79: Handler(share_acknowledge.handle),
    90: Handler(describe_share_group_offsets.handle),
}


def check(handlers: Mapping[int, Row], api_keys: set[int]) -> None:
    """RegistrationError unless every API has a handler and every handler's module agrees with its row."""
    if set(handlers) != api_keys:
        raise RegistrationError(f"handlers for API keys {sorted(set(handlers) ^ api_keys)} do not match the API table")
    for key, handler in handlers.items():
        module = inspect.getmodule(handle_of(handler))
        if module is None:
            raise RegistrationError(f"the handler of API key {key} has no module")
        check_module(module, handler)
        check_request_type(key, handler)


def check_request_type(api_key: int, handler: Row) -> None:
    """RegistrationError unless ``handle``'s request annotation names the class dispatch lifts a
    request to: the newest version's (a handler with an ``upgrade`` hook may name others in a union).
    An annotation left behind when the API table's newest version moves fails here, not in a client."""
    hint = typing.get_type_hints(handle_of(handler)).get("request")
    named = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    latest = codec.latest_request_class(api_key)
    if latest not in named:
        raise RegistrationError(f"{handle_of(handler).__module__}.handle reads {hint}, but dispatch gives it "
                                f"{latest.__module__}.{latest.__name__}")


def check_module(module: ModuleType, handler: Row) -> None:
    """RegistrationError when ``module`` defines a hook ``handler`` leaves out, or a near miss of a hook's name."""
    name = module.__name__
    if not inspect.iscoroutinefunction(handle_of(handler)):
        raise RegistrationError(f"{name}.handle must be an async function")
    for hook in HOOKS:
        if callable(getattr(module, hook, None)) and getattr(handler, hook) is None:
            raise RegistrationError(f"{name} defines {hook} but its handler leaves it out")
    known = {"handle", *HOOKS}
    for attr, value in vars(module).items():
        if attr.startswith("_") or attr in known or not callable(value) or isinstance(value, type):
            continue
        near = difflib.get_close_matches(attr, known, n=1, cutoff=0.8)
        if near:
            raise RegistrationError(f"{name}.{attr} looks like a misspelt {near[0]}: rename it or make it private")
    for field in fields(handler):
        if field.name == "make":  # a class, checked by mypy (it must take the ports) and by check_request_type
            continue
        hook = getattr(handler, field.name)
        if hook is not None and getattr(module, field.name, None) is not hook:
            raise RegistrationError(f"the handler of {name} does not use {name}.{field.name}")


check(HANDLERS, {api.key for api in API_TABLE})
