"""The quorum owns topics and partitions: sans-I/O controllers on the simulated Raft quorum (sim.py)."""

from __future__ import annotations

import uuid
from dataclasses import asdict
from datetime import timedelta

import pytest

from minikafka.config import BrokerConfig
from minikafka.errors import ErrorCode, KafkaError
from minikafka.kraft import admin, snapshots
from minikafka.kraft.brokers import BrokerRegistry
from minikafka.kraft.image import MetadataImage
from minikafka.kraft.quorum_controller import QuorumController
from minikafka.kraft.records import KAFKA_NAMES, PARTITION_CHANGE, TOPIC_RECORD, read_all
from minikafka.metadata import ClusterMetadata
from minikafka.protocol import codec
from minikafka.resource_configs import APPEND, SET, TOPIC

from .sim import Sim

SESSION_MS = 1000
BROKERS = (1, 2, 3)


class Cluster:
    """Three controllers over the simulated quorum, and fake brokers heartbeating to the leader."""

    def __init__(self) -> None:
        self.sim = Sim(size=3, seed=1)
        self.controllers = {n: QuorumController(node, SESSION_MS, now=0) for n, node in self.sim.nodes.items()}
        self.epochs: dict[int, int] = {}
        self.beating: set[int] = set()
        self.isolated: set[int] = set()

    def step(self, ms: int = 10) -> None:
        while self.sim.in_flight:
            _, source, destination, *_ = self.sim.in_flight[0]
            if source in self.isolated or destination in self.isolated:
                self.sim.in_flight.pop(0)  # lost on the way
            else:
                self.sim.deliver(0)
        self.sim.now += ms
        for controller in self.controllers.values():
            controller.tick(self.sim.now)
        leader = self.leader()
        if leader is not None:
            for broker in sorted(self.beating):
                leader.heartbeat(broker, self.epochs[broker], 0, False, False, self.sim.now)
        self.sim.after()

    def run_until(self, what: str, done, steps: int = 3000):
        for _ in range(steps):
            result = done()
            if result:
                return result
            self.step()
        raise AssertionError(f"the simulated quorum never got to: {what}")

    def leader(self) -> QuorumController | None:
        ready = [c for n, c in self.controllers.items() if c.is_ready and n not in self.isolated]
        return max(ready, key=lambda c: c.node.epoch) if ready else None

    def committed(self, controller: QuorumController) -> bool:
        return controller.node.high_watermark >= controller.node.log.end_offset

    def settle(self) -> QuorumController:
        """Run until a ready leader's log is committed and applied on every controller."""

        def settled() -> QuorumController | None:
            leader = self.leader()
            if leader is None or not self.committed(leader):
                return None
            end = leader.node.log.end_offset
            live = [c for n, c in self.controllers.items() if n not in self.isolated]
            return leader if all(c.registry.applied_offset + 1 == end for c in live) else None

        return self.run_until("every controller applied the leader's log", settled)

    def start_brokers(self) -> QuorumController:
        leader = self.run_until("a ready leader", self.leader)
        for b in BROKERS:
            listeners = [{"name": "PLAINTEXT", "host": "127.0.0.1", "port": 9090 + b, "securityProtocol": 0}]
            error, epoch = leader.register(b, uuid.uuid4(), listeners, f"rack-{b}", self.sim.now)
            assert error == ErrorCode.none
            self.epochs[b] = epoch
            self.beating.add(b)
        self.run_until("every broker unfenced", lambda: all(c.rules.peers.live() == list(BROKERS)
                                                             for c in self.controllers.values()))
        return self.settle()


@pytest.fixture
def cluster() -> Cluster:
    return Cluster()


def states(controller: QuorumController) -> dict:
    return {name: asdict(t) for name, t in controller.metadata.topics.items()}


