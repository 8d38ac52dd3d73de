"""The cluster metadata is a snapshot plus a log of changes (as KRaft keeps it): a change
appends one line, a restart replays both, and a line cut short by a crash is ignored."""

from __future__ import annotations

from minikafka.config import BrokerConfig
from minikafka.metadata import ClusterMetadata


def fresh(path) -> ClusterMetadata:
    meta = ClusterMetadata(BrokerConfig(), path)
    meta.brokers = {1: ("127.0.0.1", 1), 2: ("127.0.0.1", 2)}
    return meta


def state(meta: ClusterMetadata) -> dict:
    return {name: (t.topic_id, [(p.replicas, p.leader, p.isr, p.leader_epoch) for p in t.partitions], t.overrides)
            for name, t in meta.topics.items()}


def test_changes_survive_a_restart(tmp_path):
    path = tmp_path / "cluster-metadata.json"
    meta = fresh(path)
    for i in range(20):
        meta.add_topic(meta.plan_topic(f"t{i}", 2, 2))
    meta.remove_topic("t3")
    t5 = meta.topics["t5"]
    t5.partitions[1].leader, t5.partitions[1].isr, t5.partitions[1].leader_epoch = 1, [1], 4
    meta.partition_changed("t5", t5.partitions[1])
    t7 = meta.topics["t7"]
    t7.overrides["retention.ms"] = 1000
    meta.topic_changed(t7)
    ids = [meta.next_producer_id() for _ in range(3)]
    meta.add_topic(meta.plan_topic("t3", 1, 1))  # the same name again: a new topic id
    before = state(meta)
    meta.close()
    again = fresh(path)
    assert state(again) == before
    assert again.next_producer_id() > max(ids)  # ids are never handed out twice


def test_a_change_costs_a_line_not_a_rewrite(tmp_path):
    path = tmp_path / "cluster-metadata.json"
    meta = fresh(path)
    for i in range(200):
        meta.add_topic(meta.plan_topic(f"t{i}", 1, 1))
    snapshot = path.stat().st_size
    log_size = meta.journal_path.stat().st_size
    meta.add_topic(meta.plan_topic("one-more", 1, 1))
    assert path.stat().st_size == snapshot  # the snapshot was not rewritten
    assert 0 < meta.journal_path.stat().st_size - log_size < 400


def test_the_log_is_folded_into_a_new_snapshot_when_it_grows(tmp_path):
    path = tmp_path / "cluster-metadata.json"
    meta = fresh(path)
    meta.add_topic(meta.plan_topic("busy", 1, 2))
    info = meta.topics["busy"].partitions[0]
    for epoch in range(12_000):  # ~1.4 MB of partition changes
        info.leader_epoch = epoch
        meta.partition_changed("busy", info)
    assert meta.journal_path.stat().st_size < 1 << 20
    meta.close()
    assert fresh(path).topics["busy"].partitions[0].leader_epoch == 11_999


def test_a_line_cut_short_by_a_crash_is_ignored(tmp_path):
    path = tmp_path / "cluster-metadata.json"
    meta = fresh(path)
    meta.add_topic(meta.plan_topic("kept", 1, 1))
    meta.close()
    with meta.journal_path.open("a") as f:
        f.write('{"type":"topic","topic":{"name":"half')
    again = fresh(path)
    assert list(again.topics) == ["kept"]
    again.add_topic(again.plan_topic("after", 1, 1))  # the log goes on after the broken line
    again.close()
    assert sorted(fresh(path).topics) == ["after", "kept"]
