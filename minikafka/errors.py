"""Kafka error codes and the sentences people read when they happen.

The codes are kio's ``ErrorCode`` (generated from Kafka's own list). This module adds
one human sentence per code that minikafka returns, so that the broker log, the CLI
and the notebooks explain an error the same way, and ``KafkaError``, which handlers
raise and the dispatcher turns into the error code of the response.
"""

from __future__ import annotations

from kio.schema.errors import ErrorCode

__all__ = ["ErrorCode", "KafkaError", "explain"]

SENTENCES: dict[ErrorCode, str] = {
    ErrorCode.offset_out_of_range: "The requested offset is outside the partition's log (below the log start offset or past the end).",
    ErrorCode.corrupt_message: "A record batch failed its CRC check or is malformed; nothing from it was written.",
    ErrorCode.unknown_topic_or_partition: "That topic or partition does not exist (auto-creation may be off).",
    ErrorCode.leader_not_available: "The partition has no leader right now; retry after the election.",
    ErrorCode.not_leader_or_follower: "This broker is not the leader of the partition; refresh metadata and retry.",
    ErrorCode.request_timed_out: "The request did not complete in time.",
    ErrorCode.message_too_large: "The record batch is larger than the topic's max.message.bytes (1 MiB by default).",
    ErrorCode.coordinator_not_available: "The coordinator is not available yet; retry shortly.",
    ErrorCode.not_coordinator: "This broker is not the coordinator for that group or transaction.",
    ErrorCode.invalid_topic_exception: "Topic names use only letters, digits, '.', '_' and '-', at most 249 characters, and not '.' or '..'.",
    ErrorCode.record_list_too_large: "The request carries more data than the broker accepts.",
    ErrorCode.not_enough_replicas: "Fewer in-sync replicas than min.insync.replicas: the write was refused.",
    ErrorCode.not_enough_replicas_after_append: "The write reached the leader but not enough replicas acknowledged it in time.",
    ErrorCode.invalid_required_acks: "acks must be 0, 1 or -1 (all).",
    ErrorCode.illegal_generation: "The consumer's generation is stale: a rebalance happened; rejoin the group.",
    ErrorCode.inconsistent_group_protocol: "The member's assignment protocols do not match the group's.",
    ErrorCode.unknown_member_id: "The group does not know this member id; rejoin the group.",
    ErrorCode.invalid_session_timeout: "session.timeout.ms is outside the broker's allowed range.",
    ErrorCode.rebalance_in_progress: "The group is rebalancing; rejoin to get a new assignment.",
    ErrorCode.invalid_commit_offset_size: "The offset metadata is too large.",
    ErrorCode.topic_authorization_failed: "Not authorized to access the topic.",
    ErrorCode.unsupported_version: "This broker does not support that API version.",
    ErrorCode.topic_already_exists: "A topic with that name already exists.",
    ErrorCode.invalid_partitions: "The number of partitions must be at least 1, and partitions can only be added, never removed.",
    ErrorCode.invalid_replication_factor: "The replication factor must be at least 1 and at most the number of brokers.",
    ErrorCode.invalid_replica_assignment: "The replica assignment names unknown brokers or repeats one.",
    ErrorCode.invalid_config: "A configuration value is invalid.",
    ErrorCode.invalid_request: "The request is not valid for this broker.",
    ErrorCode.policy_violation: "The request breaks a broker policy.",
    ErrorCode.out_of_order_sequence_number: "The producer's sequence number skipped ahead: a batch in between was lost.",
    ErrorCode.duplicate_sequence_number: "The batch was already written (a retry); it was not written twice.",
    ErrorCode.invalid_producer_epoch: "The producer's epoch is stale: a newer producer with the same id exists.",
    ErrorCode.invalid_txn_state: "The transaction is not in a state that allows this operation.",
    ErrorCode.invalid_producer_id_mapping: "The producer id does not match the transactional id.",
    ErrorCode.invalid_transaction_timeout: "transaction.timeout.ms is larger than the broker's transaction.max.timeout.ms.",
    ErrorCode.concurrent_transactions: "Another operation on this transaction is still completing; retry.",
    ErrorCode.unknown_producer_id: "The broker has no state for this producer id (it may have expired).",
    ErrorCode.group_id_not_found: "There is no such consumer group.",
    ErrorCode.non_empty_group: "The group still has active members; stop them first.",
    ErrorCode.group_subscribed_to_topic: "The group still consumes that topic; its offsets cannot be deleted.",
    ErrorCode.member_id_required: "First join: the broker assigned a member id; join again with it.",
    ErrorCode.fenced_instance_id: "Another member with the same group.instance.id replaced this one.",
    ErrorCode.producer_fenced: "A newer producer with the same transactional.id fenced this one.",
    ErrorCode.unknown_topic_id: "No topic has that id.",
    ErrorCode.policy_violation: "The request breaks a broker policy.",
}


def explain(code: int | ErrorCode) -> str:
    code = ErrorCode(int(code))
    if code in SENTENCES:
        return SENTENCES[code]
    return (code.__doc__ or code.name.replace("_", " ")).strip()


class KafkaError(Exception):
    """An error a handler answers with; ``str()`` is the sentence for people."""

    def __init__(self, code: ErrorCode, message: str | None = None):
        self.code = code
        self.message = message or explain(code)
        super().__init__(f"{code.name.upper()}: {self.message}")


class InvalidRecords(KafkaError):
    """INVALID_RECORD with the records at fault, as (index in the batch, message): Produce v8+
    reports them one by one."""

    def __init__(self, message: str, record_errors: list[tuple[int, str]]):
        super().__init__(ErrorCode.invalid_record, message)
        self.record_errors = record_errors


class MemberIdRequired(KafkaError):
    """JoinGroup v4+ with an empty member id (KIP-394): here is your id, join again with it.

    Here, not in ``groups``, so the JoinGroup handler reads the id without importing the coordinator."""

    def __init__(self, member_id: str):
        super().__init__(ErrorCode.member_id_required)
        self.member_id = member_id