def test_a_topic_is_placed_over_the_unfenced_brokers_and_replicated_to_every_controller(cluster):
    leader = cluster.start_brokers()
    with pytest.raises(KafkaError) as refused:
        leader.create_topic("big", 1, 4)
    assert refused.value.code == ErrorCode.invalid_replication_factor
    topic = leader.create_topic("orders", 3, 3)
    assert [p.leader for p in topic.partitions] == [1, 2, 3]
    leader = cluster.settle()
    for controller in cluster.controllers.values():
        assert states(controller) == states(leader)
        assert controller.metadata.brokers == {b: ("127.0.0.1", 9090 + b) for b in BROKERS}
        assert controller.metadata.racks == {b: f"rack-{b}" for b in BROKERS}
        assert controller.metadata.listener_endpoints["PLAINTEXT"][2] == ("127.0.0.1", 9092)
    kinds = [r.type for r in read_all(leader.node.log.batches())]
    assert TOPIC_RECORD in kinds
    follower = next(c for c in cluster.controllers.values() if c is not leader)
    with pytest.raises(KafkaError) as refused:
        follower.create_topic("other", 1, 1)
    assert refused.value.code == ErrorCode.not_controller


def test_a_fenced_broker_loses_its_leaderships_and_gets_them_back_when_in_sync(cluster):
    leader = cluster.start_brokers()
    leader.create_topic("orders", 3, 3)
    leader = cluster.settle()
    before = leader.metadata.topics["orders"].partitions[0]
    assert (before.leader, before.leader_epoch) == (1, 0)
    cluster.beating.discard(1)
    cluster.run_until("broker 1 fenced", lambda: 1 not in leader.rules.peers)
    leader = cluster.settle()
    for controller in cluster.controllers.values():
        p0 = controller.metadata.topics["orders"].partitions[0]
        assert (p0.leader, p0.leader_epoch, p0.isr) == (2, 1, [2, 3])
        assert all(1 not in p.isr for p in controller.metadata.topics["orders"].partitions)
        assert 1 not in controller.metadata.brokers
    cluster.beating.add(1)
    cluster.run_until("broker 1 unfenced", lambda: 1 in leader.rules.peers)
    p0 = leader.metadata.topics["orders"].partitions[0]
    assert p0.leader == 2  # back, but not in sync yet
    answer = leader.alter_partition(2, cluster.epochs[2], "orders", 0, p0.leader_epoch, p0.partition_epoch, [1, 2, 3])
    assert answer.error == ErrorCode.none
    leader = cluster.settle()
    for controller in cluster.controllers.values():
        p0 = controller.metadata.topics["orders"].partitions[0]
        assert (p0.leader, p0.leader_epoch, p0.isr) == (1, 2, [1, 2, 3])  # the preferred leader returned


def test_alter_partition_refuses_stale_and_ineligible_changes(cluster):
    leader = cluster.start_brokers()
    leader.create_topic("t", 1, 3)
    leader = cluster.settle()
    p = leader.metadata.topics["t"].partitions[0]
    epochs = cluster.epochs

    def alter(broker: int, leader_epoch: int, partition_epoch: int, isr: list[int]) -> ErrorCode:
        return leader.alter_partition(broker, epochs[broker], "t", 0, leader_epoch, partition_epoch, isr).error

    assert alter(1, p.leader_epoch, p.partition_epoch, [1, 2]) == ErrorCode.none
    assert p.isr == [1, 2] and p.partition_epoch == 1
    assert alter(1, p.leader_epoch, 0, [1]) == ErrorCode.invalid_update_version  # an old partition epoch
    assert alter(1, p.leader_epoch - 1, p.partition_epoch, [1]) == ErrorCode.fenced_leader_epoch
    assert alter(2, p.leader_epoch, p.partition_epoch, [1, 2]) == ErrorCode.invalid_request  # not the leader
    assert alter(1, p.leader_epoch, p.partition_epoch, [2]) == ErrorCode.invalid_request  # without the leader
    cluster.beating.discard(3)
    cluster.run_until("broker 3 fenced", lambda: 3 not in leader.rules.peers)
    p = leader.metadata.topics["t"].partitions[0]
    assert alter(1, p.leader_epoch, p.partition_epoch, [1, 2, 3]) == ErrorCode.ineligible_replica
    assert leader.check_broker(1, epochs[1] + 1) == ErrorCode.stale_broker_epoch  # AlterPartition's first check


