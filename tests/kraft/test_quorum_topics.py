"""Three controller processes own the topics: fake brokers register and heartbeat over TCP, an admin
request creates a topic every controller then holds, fencing moves leaderships, AlterPartition
is checked against the partition epoch, and a new leader after kill -9 still has it all."""

from __future__ import annotations

import subprocess
import sys
import threading
import uuid
from datetime import timedelta

import pytest

from minikafka.errors import ErrorCode
from minikafka.kraft.metadata_log import PARTITION_DIR
from minikafka.kraft.records import PARTITION_CHANGE, TOPIC_RECORD
from minikafka.protocol import codec
from tests.rawclient import RawClient

from .quorum import REPO, Quorum, wait_until

SESSION_MS = 3000  # generous: a loaded machine must not fence the brokers that do beat
BROKERS = (1, 2, 3)


class Heartbeats:
    """Fake brokers' heartbeat threads: every 200 ms to whichever controller is active."""

    def __init__(self, quorum: Quorum, epochs: dict[int, int]):
        self.quorum, self.epochs = quorum, epochs
        self.beating = set(epochs)
        self.fenced: dict[int, bool] = dict.fromkeys(epochs, True)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopping.wait(0.2):
            for broker in sorted(self.beating):
                for node in self.quorum.alive():
                    try:
                        answer = self.quorum.heartbeat(node, broker, self.epochs[broker], 1 << 30)
                    except OSError:
                        continue
                    if answer.error_code == ErrorCode.none:
                        self.fenced[broker] = answer.is_fenced
                        break

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(5)


@pytest.fixture
def quorum(tmp_path):
    q = Quorum(tmp_path, extra=("--broker-session-timeout-ms", str(SESSION_MS))).start()
    yield q
    q.stop()


def create_topics(quorum: Quorum, node: int, name: str, partitions: int, replication_factor: int):
    module = codec.request_module(19, 7)
    topic = codec.entity(
        module, "CreatableTopic", name=name, num_partitions=partitions, replication_factor=replication_factor,
        assignments=(), configs=(),
    )
    request = codec.make(codec.request_class(19, 7), topics=(topic,), timeout=timedelta(seconds=5), validate_only=False)
    with RawClient(f"127.0.0.1:{quorum.ports[node]}", timeout=10) as c:
        return c.request(request).topics[0]


def alter_partition(quorum: Quorum, node: int, broker: int, broker_epoch: int, topic_id: uuid.UUID,
                    leader_epoch: int, partition_epoch: int, isr: list[int]):
    module = codec.request_module(56, 3)
    partition = codec.entity(
        module, "PartitionData", partition_index=0, leader_epoch=leader_epoch, partition_epoch=partition_epoch,
        new_isr_with_epochs=tuple(codec.entity(module, "BrokerState", broker_id=b, broker_epoch=-1) for b in isr),
    )
    request = codec.make(
        codec.request_class(56, 3), broker_id=broker, broker_epoch=broker_epoch,
        topics=(codec.entity(module, "TopicData", topic_id=topic_id, partitions=(partition,)),),
    )
    with RawClient(f"127.0.0.1:{quorum.ports[node]}", timeout=10) as c:
        return c.request(request)


def alter_topic_config(quorum: Quorum, node: int, topic: str, name: str, value: str):
    module = codec.request_module(44, 1)
    config = codec.entity(module, "AlterableConfig", name=name, config_operation=0, value=value)
    resource = codec.entity(module, "AlterConfigsResource", resource_type=2, resource_name=topic, configs=(config,))
    request = codec.make(codec.request_class(44, 1), resources=(resource,), validate_only=False)
    with RawClient(f"127.0.0.1:{quorum.ports[node]}", timeout=10) as c:
        return c.request(request).responses[0]


def overrides(quorum: Quorum, node: int, topic: str) -> dict:
    found = [r.data["topic"]["overrides"] for r in quorum.records(node)
             if r.type == TOPIC_RECORD and r.data["topic"]["name"] == topic]
    return found[-1] if found else {}


def partitions(quorum: Quorum, node: int, topic: str) -> dict[int, dict]:
    """The newest committed-or-not state of each partition of ``topic`` in a controller's log."""
    out: dict[int, dict] = {}
    for r in quorum.records(node):
        if r.type == TOPIC_RECORD and r.data["topic"]["name"] == topic:
            out = {p["index"]: p for p in r.data["topic"]["partitions"]}
        elif r.type == PARTITION_CHANGE and r.data["topic"] == topic:
            out[r.data["partition"]["index"]] = r.data["partition"]
    return out


