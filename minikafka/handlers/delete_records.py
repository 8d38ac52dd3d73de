"""DeleteRecords: move a partition's log start offset forward (``kafka-delete-records.sh``).

Records below the new log start offset can no longer be read; whole segments below
it are deleted from disk. Offset -1 means "up to the high watermark".
"""

from __future__ import annotations

from typing import Any

from kio.schema.delete_records.v2.request import DeleteRecordsPartition, DeleteRecordsRequest

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from . import _topics
from .ports import Caller, Response


class DeleteRecords(_topics.TopicsHandler):
    async def handle(self, caller: Caller, request: DeleteRecordsRequest) -> Response:
        topics = tuple(caller.make("DeleteRecordsTopicResult", name=t.name,
                                   partitions=tuple(self._delete(caller, t.name, p) for p in t.partitions))
                       for t in request.topics)
        return caller.respond(topics=topics)

    def _delete(self, caller: Caller, topic: str, p: DeleteRecordsPartition) -> Any:
        try:
            if not caller.allowed(Operation.DELETE, ResourceType.TOPIC, topic):
                raise KafkaError(ErrorCode.topic_authorization_failed)
            if self.topics.is_internal_topic(topic):  # it would erase committed offsets or transaction states
                raise KafkaError(ErrorCode.invalid_topic_exception, f"Cannot delete records of internal topic {topic}.")
            low = self.topics.delete_records(topic, p.partition_index, p.offset)
            code = ErrorCode.none
        except KafkaError as e:
            low, code = -1, e.code
        return caller.make("DeleteRecordsPartitionResult", partition_index=p.partition_index, low_watermark=low,
                           error_code=code)