def test_followers_dropped_together_below_min_insync_replicas_are_all_eligible_leaders(cluster):
    """KIP-966 as Kafka's PartitionChangeBuilder: the ELR is the old ISR (and ELR) less the new ISR when
    the new ISR is below min.insync.replicas; one dropped alone above it is not eligible."""
    leader = cluster.start_brokers()
    leader.create_topic("t", 2, 3, configs={"min.insync.replicas": "2"})
    leader = cluster.settle()
    epochs = cluster.epochs

    def alter(index: int, isr: list[int]) -> None:
        p = leader.metadata.topics["t"].partitions[index]
        answer = leader.alter_partition(p.leader, epochs[p.leader], "t", index, p.leader_epoch, p.partition_epoch, isr)
        assert answer.error == ErrorCode.none

    together = leader.metadata.topics["t"].partitions[0]
    followers = [b for b in together.replicas if b != together.leader]
    alter(0, [together.leader])  # both followers at once
    assert (together.isr, sorted(together.elr)) == ([together.leader], sorted(followers))
    apart = leader.metadata.topics["t"].partitions[1]
    first, second = [b for b in apart.replicas if b != apart.leader]
    alter(1, [b for b in apart.replicas if b != first])  # two left in sync: nobody is eligible yet
    assert apart.elr == []
    alter(1, [apart.leader])
    assert (apart.isr, apart.elr) == ([apart.leader], [second])  # the first may lack what committed since


def test_a_leader_that_loses_its_epoch_forgets_what_did_not_commit(cluster):
    leader = cluster.start_brokers()
    old = leader.node.node_id
    cluster.isolated.add(old)
    leader.create_topic("lost", 1, 1)  # appended, never replicated
    assert "lost" in leader.metadata.topics
    cluster.run_until("another leader", lambda: (c := cluster.leader()) is not None and c.node.node_id != old)
    new = cluster.leader()
    assert new is not None
    new.create_topic("kept", 1, 3)
    cluster.run_until("the old leader stepped down", lambda: not leader.is_active)
    cluster.step()
    assert "lost" not in leader.metadata.topics  # rebuilt from what committed
    cluster.isolated.clear()
    cluster.settle()
    for controller in cluster.controllers.values():
        assert sorted(controller.metadata.topics) == ["kept"]
        assert [b for b in BROKERS if b in controller.rules.peers] == list(BROKERS)


def test_producer_id_blocks_never_repeat_across_leaders(cluster):
    leader = cluster.start_brokers()
    first = leader.allocate_producer_ids(1, cluster.epochs[1])
    second = leader.allocate_producer_ids(2, cluster.epochs[2])
    assert first[0] == second[0] == ErrorCode.none and second[1] == first[1] + first[2]
    assert leader.allocate_producer_ids(9, 0)[0] == ErrorCode.broker_id_not_registered
    cluster.settle()
    cluster.isolated.add(leader.node.node_id)
    new = cluster.run_until("a new leader", lambda: (c := cluster.leader()) is not leader and c)
    assert new.allocate_producer_ids(3, cluster.epochs[3])[1] == second[1] + second[2]


def test_a_snapshot_rebuilds_registrations_and_metadata():
    registry, metadata = BrokerRegistry(), ClusterMetadata(BrokerConfig(), sink=lambda change: None)
    source = MetadataImage(registry, metadata)
    sim = Cluster()
    leader = sim.start_brokers()
    leader.create_topic("orders", 2, 3, {"retention.ms": "1000"})
    leader.metadata.set_group_configs("g", {"consumer.session.timeout.ms": "45000"})
    leader.allocate_producer_ids(1, sim.epochs[1])
    leader = sim.settle()
    data = snapshots.encode(leader.image.snapshot_records(0), leader.registry.applied_offset + 1, 1, 0)
    source.load_snapshot(snapshots.records_of(data), leader.registry.applied_offset + 1)
    assert {n: asdict(t) for n, t in metadata.topics.items()} == states(leader)
    assert metadata.group_configs == {"g": {"consumer.session.timeout.ms": "45000"}}
    assert metadata.producer_id_block_end == leader.metadata.producer_id_block_end > 0
    assert sorted(metadata.brokers) == list(BROKERS) and source.applied_offset == leader.registry.applied_offset


