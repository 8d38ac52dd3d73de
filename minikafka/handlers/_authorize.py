"""Request-wide ACL checks, declared once: the API, the resource it acts for, the verdict.

Kafka's KafkaApis checks some requests as a whole before looking inside: a group's
members must READ the group, a transactional producer must WRITE its transactional id,
an idempotent producer needs IDEMPOTENT_WRITE on the cluster (or WRITE on some topic,
KIP-679). Those rules are this table; the dispatcher asks ``refusal`` before the handler
and answers a denied request with the error in every place the response has one.
Checks per topic or per group inside a request (Produce, Fetch, Metadata, DescribeGroups,
CreateTopics...) are in the handlers, where the answer is built item by item
(``CHECKED_IN_HANDLER``); a few APIs need no permission (``NOT_CHECKED``). Every API of
the table is in one of the three: a test fails for a new API that is in none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ErrorCode
from ..security.acl import CLUSTER_NAME
from ..security.acl import Operation as Op
from ..security.acl import ResourceType as Res
from .ports import Caller, TopicIdsPort

Rule = Callable[[Caller, Any, TopicIdsPort], "ErrorCode | None"]  # (caller, request, the topics by id)

GROUP_DENIED, TXN_DENIED = ErrorCode.group_authorization_failed, ErrorCode.transactional_id_authorization_failed


def _group(op: Op) -> Rule:
    return lambda caller, request, topics: None if caller.allowed(op, Res.GROUP, request.group_id) else GROUP_DENIED


def _init_producer_id(caller: Caller, request: Any, topics: TopicIdsPort) -> ErrorCode | None:
    if request.transactional_id is not None:
        return None if caller.allowed(Op.WRITE, Res.TRANSACTIONAL_ID, request.transactional_id) else TXN_DENIED
    if caller.allowed(Op.IDEMPOTENT_WRITE, Res.CLUSTER, CLUSTER_NAME) or caller.allowed_any(Op.WRITE, Res.TOPIC):
        return None
    return ErrorCode.cluster_authorization_failed


def _share_records(caller: Caller, request: Any, topics: TopicIdsPort) -> ErrorCode | None:
    """ShareFetch and ShareAcknowledge: READ on the share group, and READ on every topic named
    (Kafka answers a denied topic per partition; here the whole request is refused)."""
    if request.group_id is not None and not caller.allowed(Op.READ, Res.GROUP, request.group_id):
        return GROUP_DENIED
    for topic in request.topics:
        name = topics.topic_name_of(str(topic.topic_id))
        if name is not None and not caller.allowed(Op.READ, Res.TOPIC, name):
            return ErrorCode.topic_authorization_failed
    return None


def _cluster(op: Op) -> Rule:
    def rule(caller: Caller, request: Any, topics: TopicIdsPort) -> ErrorCode | None:
        return None if caller.allowed_cluster(op) else ErrorCode.cluster_authorization_failed
    return rule


def _add_partitions_to_txn(caller: Caller, request: Any, topics: TopicIdsPort) -> ErrorCode | None:
    """v0-3, a producer's: WRITE on its transactional id; v4+, a broker's: CLUSTER_ACTION, in the handler."""
    if caller.api_version >= 4:
        return None
    return _transactional("v3_and_below_transactional_id")(caller, request, topics)


def _transactional(txn_id_field: str, group_op: Op | None = None) -> Rule:
    def rule(caller: Caller, request: Any, topics: TopicIdsPort) -> ErrorCode | None:
        txn_id = getattr(request, txn_id_field)
        if txn_id is not None and not caller.allowed(Op.WRITE, Res.TRANSACTIONAL_ID, txn_id):
            return TXN_DENIED
        if group_op is not None and not caller.allowed(group_op, Res.GROUP, request.group_id):
            return GROUP_DENIED
        return None
    return rule


RULES: dict[int, Rule] = {
    0: _transactional("transactional_id"),                 # Produce
    8: _group(Op.READ),                                    # OffsetCommit
    11: _group(Op.READ),                                   # JoinGroup
    12: _group(Op.READ),                                   # Heartbeat
    13: _group(Op.READ),                                   # LeaveGroup
    14: _group(Op.READ),                                   # SyncGroup
    22: _init_producer_id,                                 # InitProducerId
    24: _add_partitions_to_txn,                            # AddPartitionsToTxn
    25: _transactional("transactional_id", Op.READ),       # AddOffsetsToTxn
    26: _transactional("transactional_id"),                # EndTxn
    28: _transactional("transactional_id", Op.READ),       # TxnOffsetCommit
    47: _group(Op.DELETE),                                 # OffsetDelete
    # Kafka's rules for APIs of the admin and KIP-848/932 work, in force once they are in the table:
    34: _cluster(Op.ALTER),                                # AlterReplicaLogDirs
    35: _cluster(Op.DESCRIBE),                             # DescribeLogDirs
    43: _cluster(Op.ALTER),                                # ElectLeaders
    45: _cluster(Op.ALTER),                                # AlterPartitionReassignments
    46: _cluster(Op.DESCRIBE),                             # ListPartitionReassignments
    55: _cluster(Op.DESCRIBE),                             # DescribeQuorum
    68: _group(Op.READ),                                   # ConsumerGroupHeartbeat (its topics: in its handler)
    76: _group(Op.READ),                                   # ShareGroupHeartbeat (its topics: in its handler)
    78: _share_records,                                    # ShareFetch
    79: _share_records,                                    # ShareAcknowledge
}

# What each handler checks item by item, as Kafka's KafkaApis does.
CHECKED_IN_HANDLER: dict[int, str] = {
    0: "WRITE on each topic", 1: "READ on each topic", 2: "DESCRIBE on each topic",
    3: "DESCRIBE on each topic (left out of 'all topics'), CREATE to auto-create",
    8: "READ on each topic", 9: "DESCRIBE on each group (v8+ asks for several) and on each topic",
    15: "DESCRIBE on each group", 69: "DESCRIBE on each group", 77: "DESCRIBE on each group",
    74: "DESCRIBE_CONFIGS on the cluster",
    90: "DESCRIBE on each group", 65: "DESCRIBE on each transactional id",
    16: "DESCRIBE on the cluster, else on each group listed", 19: "CREATE on the cluster or the topic",
    10: "DESCRIBE on each group or transactional id (v4+ asks for several)",
    20: "DELETE on each topic", 21: "DELETE on each topic",
    23: "DESCRIBE on each topic (a broker, replica id >= 0: CLUSTER_ACTION)",
    24: "WRITE on each topic (v4+: CLUSTER_ACTION)", 27: "CLUSTER_ACTION on the cluster (brokers only)",
    75: "DESCRIBE on each topic (left out of 'all topics')",
    28: "READ on each topic", 29: "DESCRIBE on the cluster", 30: "ALTER on the cluster", 31: "ALTER on the cluster",
    32: "DESCRIBE_CONFIGS on each topic, or the cluster", 33: "ALTER_CONFIGS on each topic, or the cluster",
    37: "ALTER on each topic", 42: "DELETE on each group", 44: "ALTER_CONFIGS on each topic, or the cluster",
    47: "READ on each topic", 50: "DESCRIBE on the cluster", 51: "ALTER on the cluster",
}

# APIs Kafka answers without asking the authorizer.
NOT_CHECKED: dict[int, str] = {
    17: "SaslHandshake: part of logging in", 18: "ApiVersions: asked before anything else",
    36: "SaslAuthenticate: part of logging in", 60: "DescribeCluster: the brokers, as Metadata gives them",
}


def refusal(caller: Caller, request: Any, topics: TopicIdsPort) -> ErrorCode | None:
    """The error a request-wide ACL check answers with, or None to go on to the handler."""
    rule = RULES.get(caller.api_key)
    return rule(caller, request, topics) if rule is not None else None
