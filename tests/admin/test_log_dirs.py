"""Several log directories per broker (Kafka's log.dirs): DescribeLogDirs with real sizes,
AlterReplicaLogDirs moving a replica's files to the other directory, and the errors of
both, through kafka-python's admin client."""

from __future__ import annotations

from kafka.errors import KafkaStorageError, LogDirNotFoundError, ReplicaNotAvailableError, UnknownTopicOrPartitionError

from tests.admin.helpers import log_files, produce, read_partitions, three_brokers, wait_for


def dirs_of(admin, broker: int) -> dict[str, dict]:
    """log dir -> {(topic, partition, is_future): (size, lag)} as DescribeLogDirs tells it."""
    answer = next(b for b in admin.describe_log_dirs(brokers=[broker]) if b["broker"] == broker)
    return {d["log_dir"]: {"error": d["error_code"],
                           "replicas": {(t["name"], p["partition_index"], p["is_future_key"]):
                                        (p["partition_size"], p["offset_lag"])
                                        for t in d["topics"] for p in t["partitions"]}}
            for d in answer["log_dirs"]}


def test_each_broker_spreads_its_replicas_over_its_log_dirs_and_reports_real_sizes(make_cluster, tmp_path, kafka_admin):
    cluster = three_brokers(make_cluster, tmp_path)
    cluster.create_topic("orders", 4, 3)
    for p in range(4):
        produce(cluster, "orders", 5 + p, partition=p)
    admin = kafka_admin(cluster)
    seen = dirs_of(admin, 2)
    roots = [str(d) for d in cluster.broker_log_dirs(2)]
    assert sorted(seen) == sorted(roots) and roots[0].endswith("a/broker-2") and roots[1].endswith("b/broker-2")
    per_dir = {d: sorted(p for (_, p, _) in v["replicas"]) for d, v in seen.items()}
    assert sorted(per_dir[roots[0]] + per_dir[roots[1]]) == [0, 1, 2, 3]
    assert len(per_dir[roots[0]]) == len(per_dir[roots[1]]) == 2  # the least-loaded directory gets the next one
    assert wait_for(lambda: cluster.partition_state("orders", 3)["log_end_offsets"][2] == 8)
    for root, info in dirs_of(admin, 2).items():
        assert info["error"] == 0
        for (topic, p, future), (size, lag) in info["replicas"].items():
            assert size == log_files(tmp_path / root / f"{topic}-{p}") > 0 and lag == 0 and not future


def test_alter_replica_log_dirs_moves_the_files_and_keeps_the_data(make_cluster, tmp_path, kafka_admin):
    cluster = three_brokers(make_cluster, tmp_path)
    cluster.create_topic("orders", 1, 3)
    values = produce(cluster, "orders", 30)
    admin = kafka_admin(cluster)
    before = dirs_of(admin, 1)
    source = next(d for d, v in before.items() if ("orders", 0, False) in v["replicas"])
    target = next(d for d in before if d != source)
    size = before[source]["replicas"][("orders", 0, False)][0]
    result = admin.alter_replica_log_dirs({("orders", 0, 1): target})
    assert [err.errno for err in result.values()] == [0]
    assert wait_for(lambda: ("orders", 0, False) in dirs_of(admin, 1)[target]["replicas"])
    after = dirs_of(admin, 1)
    assert ("orders", 0, False) not in after[source]["replicas"]
    assert after[target]["replicas"][("orders", 0, False)][0] == size
    assert not (tmp_path / source / "orders-0").exists() and (tmp_path / target / "orders-0").is_dir()
    more = produce(cluster, "orders", 5, prefix="after-move-")  # the moved replica (the leader) takes writes
    assert read_partitions(cluster.bootstrap_servers, "orders", 1)[0] == values + more


def test_alter_replica_log_dirs_errors(make_cluster, tmp_path, kafka_admin):
    (tmp_path / "not-a-dir").write_text("a file where a log directory should be")
    config = {"log.dirs": f"{tmp_path / 'a'},{tmp_path / 'not-a-dir'}"}
    cluster = make_cluster(brokers=3, config=config)
    cluster.create_topic("orders", 1, 2)  # replicas on brokers 1 and 2
    admin = kafka_admin(cluster)
    offline = str(tmp_path / "not-a-dir" / "broker-1")
    assert dirs_of(admin, 1)[offline]["error"] == KafkaStorageError.errno
    cases = {("orders", 0, 1): (str(tmp_path / "elsewhere"), LogDirNotFoundError),
             ("orders", 0, 2): (str(tmp_path / "not-a-dir" / "broker-2"), KafkaStorageError),
             ("orders", 0, 3): (str(tmp_path / "a" / "broker-3"), ReplicaNotAvailableError),
             ("nope", 0, 1): (str(tmp_path / "a" / "broker-1"), UnknownTopicOrPartitionError)}
    for replica, (path, error) in cases.items():
        assert list(admin.alter_replica_log_dirs({replica: path}).values()) == [error], (replica, path)


def test_a_broker_kept_in_memory_reports_one_virtual_log_dir_with_real_sizes(make_cluster, kafka_admin):
    """`minikafka serve --in-memory`: each broker answers with one log directory (a Kafka broker
    always has one) holding its replicas and their sizes in bytes; the volume's size is unknown (-1)."""
    cluster = make_cluster(brokers=2, in_memory=True)
    cluster.create_topic("orders", 2, 2)
    produce(cluster, "orders", 7, partition=0)
    admin = kafka_admin(cluster)
    assert wait_for(lambda: cluster.partition_state("orders", 0)["log_end_offsets"] == {1: 7, 2: 7})
    for broker in (1, 2):
        seen = dirs_of(admin, broker)
        assert list(seen) == [f"/in-memory/broker-{broker}"]
        replicas = seen[f"/in-memory/broker-{broker}"]["replicas"]
        assert sorted(replicas) == [("orders", 0, False), ("orders", 1, False)]
        assert replicas[("orders", 0, False)][0] > 7 * 10 and replicas[("orders", 1, False)] == (0, 0)
    answer = next(b for b in admin.describe_log_dirs(brokers=[1]) if b["broker"] == 1)
    assert (answer["log_dirs"][0]["total_bytes"], answer["log_dirs"][0]["usable_bytes"]) == (-1, -1)
