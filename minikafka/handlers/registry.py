"""The handlers of the broker's APIs, declared as typed objects: the port dispatch calls.

Each API of ``protocol.apis.API_TABLE`` has one row here, a ``PortHandler``: ``make`` is a
handler class taking the broker's ports (``ports.Ports``, e.g. the ``TransactionsPort``);
dispatch builds it once per broker and calls ``handle(caller, request)`` with a
``ports.Caller``, never the broker (issue 27 moved every API off ``RequestContext.broker``,
the whole broker, onto these).

A row has, where its module defines them, the optional hooks ``upgrade`` (how a request
whose shape changed between versions is lifted to the newest version's class; ``codec.upgrade``
otherwise) and ``error_response`` (the answer carrying one error code, for the fault API and
refused requests; an empty answer with a top-level error code otherwise). A handler
whose error answer needs its ports (Metadata's lists the brokers and the topics) defines it as
an ``error_response`` method of its class instead (``AnswersErrors``). The table names the hooks
as attributes of imported modules, so mypy checks their signatures and a missing name fails
at import. ``check`` (run at import) refuses a table that misses an API of API_TABLE, a hook
a module defines that its row leaves out, a public function or handler method whose name is a
near miss of a hook's (``error_respons``: such a hook used to be ignored without a word), and a
``handle`` whose request annotation is not the kio class dispatch gives it.
"""

from __future__ import annotations

import difflib
import inspect
import types
import typing
from collections.abc import Callable, Mapping
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
    metadata_api,
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
    write_txn_markers,
)
from .ports import Caller, Ports

Upgrade = Callable[[Any, type], Any]  # (the decoded request of any version, the newest request class)
CallerErrorResponse = Callable[[Caller, Any, ErrorCode], Any]  # (caller, the upgraded request, the error)

HOOKS = ("upgrade", "error_response")


class RegistrationError(TypeError):
    """The handler table and a handler module disagree (a misspelt or forgotten hook)."""


class Served(Protocol):
    """A handler object of the new style: it holds its ports and sees only the caller and the request."""

    async def handle(self, caller: Caller, request: Any) -> Any: ...


@typing.runtime_checkable
class AnswersErrors(Protocol):
    """A handler object whose error answer needs its ports (Metadata's lists the brokers and topics):
    its ``error_response`` method is the hook, where a row's module function cannot reach the broker."""

    def error_response(self, caller: Caller, request: Any, code: ErrorCode) -> Any: ...


@dataclass(frozen=True, slots=True)
class PortHandler:
    """An API whose handler sees only its ports: ``make(ports)`` builds it once per broker."""

    make: Callable[[Ports], Served]
    upgrade: Upgrade | None = None
    error_response: CallerErrorResponse | None = None


Row = PortHandler


def has_error_response(row: Row) -> bool:
    """Whether the API declares its answer carrying one error: a hook of its row, or a handler class's method."""
    return row.error_response is not None or callable(getattr(row.make, "error_response", None))


def handle_of(row: Row) -> Callable[..., Any]:
    """A row's handler class's ``handle`` (unbound), whose annotations ``check`` reads."""
    handle: Callable[..., Any] = getattr(row.make, "handle")  # noqa: B009 (``make`` is typed as a callable)
    return handle