def test_with_a_sink_metadata_writes_no_file_and_a_replica_applies_the_changes(tmp_path):
    changes: list[dict] = []
    primary = ClusterMetadata(BrokerConfig(), tmp_path / "m.json", sink=changes.append)
    primary.brokers = {1: ("h", 1), 2: ("h", 2)}
    primary.add_topic(primary.plan_topic("a", 2, 2))
    info = primary.topics["a"].partitions[1]
    info.isr = [info.leader]
    primary.partition_changed("a", info)
    primary.remove_topic("a")
    primary.add_topic(primary.plan_topic("b", 1, 1))
    assert not list(tmp_path.iterdir())
    assert [c["type"] for c in changes] == ["topic", "partition", "remove_topic", "topic"]
    assert {KAFKA_NAMES[c["type"]] for c in changes} >= {TOPIC_RECORD, PARTITION_CHANGE, "RemoveTopicRecord"}
    replica = ClusterMetadata(BrokerConfig())
    for change in changes:
        replica.apply(change)
    assert replica.end_offset == primary.end_offset == 4
    assert {n: asdict(t) for n, t in replica.topics.items()} == {n: asdict(t) for n, t in primary.topics.items()}


def test_topic_settings_change_incrementally_and_reach_every_controller(cluster):
    leader = cluster.start_brokers()
    leader.create_topic("t", 1, 3, {"cleanup.policy": "delete"})
    leader.alter_configs(TOPIC, "t", [(SET, "retention.ms", "5000"), (APPEND, "cleanup.policy", "compact")], False)
    with pytest.raises(KafkaError) as refused:
        leader.alter_configs(TOPIC, "t", [(SET, "retention.ms", "soon")], False)
    assert refused.value.code == ErrorCode.invalid_config
    with pytest.raises(KafkaError) as refused:
        leader.alter_configs(TOPIC, "nope", [(SET, "retention.ms", "1")], False)
    assert refused.value.code == ErrorCode.unknown_topic_or_partition
    cluster.settle()
    for controller in cluster.controllers.values():
        config = controller.metadata.topic_config("t")
        assert config["retention.ms"] == 5000 and config["cleanup.policy"] == "delete,compact"


def test_elect_leaders_follows_the_embedded_rules(cluster):
    leader = cluster.start_brokers()
    leader.create_topic("t", 1, 3)
    leader.create_topic("single", 1, 1)
    with pytest.raises(KafkaError) as refused:
        leader.elect("t", 0, unclean=False)
    assert refused.value.code == ErrorCode.election_not_needed
    cluster.beating.discard(1)
    cluster.run_until("broker 1 fenced", lambda: 1 not in leader.rules.peers)
    assert leader.metadata.topics["single"].partitions[0].leader == -1  # offline: its only replica is fenced
    with pytest.raises(KafkaError) as refused:
        leader.elect("single", 0, unclean=True)
    assert refused.value.code == ErrorCode.eligible_leaders_not_available
    with pytest.raises(KafkaError) as refused:
        leader.elect("t", 0, unclean=False)
    assert refused.value.code == ErrorCode.preferred_leader_not_available
    with pytest.raises(KafkaError) as refused:
        leader.elect("t", 5, unclean=False)
    assert refused.value.code == ErrorCode.unknown_topic_or_partition
    cluster.beating.add(1)
    cluster.run_until("broker 1 unfenced", lambda: 1 in leader.rules.peers)
    cluster.settle()
    for controller in cluster.controllers.values():  # broker_joined: the offline partition leads again
        assert controller.metadata.topics["single"].partitions[0].leader == 1


