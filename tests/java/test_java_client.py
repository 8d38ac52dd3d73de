"""The official Java client (kafka-clients 4.3.0) against minikafka: producer, consumer with both
group protocols (and one joining a classic Python consumer's group, KIP-848's online migration),
admin client, transactions, fencing and a share consumer, each a scenario of
tests/java/Conformance.java run in its own JVM. Skipped, with one sentence, where Java or the
jars (``python -m tests.java.jars``, run by ``./course test``) are missing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.groups.helpers import KafkaPythonMember, wait_until
from tests.java.jars import CACHE, jars

SOURCE = Path(__file__).with_name("Conformance.java")
SCENARIOS = ["produce-consume-classic", "produce-consume-consumer", "admin", "transactions", "fencing", "share"]


@pytest.fixture(scope="module")
def classpath(tmp_path_factory) -> str:
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("Java 17 (javac and java) is not installed, so the Java client cannot run")
    found = jars()
    if not found:
        pytest.skip(f"the Java client's jars are not in {CACHE}: run `python -m tests.java.jars` (./course test does)")
    classes = tmp_path_factory.mktemp("java-classes")
    cp = ":".join(str(j) for j in found)
    done = subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", str(classes), str(SOURCE)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return f"{cp}:{classes}"


def run_scenario(classpath: str, cluster, scenario: str) -> None:
    done = subprocess.run(["java", "-cp", classpath, "Conformance", scenario, cluster.bootstrap_servers],
                          capture_output=True, text=True, timeout=150)
    verdict = [line for line in done.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert done.returncode == 0 and verdict and verdict[-1].startswith("PASS"), (
        "\n".join(verdict) or done.stdout[-2000:] + done.stderr[-2000:])


@pytest.mark.timeout(180)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_java_client(classpath, make_cluster, scenario):
    cluster = make_cluster(brokers=1, config={"group.initial.rebalance.delay.ms": 0})
    run_scenario(classpath, cluster, scenario)


@pytest.mark.timeout(180)
def test_the_java_client_commits_and_fetches_offsets_by_topic_id(classpath, make_cluster):
    """kafka-clients 4.3's consumer-protocol consumer (KIP-848) sends OffsetCommit v10 and OffsetFetch
    v10 (topics by id, Kafka 4.2) when the broker offers them (its classic consumer stays at v9): the
    group still reads, commits, and the admin client reads the committed offsets back."""
    cluster = make_cluster(brokers=1, config={"group.initial.rebalance.delay.ms": 0})
    run_scenario(classpath, cluster, "produce-consume-consumer")
    seen = cluster.dispatchers[cluster.node_ids[0]].versions
    assert seen[(8, 10)] > 0 and seen[(9, 10)] > 0, sorted(k for k in seen if k[0] in (8, 9))


@pytest.mark.timeout(180)
def test_the_java_share_consumer_renews_its_acquisition_lock(classpath, make_cluster):
    """kafka-clients 4.3's share consumer speaks ShareFetch/ShareAcknowledge v2 (Kafka 4.2) and, in
    explicit mode, renews a record's acquisition lock (KIP-1222) three times, holding it for twice
    the lock, then accepts it: only possible if every renewal restarted the lock."""
    cluster = make_cluster(brokers=1, config={"group.initial.rebalance.delay.ms": 0,
                                              "group.share.record.lock.duration.ms": 1500,
                                              "group.share.min.record.lock.duration.ms": 1000})
    run_scenario(classpath, cluster, "share-renew")
    seen = cluster.dispatchers[cluster.node_ids[0]].versions
    assert seen[(79, 2)] > 0, sorted(k for k in seen if k[0] in (78, 79))


def epochs(cluster, topic: str) -> tuple[list[int], list[int]]:
    """The producer epochs of a partition's transactional batches: (data batches, markers)."""
    async def read() -> tuple[list[int], list[int]]:
        part = cluster.brokers[cluster.node_ids[0]].partitions[topic, 0]
        headers = [h for h, _ in part.log.batches(0) if h.is_transactional]
        return [h.producer_epoch for h in headers if not h.is_control], [h.producer_epoch for h in headers
                                                                           if h.is_control]
    return cluster.run(read())


@pytest.mark.timeout(180)
@pytest.mark.parametrize("version", [2, 1])
def test_transaction_protocol_v2_bumps_the_epoch_at_each_transaction_end(classpath, make_cluster, version):
    """With transaction.version 2 finalized (KIP-890 part 2) the Java client adds partitions by writing
    and EndTxn v5 hands it a new epoch after every transaction, which the markers carry; with 1 it keeps
    one epoch. Either way offsets commit only with a commit and the zombie is fenced."""
    cluster = make_cluster(brokers=1, config={"group.initial.rebalance.delay.ms": 0, "transaction.version": version})
    run_scenario(classpath, cluster, "transactions-v2")
    data, markers = epochs(cluster, "java-v2-out")
    first = data[0]
    assert len(markers) == 4
    adds = sum(sum(cluster.request_counts(cluster.node_ids[0], api).values())
               for api in ("AddPartitionsToTxn", "AddOffsetsToTxn"))
    if version == 2:  # four transactions, each written with its own epoch and ended with the next one
        assert sorted(set(data)) == [first, first + 1, first + 2, first + 3]
        assert markers == [first + 1, first + 2, first + 3, first + 4]
        assert adds == 0  # Produce and TxnOffsetCommit added the partitions
    else:
        assert set(data) == {first} and markers == [first] * 4
        assert adds > 0


@pytest.mark.timeout(180)
def test_a_java_consumer_protocol_member_upgrades_a_classic_python_group(classpath, make_cluster):
    """KIP-848's online migration: Java's consumer (group.protocol=consumer) joins a group that a
    kafka-python consumer (classic) holds; the group is upgraded, they share the partitions, and
    when the Java member leaves the group is classic again with everything back to kafka-python."""
    cluster = make_cluster(brokers=1, config={"group.initial.rebalance.delay.ms": 0,
                                              "group.consumer.heartbeat.interval.ms": 500})
    cluster.create_topic("java-migration", partitions=4)
    old = KafkaPythonMember(cluster.bootstrap_servers, "java-migration", ["java-migration"])
    wait_until(lambda: len(old.assignment()) == 4, 30, "the classic member: every partition")
    run_scenario(classpath, cluster, "join-classic-group")
    wait_until(lambda: len(old.assignment()) == 4, 30, "the classic member takes every partition back")
    groups = cluster.broker().groups
    assert cluster.call(lambda: groups.consumer_groups.get("java-migration")) is None, "downgraded"
    old.stop()
    assert not old.errors