HANDLERS: dict[int, Row] = {
    0: PortHandler(produce.Produce, upgrade=produce.upgrade, error_response=produce.error_response),
    1: PortHandler(fetch.Fetch, upgrade=fetch.upgrade),
    2: PortHandler(list_offsets.ListOffsets, error_response=list_offsets.error_response),
    3: PortHandler(metadata_api.Metadata),
    8: PortHandler(offset_commit.OffsetCommit, upgrade=offset_commit.upgrade,
                   error_response=offset_commit.error_response),
    9: PortHandler(offset_fetch.OffsetFetch, upgrade=offset_fetch.upgrade, error_response=offset_fetch.error_response),
    10: PortHandler(find_coordinator.FindCoordinator, upgrade=find_coordinator.upgrade),
    11: PortHandler(join_group.JoinGroup),
    12: PortHandler(heartbeat.Heartbeat),
    13: PortHandler(leave_group.LeaveGroup, upgrade=leave_group.upgrade),
    14: PortHandler(sync_group.SyncGroup),
    15: PortHandler(describe_groups.DescribeGroups),
    16: PortHandler(list_groups.ListGroups),
    17: PortHandler(sasl_handshake.SaslHandshake),
    18: PortHandler(api_versions.ApiVersions),
    19: PortHandler(create_topics.CreateTopics, error_response=create_topics.error_response),
    20: PortHandler(delete_topics.DeleteTopics, upgrade=delete_topics.upgrade,
                    error_response=delete_topics.error_response),
    21: PortHandler(delete_records.DeleteRecords),
    22: PortHandler(init_producer_id.InitProducerId),
    23: PortHandler(offset_for_leader_epoch.OffsetForLeaderEpoch),
    24: PortHandler(add_partitions_to_txn.AddPartitionsToTxn, upgrade=add_partitions_to_txn.upgrade,
                    error_response=add_partitions_to_txn.error_response),
    25: PortHandler(add_offsets_to_txn.AddOffsetsToTxn),
    26: PortHandler(end_txn.EndTxn),
    27: PortHandler(write_txn_markers.WriteTxnMarkers, error_response=write_txn_markers.error_response),
    28: PortHandler(txn_offset_commit.TxnOffsetCommit, error_response=txn_offset_commit.error_response),
    29: PortHandler(describe_acls.DescribeAcls),
    30: PortHandler(create_acls.CreateAcls, error_response=create_acls.error_response),
    31: PortHandler(delete_acls.DeleteAcls, error_response=delete_acls.error_response),
    32: PortHandler(describe_configs.DescribeConfigs),
    33: PortHandler(alter_configs.AlterConfigs, error_response=alter_configs.error_response),
    34: PortHandler(alter_replica_log_dirs.AlterReplicaLogDirs),
    35: PortHandler(describe_log_dirs.DescribeLogDirs),
    36: PortHandler(sasl_authenticate.SaslAuthenticate),
    37: PortHandler(create_partitions.CreatePartitions, error_response=create_partitions.error_response),
    42: PortHandler(delete_groups.DeleteGroups),
    43: PortHandler(elect_leaders.ElectLeaders, error_response=elect_leaders.error_response),
    44: PortHandler(incremental_alter_configs.IncrementalAlterConfigs,
                    error_response=incremental_alter_configs.error_response),
    45: PortHandler(alter_partition_reassignments.AlterPartitionReassignments),
    46: PortHandler(list_partition_reassignments.ListPartitionReassignments),
    47: PortHandler(offset_delete.OffsetDelete),
    50: PortHandler(describe_user_scram_credentials.DescribeUserScramCredentials),
    51: PortHandler(alter_user_scram_credentials.AlterUserScramCredentials,
                    error_response=alter_user_scram_credentials.error_response),
    55: PortHandler(describe_quorum.DescribeQuorum),
    60: PortHandler(describe_cluster.DescribeCluster),
    65: PortHandler(describe_transactions.DescribeTransactions),
    68: PortHandler(consumer_group_heartbeat.ConsumerGroupHeartbeat,
                    error_response=consumer_group_heartbeat.error_response),
    69: PortHandler(consumer_group_describe.ConsumerGroupDescribe,
                    error_response=consumer_group_describe.error_response),
    74: PortHandler(list_config_resources.ListConfigResources),
    75: PortHandler(describe_topic_partitions.DescribeTopicPartitions),
    76: PortHandler(share_group_heartbeat.ShareGroupHeartbeat),
    77: PortHandler(share_group_describe.ShareGroupDescribe),
    78: PortHandler(share_fetch.ShareFetch),
    79: PortHandler(share_acknowledge.ShareAcknowledge),
    90: PortHandler(describe_share_group_offsets.DescribeShareGroupOffsets),
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
    if isinstance(handler.make, type):
        for attr in vars(handler.make):
            near = difflib.get_close_matches(attr, HOOKS, n=1, cutoff=0.8)
            if near and attr != near[0]:
                raise RegistrationError(f"{name}.{handler.make.__name__}.{attr} looks like a misspelt {near[0]}")
            if attr == "error_response" and handler.error_response is not None:
                raise RegistrationError(f"{name} has both an error_response hook and a method of that name")
    for field in fields(handler):
        if field.name == "make":  # a class, checked by mypy (it must take the ports) and by check_request_type
            continue
        hook = getattr(handler, field.name)
        if hook is not None and getattr(module, field.name, None) is not hook:
            raise RegistrationError(f"the handler of {name} does not use {name}.{field.name}")


check(HANDLERS, {api.key for api in API_TABLE})