def _request(api_key: int, version: int, **fields):
    return codec.make(codec.request_class(api_key, version), **fields)


def test_the_admin_answers_as_kafka_s_controller_does(cluster):
    leader = cluster.start_brokers()
    follower = next(c for c in cluster.controllers.values() if c is not leader)
    module = codec.request_module(19, 7)
    topic = codec.entity(module, "CreatableTopic", name="t", num_partitions=1, replication_factor=2,
                         assignments=(), configs=())
    create = _request(19, 7, topics=(topic,), timeout=timedelta(seconds=1), validate_only=False)
    assert admin.handle(follower, 19, 7, create)(None).topics[0].error_code == ErrorCode.not_controller
    created = admin.handle(leader, 19, 7, create)(ErrorCode.request_timed_out).topics[0]
    assert created.error_code == ErrorCode.request_timed_out  # appended, but the wait for the commit failed
    assert admin.handle(leader, 19, 7, create)(None).topics[0].error_code == ErrorCode.topic_already_exists

    module = codec.request_module(37, 3)
    grow = _request(37, 3, timeout=timedelta(seconds=1), validate_only=False, topics=(
        codec.entity(module, "CreatePartitionsTopic", name="t", count=3, assignments=None),
        codec.entity(module, "CreatePartitionsTopic", name="t", count=2, assignments=None),
    ))
    results = admin.handle(leader, 37, 3, grow)(None).results
    assert [r.error_code for r in results] == [ErrorCode.none, ErrorCode.invalid_partitions]
    assert len(leader.metadata.topics["t"].partitions) == 3

    elect = _request(43, 2, election_type=0, topic_partitions=None, timeout=timedelta(seconds=1))
    answer = admin.handle(leader, 43, 2, elect)(None)
    assert answer.error_code == ErrorCode.none and answer.replica_election_results == ()  # nothing needed

    ids = admin.handle(leader, 67, 0, _request(67, 0, broker_id=2, broker_epoch=cluster.epochs[2]))(None)
    assert (ids.error_code, ids.producer_id_len) == (ErrorCode.none, 1000)
    stale = admin.handle(leader, 67, 0, _request(67, 0, broker_id=2, broker_epoch=cluster.epochs[2] + 1))(None)
    assert stale.error_code == ErrorCode.stale_broker_epoch

    module = codec.request_module(20, 6)
    topic_id = uuid.UUID(leader.metadata.topics["t"].topic_id)
    delete = _request(20, 6, timeout=timedelta(seconds=1), topics=(
        codec.entity(module, "DeleteTopicState", name=None, topic_id=topic_id),
        codec.entity(module, "DeleteTopicState", name="__consumer_offsets", topic_id=uuid.UUID(int=0)),
        codec.entity(module, "DeleteTopicState", name=None, topic_id=uuid.uuid4()),
    ))
    deleted = admin.handle(leader, 20, 6, delete)(None).responses
    assert [(d.name, d.error_code) for d in deleted] == [
        ("t", ErrorCode.none), ("__consumer_offsets", ErrorCode.invalid_request), (None, ErrorCode.unknown_topic_id)
    ]
    cluster.settle()
    assert all("t" not in c.metadata.topics for c in cluster.controllers.values())


def test_a_controlled_shutdown_ends_once_the_leaderships_moved_and_committed(cluster):
    leader = cluster.start_brokers()
    leader.create_topic("t", 3, 2)
    cluster.settle()
    cluster.beating.discard(1)
    first = leader.heartbeat(1, cluster.epochs[1], 0, False, True, cluster.sim.now)
    assert (first.is_fenced, first.should_shut_down) == (False, False)  # asked: not yet done

    def told() -> bool:
        return leader.heartbeat(1, cluster.epochs[1], 0, False, True, cluster.sim.now).should_shut_down

    cluster.run_until("broker 1 told to shut down", told)
    assert all(p.leader != 1 and 1 not in p.isr for p in leader.metadata.topics["t"].partitions)
    assert leader.node.high_watermark > leader.last_appended  # the moves are committed
