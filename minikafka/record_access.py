"""What Produce and ListOffsets ask of a broker: append a client's batch, find an offset.

``Broker`` inherits ``RecordAccess``, which implements the handlers' ``ProducePort`` and
``OffsetsPort`` (``handlers.ports``) over the broker's leader replicas: the API floor
sees offsets and error codes, never a ``Partition``. The rules are the replica's and the
transaction coordinator's; this module only puts them in the order Kafka's ReplicaManager
does: the leader, ``min.insync.replicas`` for acks=all, a transactional write verified with
(or, under transaction protocol v2, added to) its coordinator (KIP-890), the append, and
for acks=all the wait for the in-sync replicas.
"""

from __future__ import annotations

import datetime
import logging

from . import records
from .config import BrokerConfig
from .errors import ErrorCode, KafkaError
from .metadata import INTERNAL_TOPICS, ClusterMetadata
from .replica import offset_lookup
from .replica.partition import AppendInfo, Partition
from .transactions.channel import TxnPeers
from .transactions.verification import add_write, implicit_adds, verify_write

log = logging.getLogger("minikafka.produce")


class RecordAccess:
    """The Produce and ListOffsets ports of a broker (a mixin of ``Broker``)."""

    config: BrokerConfig
    metadata: ClusterMetadata
    txn_peers: TxnPeers

    def leader_replica(self, topic: str, index: int) -> Partition:
        raise NotImplementedError

    async def append_batch(self, topic: str, index: int, batch: bytes, acks: int, timeout: datetime.timedelta,
                           transactional_id: str | None, may_add_partition: bool) -> AppendInfo:
        """Append one producer batch to the local leader; raises the ``KafkaError`` the client should see."""
        if topic in INTERNAL_TOPICS:  # only the coordinators write there, never a client
            raise KafkaError(ErrorCode.invalid_topic_exception, f"Cannot append to internal topic {topic}.")
        part = self.leader_replica(topic, index)
        if acks == -1:
            part.check_min_insync()
        try:
            if transactional_id is not None:
                header = records.BatchHeader.parse(batch)
                if implicit_adds(self.config["transaction.version"], may_add_partition):
                    await add_write(part, header, transactional_id, self.metadata, self.txn_peers)
                else:
                    await verify_write(part, header, transactional_id, self.metadata, self.txn_peers)
            info = part.append_produced(batch)
        except records.CorruptRecordError as e:
            raise KafkaError(ErrorCode.corrupt_message, str(e)) from None
        except OSError as e:  # the disk refused the write (full, over quota): nothing was stored
            log.error("cannot write %s-%d to disk: %s", topic, index, e)
            raise KafkaError(ErrorCode.kafka_storage_error,
                             f"The broker could not write to its log directory: {e.strerror or e}.") from None
        if acks == -1:
            await part.wait_for_replicas(info.last_offset + 1, timeout)
        return info

    def list_offset(self, topic: str, index: int, timestamp: int, committed: bool) -> tuple[int, int, int]:
        """(timestamp, offset, leader epoch) that a ListOffsets timestamp names at the local leader."""
        part = self.leader_replica(topic, index)
        found_timestamp, offset = offset_lookup.lookup(part, timestamp, committed)
        return found_timestamp, offset, part.leader_epoch
