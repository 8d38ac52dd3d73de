"""The APIs minikafka speaks: one row per API, declared once.

Each row names the Kafka API key, the version range the broker advertises in
ApiVersions, and the name of its handler module (``minikafka.handlers.<module>``,
exposing ``async def handle(ctx, request)``; ``handlers.dispatch`` loads it). The
ApiVersions answer, request dispatch and the course's protocol table are all derived
from this table.

The ranges are Apache Kafka 4.1's, as a 4.1 broker answers ApiVersions, so a client that
guesses the broker's release from them (kafka-python) gets 4.1. They start at the
versions older librdkafka checks for exactly (Produce 3, Fetch 4, FindCoordinator 0,
JoinGroup/SyncGroup/Heartbeat/LeaveGroup 0, OffsetFetch 1, OffsetCommit 2,
InitProducerId 0). Every version in a range is really handled: handlers build answers
with ``ctx.respond`` (``codec.downgrade``), which keeps only the fields a version has. One exception, Kafka's
own: Produce is *advertised* from v0 (``advertised_min``) because librdkafka before 2.8
turns compression off unless Produce v0 is listed (KAFKA-18659), but v0-v2 (message
formats 0 and 1) are refused as on Kafka 4, by closing the connection. Two ranges differ
from 4.1's, on purpose and noted in their rows: SaslHandshake v0 is not offered, and
DescribeShareGroupOffsets goes on to Kafka 4.2's v1 (it adds the lag).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Api:
    key: int
    name: str
    min_version: int
    max_version: int
    module: str
    advertised_min: int | None = None  # below min_version: listed in ApiVersions, refused if sent

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version

    @property
    def advertised_range(self) -> tuple[int, int]:
        """What ApiVersions lists for this API."""
        low = self.min_version if self.advertised_min is None else self.advertised_min
        return low, self.max_version


API_TABLE: tuple[Api, ...] = (
    Api(0, "Produce", 3, 13, "produce", advertised_min=0),
    Api(1, "Fetch", 4, 18, "fetch"),
    Api(2, "ListOffsets", 1, 10, "list_offsets"),
    Api(3, "Metadata", 0, 13, "metadata"),
    Api(8, "OffsetCommit", 2, 9, "offset_commit"),
    Api(9, "OffsetFetch", 1, 9, "offset_fetch"),
    Api(10, "FindCoordinator", 0, 6, "find_coordinator"),
    Api(11, "JoinGroup", 0, 9, "join_group"),
    Api(12, "Heartbeat", 0, 4, "heartbeat"),
    Api(13, "LeaveGroup", 0, 5, "leave_group"),
    Api(14, "SyncGroup", 0, 5, "sync_group"),
    Api(15, "DescribeGroups", 0, 6, "describe_groups"),
    Api(16, "ListGroups", 0, 5, "list_groups"),
    Api(17, "SaslHandshake", 1, 1, "sasl_handshake"),  # v0 (raw SASL tokens after it) is not offered
    Api(18, "ApiVersions", 0, 4, "api_versions"),
    Api(19, "CreateTopics", 2, 7, "create_topics"),
    Api(20, "DeleteTopics", 1, 6, "delete_topics"),
    Api(21, "DeleteRecords", 0, 2, "delete_records"),
    Api(22, "InitProducerId", 0, 5, "init_producer_id"),
    Api(24, "AddPartitionsToTxn", 0, 5, "add_partitions_to_txn"),
    Api(25, "AddOffsetsToTxn", 0, 4, "add_offsets_to_txn"),
    Api(26, "EndTxn", 0, 5, "end_txn"),
    Api(28, "TxnOffsetCommit", 0, 5, "txn_offset_commit"),
    Api(29, "DescribeAcls", 1, 3, "describe_acls"),
    Api(30, "CreateAcls", 1, 3, "create_acls"),
    Api(31, "DeleteAcls", 1, 3, "delete_acls"),
    Api(32, "DescribeConfigs", 1, 4, "describe_configs"),
    Api(33, "AlterConfigs", 0, 2, "alter_configs"),
    Api(34, "AlterReplicaLogDirs", 1, 2, "alter_replica_log_dirs"),
    Api(35, "DescribeLogDirs", 1, 4, "describe_log_dirs"),
    Api(36, "SaslAuthenticate", 0, 2, "sasl_authenticate"),
    Api(37, "CreatePartitions", 0, 3, "create_partitions"),
    Api(42, "DeleteGroups", 0, 2, "delete_groups"),
    Api(43, "ElectLeaders", 0, 2, "elect_leaders"),
    Api(44, "IncrementalAlterConfigs", 0, 1, "incremental_alter_configs"),
    Api(45, "AlterPartitionReassignments", 0, 1, "alter_partition_reassignments"),
    Api(46, "ListPartitionReassignments", 0, 0, "list_partition_reassignments"),
    Api(47, "OffsetDelete", 0, 0, "offset_delete"),
    Api(50, "DescribeUserScramCredentials", 0, 0, "describe_user_scram_credentials"),
    Api(51, "AlterUserScramCredentials", 0, 0, "alter_user_scram_credentials"),
    Api(55, "DescribeQuorum", 0, 2, "describe_quorum"),
    Api(60, "DescribeCluster", 0, 2, "describe_cluster"),
    Api(68, "ConsumerGroupHeartbeat", 0, 1, "consumer_group_heartbeat"),
    Api(69, "ConsumerGroupDescribe", 0, 1, "consumer_group_describe"),
    Api(75, "DescribeTopicPartitions", 0, 0, "describe_topic_partitions"),
    Api(76, "ShareGroupHeartbeat", 1, 1, "share_group_heartbeat"),  # KIP-932: share groups
    Api(77, "ShareGroupDescribe", 1, 1, "share_group_describe"),
    Api(78, "ShareFetch", 1, 1, "share_fetch"),
    Api(79, "ShareAcknowledge", 1, 1, "share_acknowledge"),
    Api(90, "DescribeShareGroupOffsets", 0, 1, "describe_share_group_offsets"),  # v1 (lag) is Kafka 4.2's
)

BY_KEY: dict[int, Api] = {api.key: api for api in API_TABLE}
