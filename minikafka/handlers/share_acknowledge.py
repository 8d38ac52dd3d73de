"""ShareAcknowledge (KIP-932): accept, release or reject records without fetching more.

A share consumer uses it to commit acknowledgements on their own (``commit_sync``) and,
with epoch -1, to close its share session when it leaves: what it still holds is then
released for other members. Epoch 0 is INVALID_SHARE_SESSION_EPOCH (only ShareFetch
opens a session); a record the member does not hold is INVALID_RECORD_STATE for its
partition. Version 2 (KIP-1222) may carry Renew acknowledgements, which restart the
acquisition locks of records the member keeps holding (when the group's
``share.renew.acknowledge.enable`` allows it), and answers the lock duration
(``AcquisitionLockTimeoutMs``), so the client knows how long a renewed record stays its own.
"""

from __future__ import annotations

import datetime
from typing import Any

from kio.schema.share_acknowledge.v2.request import ShareAcknowledgeRequest

from ..errors import ErrorCode, KafkaError
from . import _share
from .ports import Caller, Response

FINAL_EPOCH = -1  # the share session epoch that closes the session


class ShareAcknowledge(_share.ShareHandler):
    async def handle(self, caller: Caller, request: ShareAcknowledgeRequest) -> Response:
        known, unknown = self.resolve(request.topics)
        try:
            group_id, member_id = _share.check_ids(request)
            session = self.share.share_acknowledge_session(group_id, member_id, request.share_session_epoch)
        except KafkaError as e:
            return caller.respond(error_code=e.code, error_message=e.message, responses=(), node_endpoints=(),
                                  acquisition_lock_timeout=datetime.timedelta(0))
        results = await self.acknowledge(caller, group_id, member_id, {tp: b for tp, b in known.items() if b})
        if request.share_session_epoch == FINAL_EPOCH:
            await self.share.close_share_session(session)
        missing = KafkaError(ErrorCode.unknown_topic_id)
        topics = [caller.make("ShareAcknowledgeTopicResponse", topic_id=self.topic_id(t),
                              partitions=tuple(self._partition(caller, t, i, e) for i, e in parts))
                  for t, parts in _share.by_topic(results).items()]
        topics += [caller.make("ShareAcknowledgeTopicResponse", topic_id=tid,
                               partitions=tuple(self._partition(caller, "", i, missing) for i, _ in parts))
                   for tid, parts in _share.by_topic(unknown).items()]
        moved = [tp for tp, e in results.items() if e and e.code == ErrorCode.not_leader_or_follower]
        lock = datetime.timedelta(milliseconds=self.share.share_lock_duration_ms(group_id))
        return caller.respond(error_code=ErrorCode.none, responses=tuple(topics),
                              node_endpoints=self.node_endpoints(caller, moved), acquisition_lock_timeout=lock)

    def _partition(self, caller: Caller, topic: str, index: int, error: KafkaError | None) -> Any:
        return caller.make("PartitionData", partition_index=index, error_code=error.code if error else ErrorCode.none,
                           error_message=error.message if error else None,
                           current_leader=self.leader(caller, topic, index))
