"""What the active controller serves to brokers and admin tools besides registration and heartbeats.

CreateTopics, DeleteTopics, CreatePartitions and ElectLeaders are what an admin client sends,
or what a broker forwards to the controller (KIP-590); AlterPartition (KIP-497) is a partition
leader's new ISR; AllocateProducerIds (KIP-730) gives a broker a block of producer ids;
IncrementalAlterConfigs (KIP-339) changes a topic's settings or the brokers' dynamic ones. Each
function here runs the request against the ``QuorumController`` and returns a ``Finish``: the
process waits until the records the request appended commit, then calls it with None, or with
the error that stopped the wait (REQUEST_TIMED_OUT, NOT_CONTROLLER), which replaces every
success in the answer. A controller that is not active answers NOT_CONTROLLER, and the client
looks for the active one.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from ..errors import ErrorCode, KafkaError
from ..metadata import INTERNAL_TOPICS
from ..protocol import codec
from .answers import (
    ALLOCATE_PRODUCER_IDS,
    ALTER_PARTITION,
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    ELECT_LEADERS,
    INCREMENTAL_ALTER_CONFIGS,
)
from .quorum_controller import QuorumController

PREFERRED, UNCLEAN = 0, 1
ZERO_ID = uuid.UUID(int=0)

Finish = Callable[[ErrorCode | None], Any]
Outcome = tuple[ErrorCode, str | None]


def _run(action: Callable[[], Any]) -> Outcome:
    try:
        action()
    except KafkaError as e:
        return e.code, e.message
    return ErrorCode.none, None


def _after(outcome: Outcome, failed: ErrorCode | None) -> Outcome:
    """A success whose records did not commit is the failure that stopped the wait."""
    if failed is not None and outcome[0] == ErrorCode.none:
        return failed, "The change was not committed by the metadata quorum."
    return outcome


def handle(controller: QuorumController, api_key: int, version: int, request: Any) -> Finish:
    return HANDLERS[api_key](controller, version, request)


def create_topics(controller: QuorumController, version: int, request: Any) -> Finish:
    module, cls = codec.response_module(CREATE_TOPICS, version), codec.response_class(CREATE_TOPICS, version)
    results = []
    for t in request.topics:
        assignment = {a.partition_index: list(a.broker_ids) for a in t.assignments} or None
        created: list[Any] = []

        def create(t: Any = t, assignment: dict | None = assignment, created: list = created) -> None:
            if assignment and (t.num_partitions != -1 or t.replication_factor != -1):
                raise KafkaError(
                    ErrorCode.invalid_request,
                    "Give either a replica assignment or partitions and replication factor, not both.",
                )
            configs = {c.name: c.value for c in t.configs}
            created.append(
                controller.create_topic(
                    t.name, t.num_partitions, t.replication_factor, configs, assignment, request.validate_only
                )
            )

        results.append((t.name, _run(create), created))

    def finish(failed: ErrorCode | None) -> Any:
        out = []
        for name, outcome, created in results:
            code, message = _after(outcome, failed)
            topic = created[0] if created and code == ErrorCode.none else None
            out.append(
                codec.entity(
                    module,
                    "CreatableTopicResult",
                    name=name,
                    topic_id=uuid.UUID(topic.topic_id) if topic else ZERO_ID,
                    error_code=code,
                    error_message=message,
                    topic_config_error_code=ErrorCode.none,
                    num_partitions=len(topic.partitions) if topic else -1,
                    replication_factor=len(topic.partitions[0].replicas) if topic else -1,
                    configs=None,
                )
            )
        return codec.downgrade(cls, topics=tuple(out))

    return finish


def delete_topics(controller: QuorumController, version: int, request: Any) -> Finish:
    module, cls = codec.response_module(DELETE_TOPICS, version), codec.response_class(DELETE_TOPICS, version)
    wanted: list[tuple[str | None, uuid.UUID]] = (
        [(t.name, t.topic_id) for t in request.topics] if version >= 6 else [(n, ZERO_ID) for n in request.topic_names]
    )
    results = []
    for name, topic_id in wanted:
        if name is None:
            found = controller.metadata.topic_by_id(str(topic_id))
            name = found.name if found else None
        topic = controller.metadata.topics.get(name or "")
        the_id = uuid.UUID(topic.topic_id) if topic else topic_id

        def delete(name: str | None = name, topic_id: uuid.UUID = topic_id) -> None:
            if name is None:
                raise KafkaError(ErrorCode.unknown_topic_id, f"No topic has the id {topic_id}.")
            if name in INTERNAL_TOPICS:
                raise KafkaError(ErrorCode.invalid_request, f"{name} is an internal topic and cannot be deleted.")
            controller.delete_topic(name)

        results.append((name, the_id, _run(delete)))

    def finish(failed: ErrorCode | None) -> Any:
        out = []
        for name, the_id, outcome in results:
            code, message = _after(outcome, failed)
            out.append(
                codec.entity(
                    module, "DeletableTopicResult", name=name, topic_id=the_id, error_code=code, error_message=message
                )
            )
        return codec.downgrade(cls, responses=tuple(out))

    return finish


def create_partitions(controller: QuorumController, version: int, request: Any) -> Finish:
    module, cls = codec.response_module(CREATE_PARTITIONS, version), codec.response_class(CREATE_PARTITIONS, version)
    results = []
    for t in request.topics:
        assignments = None if t.assignments is None else [list(a.broker_ids) for a in t.assignments]

        def grow(t: Any = t, a: list[list[int]] | None = assignments) -> None:
            controller.add_partitions(t.name, t.count, request.validate_only, a)

        results.append((t.name, _run(grow)))

    def finish(failed: ErrorCode | None) -> Any:
        out = []
        for name, outcome in results:
            code, message = _after(outcome, failed)
            out.append(
                codec.entity(module, "CreatePartitionsTopicResult", name=name, error_code=code, error_message=message)
            )
        return codec.downgrade(cls, results=tuple(out))

    return finish


def elect_leaders(controller: QuorumController, version: int, request: Any) -> Finish:
    module, cls = codec.response_module(ELECT_LEADERS, version), codec.response_class(ELECT_LEADERS, version)
    if request.election_type not in (PREFERRED, UNCLEAN):
        return lambda failed: codec.downgrade(cls, error_code=ErrorCode.invalid_request, replica_election_results=())
    unclean = request.election_type == UNCLEAN
    if not controller.is_ready:
        return lambda failed: codec.downgrade(cls, error_code=ErrorCode.not_controller, replica_election_results=())
    if request.topic_partitions is None:
        wanted = [(t.name, [p.index for p in t.partitions]) for t in controller.metadata.topics.values()]
    else:
        wanted = [(t.topic, list(dict.fromkeys(t.partitions))) for t in request.topic_partitions]

    def elect(topic: str, index: int) -> Outcome:
        return _run(lambda: controller.elect(topic, index, unclean))

    results = [(topic, [(i, elect(topic, i)) for i in indexes]) for topic, indexes in wanted]
    every = request.topic_partitions is None

    def finish(failed: ErrorCode | None) -> Any:
        out = []
        for topic, partitions in results:
            items = []
            for index, outcome in partitions:
                code, message = _after(outcome, failed)
                if every and code == ErrorCode.election_not_needed:
                    continue  # asked for every partition: those that needed nothing are left out, as in Kafka
                items.append(
                    codec.entity(module, "PartitionResult", partition_id=index, error_code=code, error_message=message)
                )
            if items:
                out.append(codec.entity(module, "ReplicaElectionResult", topic=topic, partition_result=tuple(items)))
        return codec.downgrade(cls, error_code=ErrorCode.none, replica_election_results=tuple(out))

    return finish


def alter_partition(controller: QuorumController, version: int, request: Any) -> Finish:
    module, cls = codec.response_module(ALTER_PARTITION, version), codec.response_class(ALTER_PARTITION, version)
    if not controller.is_ready:
        return lambda failed: codec.downgrade(cls, error_code=ErrorCode.not_controller, topics=())
    error = controller.check_broker(request.broker_id, request.broker_epoch)
    if error != ErrorCode.none:
        return lambda failed: codec.downgrade(cls, error_code=error, topics=())
    results = []
    for t in request.topics:
        topic = controller.metadata.topic_by_id(str(t.topic_id))
        answers = []
        for p in t.partitions:
            isr = [b.broker_id for b in p.new_isr_with_epochs] if version >= 3 else list(p.new_isr)
            name = topic.name if topic is not None else ""
            answer = controller.alter_partition(
                request.broker_id, request.broker_epoch, name, p.partition_index, p.leader_epoch, p.partition_epoch, isr
            )
            answers.append((p.partition_index, answer))
        results.append((t.topic_id, topic is not None, answers))

    def finish(failed: ErrorCode | None) -> Any:
        out = []
        for topic_id, known, answers in results:
            items = []
            for index, answer in answers:
                code = ErrorCode.unknown_topic_id if not known else answer.error
                if failed is not None and code == ErrorCode.none:
                    code = failed
                info = answer.info if code == ErrorCode.none else None
                items.append(
                    codec.entity(
                        module,
                        "PartitionData",
                        partition_index=index,
                        error_code=code,
                        leader_id=info.leader if info else -1,
                        leader_epoch=info.leader_epoch if info else -1,
                        isr=tuple(info.isr) if info else (),
                        partition_epoch=info.partition_epoch if info else -1,
                    )
                )
            out.append(codec.entity(module, "TopicData", topic_id=topic_id, partitions=tuple(items)))
        return codec.downgrade(cls, error_code=ErrorCode.none, topics=tuple(out))

    return finish


def allocate_producer_ids(controller: QuorumController, version: int, request: Any) -> Finish:
    cls = codec.response_class(ALLOCATE_PRODUCER_IDS, version)
    error, first, length = controller.allocate_producer_ids(request.broker_id, request.broker_epoch)

    def finish(failed: ErrorCode | None) -> Any:
        code = failed if failed is not None and error == ErrorCode.none else error
        ok = code == ErrorCode.none
        return codec.downgrade(
            cls, error_code=code, producer_id_start=first if ok else -1, producer_id_len=length if ok else 0
        )

    return finish


def incremental_alter_configs(controller: QuorumController, version: int, request: Any) -> Finish:
    module = codec.response_module(INCREMENTAL_ALTER_CONFIGS, version)
    cls = codec.response_class(INCREMENTAL_ALTER_CONFIGS, version)
    results = []
    for r in request.resources:
        changes = [(c.config_operation, c.name, c.value) for c in r.configs]

        def alter(r: Any = r, changes: list = changes) -> None:
            controller.alter_configs(r.resource_type, r.resource_name, changes, request.validate_only)

        results.append((r.resource_type, r.resource_name, _run(alter)))

    def finish(failed: ErrorCode | None) -> Any:
        out = []
        for resource_type, name, outcome in results:
            code, message = _after(outcome, failed)
            out.append(
                codec.entity(
                    module, "AlterConfigsResourceResponse", error_code=code, error_message=message,
                    resource_type=resource_type, resource_name=name,
                )
            )
        return codec.downgrade(cls, responses=tuple(out))

    return finish


HANDLERS: dict[int, Callable[[QuorumController, int, Any], Finish]] = {
    CREATE_TOPICS: create_topics,
    DELETE_TOPICS: delete_topics,
    CREATE_PARTITIONS: create_partitions,
    ELECT_LEADERS: elect_leaders,
    ALTER_PARTITION: alter_partition,
    ALLOCATE_PRODUCER_IDS: allocate_producer_ids,
    INCREMENTAL_ALTER_CONFIGS: incremental_alter_configs,
}