def test_the_quorum_owns_topics_fences_brokers_and_survives_its_leader(quorum):
    leader, _ = wait_until("a leader", lambda: quorum.leader())
    epochs = {b: quorum.register(leader, broker_id=b).broker_epoch for b in BROKERS}
    beats = Heartbeats(quorum, epochs)
    try:
        wait_until("every broker unfenced", lambda: not any(beats.fenced.values()))
        follower = next(n for n in quorum.ports if n != leader)
        assert create_topics(quorum, follower, "orders", 3, 3).error_code == ErrorCode.not_controller
        created = create_topics(quorum, leader, "orders", 3, 3)
        assert created.error_code == ErrorCode.none and created.num_partitions == 3
        assert created.replication_factor == 3
        for n in quorum.ports:  # answered only once committed: every controller holds it
            wait_until(f"controller {n} has the topic", lambda n=n: len(partitions(quorum, n, "orders")) == 3)
        assert [p["leader"] for p in partitions(quorum, leader, "orders").values()] == [1, 2, 3]
        dumped = subprocess.run(
            [sys.executable, "-m", "minikafka", "dump-log", "--cluster-metadata-decoder",
             str(quorum.log_dir(follower) / PARTITION_DIR)],
            capture_output=True, text=True, cwd=REPO, timeout=60,
        )
        assert '"type":"TOPIC_RECORD","data":{"type":"topic","topic":{"name":"orders"' in dumped.stdout

        assert alter_topic_config(quorum, leader, "orders", "retention.ms", "60000").error_code == ErrorCode.none
        assert alter_topic_config(quorum, leader, "orders", "retention.ms", "x").error_code == ErrorCode.invalid_config
        wait_until("a follower has it", lambda: overrides(quorum, follower, "orders") == {"retention.ms": 60000})

        ok = alter_partition(quorum, leader, 1, epochs[1], created.topic_id, 0, 0, [1, 2])
        answer = ok.topics[0].partitions[0]
        assert (answer.error_code, list(answer.isr), answer.partition_epoch) == (ErrorCode.none, [1, 2], 1)
        stale = alter_partition(quorum, leader, 1, epochs[1], created.topic_id, 0, 0, [1])
        assert stale.topics[0].partitions[0].error_code == ErrorCode.invalid_update_version
        old_leader = alter_partition(quorum, leader, 1, epochs[1], created.topic_id, -1, 1, [1])
        assert old_leader.topics[0].partitions[0].error_code == ErrorCode.fenced_leader_epoch
        stale_broker = alter_partition(quorum, leader, 1, epochs[1] + 1, created.topic_id, 0, 1, [1])
        assert stale_broker.error_code == ErrorCode.stale_broker_epoch

        beats.beating.discard(2)  # broker 2 goes silent: fenced, its leadership of partition 1 moves
        moved = wait_until(
            "partition 1 led by another broker",
            lambda: (p := partitions(quorum, follower, "orders")[1])["leader"] != 2 and p,
            timeout=SESSION_MS / 1000 + 10,
        )
        assert (moved["leader"], moved["leader_epoch"]) == (3, 1) and 2 not in moved["isr"]
        p0 = wait_until("broker 2 left the ISR of partition 0",
                        lambda: (p := partitions(quorum, follower, "orders")[0])["isr"] == [1] and p)
        back = alter_partition(quorum, leader, 1, epochs[1], created.topic_id, 0, p0["partition_epoch"], [1, 2])
        assert back.topics[0].partitions[0].error_code == ErrorCode.ineligible_replica  # 2 is fenced

        quorum.kill(leader)  # kill -9: no resignation
        new, _ = wait_until("a new leader", lambda: quorum.leader(), timeout=30)
        assert new != leader
        again = wait_until(
            "the new leader serves CreateTopics",
            lambda: (a := create_topics(quorum, new, "orders", 1, 1)).error_code != ErrorCode.not_controller and a,
        )
        assert again.error_code == ErrorCode.topic_already_exists  # it has the topic
        second = create_topics(quorum, new, "payments", 2, 2)
        assert second.error_code == ErrorCode.none  # placed over brokers 1 and 3, the unfenced ones
        assert all(set(p["replicas"]) == {1, 3} for p in partitions(quorum, new, "payments").values())
    finally:
        beats.stop()
