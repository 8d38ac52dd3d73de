"""The APIs minikafka speaks: one row per API, declared once.

Each row names the Kafka API key and the version range the broker advertises in
ApiVersions; each API's handler is declared, as an imported object, in
``minikafka.handlers.registry`` (which refuses to load unless it has one for every row
here). The ApiVersions answer, request dispatch and the course's protocol table are all
derived from this table.

The ranges are Apache Kafka 4.2's, as a 4.2 broker answers ApiVersions, so a client that
guesses the broker's release from them (kafka-python, by ListOffsets v11) gets 4.2. They
start at the versions older librdkafka checks for exactly (Produce 3, Fetch 4,
FindCoordinator 0, JoinGroup/SyncGroup/Heartbeat/LeaveGroup 0, OffsetFetch 1, OffsetCommit
2, InitProducerId 0). Every version in a range is really handled: handlers build answers
with ``ctx.respond`` (``codec.downgrade``), which keeps only the fields a version has. One
exception, Kafka's own: Produce is *advertised* from v0 (``advertised_min``) because
librdkafka before 2.8 turns compression off unless Produce v0 is listed (KAFKA-18659), but
v0-v2 (message formats 0 and 1) are refused as on Kafka 4, by closing the connection. One
range differs from 4.2's, noted in its row: SaslHandshake v0 is not offered.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Api:
    key: int
    name: str
    min_version: int
    max_version: int
    advertised_min: int | None = None  # below min_version: listed in ApiVersions, refused if sent

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version

    @property
    def advertised_range(self) -> tuple[int, int]:
        """What ApiVersions lists for this API."""
        low = self.min_version if self.advertised_min is None else self.advertised_min
        return low, self.max_version


API_TABLE: tuple[Api, ...] = (
    Api(0, "Produce", 3, 13, advertised_min=0),
    Api(1, "Fetch", 4, 18),
    Api(2, "ListOffsets", 1, 11),
    Api(3, "Metadata", 0, 13),
    Api(8, "OffsetCommit", 2, 10),
    Api(9, "OffsetFetch", 1, 10),
    Api(10, "FindCoordinator", 0, 6),
    Api(11, "JoinGroup", 0, 9),
    Api(12, "Heartbeat", 0, 4),
    Api(13, "LeaveGroup", 0, 5),
    Api(14, "SyncGroup", 0, 5),
    Api(15, "DescribeGroups", 0, 6),
    Api(16, "ListGroups", 0, 5),
    Api(17, "SaslHandshake", 1, 1),  # v0 (raw SASL tokens after it) is not offered
    Api(18, "ApiVersions", 0, 4),
    Api(19, "CreateTopics", 2, 7),
    Api(20, "DeleteTopics", 1, 6),
    Api(21, "DeleteRecords", 0, 2),
    Api(22, "InitProducerId", 0, 5),
    Api(23, "OffsetForLeaderEpoch", 2, 4),
    Api(24, "AddPartitionsToTxn", 0, 5),
    Api(25, "AddOffsetsToTxn", 0, 4),
    Api(26, "EndTxn", 0, 5),
    Api(27, "WriteTxnMarkers", 1, 2),  # inter-broker: a transaction coordinator to partition leaders
    Api(28, "TxnOffsetCommit", 0, 5),
    Api(29, "DescribeAcls", 1, 3),
    Api(30, "CreateAcls", 1, 3),
    Api(31, "DeleteAcls", 1, 3),
    Api(32, "DescribeConfigs", 1, 4),
    Api(33, "AlterConfigs", 0, 2),
    Api(34, "AlterReplicaLogDirs", 1, 2),
    Api(35, "DescribeLogDirs", 1, 4),
    Api(36, "SaslAuthenticate", 0, 2),
    Api(37, "CreatePartitions", 0, 3),
    Api(42, "DeleteGroups", 0, 2),
    Api(43, "ElectLeaders", 0, 2),
    Api(44, "IncrementalAlterConfigs", 0, 1),
    Api(45, "AlterPartitionReassignments", 0, 1),
    Api(46, "ListPartitionReassignments", 0, 0),
    Api(47, "OffsetDelete", 0, 0),
    Api(50, "DescribeUserScramCredentials", 0, 0),
    Api(51, "AlterUserScramCredentials", 0, 0),
    Api(55, "DescribeQuorum", 0, 2),
    Api(60, "DescribeCluster", 0, 2),
    Api(65, "DescribeTransactions", 0, 0),  # KIP-664
    Api(68, "ConsumerGroupHeartbeat", 0, 1),
    Api(69, "ConsumerGroupDescribe", 0, 1),
    Api(74, "ListConfigResources", 0, 1),  # KIP-1142 (Kafka 4.1); v0 was ListClientMetricsResources
    Api(75, "DescribeTopicPartitions", 0, 0),
    Api(76, "ShareGroupHeartbeat", 1, 1),  # KIP-932: share groups
    Api(77, "ShareGroupDescribe", 1, 1),
    Api(78, "ShareFetch", 1, 2),  # v2: KIP-1206 record-limit acquisition, KIP-1222 lock renewal
    Api(79, "ShareAcknowledge", 1, 2),  # v2: KIP-1222 lock renewal
    Api(90, "DescribeShareGroupOffsets", 0, 1),
)

BY_KEY: dict[int, Api] = {api.key: api for api in API_TABLE}
