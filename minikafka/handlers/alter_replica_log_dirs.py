"""AlterReplicaLogDirs (KIP-113): move replicas of this broker to another of its log directories.

The move is Kafka's: a future log in the destination fills up beside the current one and
then takes its place (``minikafka.replica.log_dir_move``); DescribeLogDirs shows it
meanwhile. Errors as Kafka's: LOG_DIR_NOT_FOUND (not one of this broker's ``log.dirs``),
KAFKA_STORAGE_ERROR (the directory is offline), REPLICA_NOT_AVAILABLE (this broker holds
no replica of the partition yet; the directory is remembered for when it does),
UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from kio.schema.alter_replica_log_dirs.v2.request import AlterReplicaLogDirsRequest

from ..errors import ErrorCode, KafkaError
from .ports import Caller, LogDirsPort, Response


class AlterReplicaLogDirs:
    """The AlterReplicaLogDirs API over the broker's ``LogDirsPort``."""

    def __init__(self, log_dirs: LogDirsPort) -> None:
        self.log_dirs = log_dirs

    async def handle(self, caller: Caller, request: AlterReplicaLogDirsRequest) -> Response:
        results: dict[str, list[tuple[int, ErrorCode]]] = {}
        for d in request.dirs:
            for t in d.topics:
                results.setdefault(t.name, []).extend((i, self._move(d.path, t.name, i)) for i in t.partitions)
        return caller.respond(results=tuple(
            caller.make("AlterReplicaLogDirTopicResult", topic_name=name, partitions=tuple(
                caller.make("AlterReplicaLogDirPartitionResult", partition_index=i, error_code=code)
                for i, code in parts))
            for name, parts in results.items()))

    def _move(self, path: str, topic: str, index: int) -> ErrorCode:
        try:
            self.log_dirs.alter_replica_log_dir(topic, index, path)
            return ErrorCode.none
        except KafkaError as e:
            return e.code
