"""Three confluent-kafka ShareConsumers on ONE partition all get records: a ShareFetch that
waits is woken when records arrive or are released, and none of the three is starved while
it keeps fetching. (A backlog written before the members join is another matter: the first
ShareFetch may acquire up to its MaxRecords, 500 for librdkafka, so one member can take all
300 records at once, as on Kafka, where batches are acquired whole up to that limit too.)"""

from __future__ import annotations

import pytest

from tests.share.helpers import SHARE_CONFIG, poll_together, share_consumer

pytestmark = pytest.mark.timeout(90)


def test_three_members_on_one_partition_each_get_records(make_cluster, topic_name):
    cluster = make_cluster(config=SHARE_CONFIG)
    bootstrap = cluster.bootstrap_servers
    cluster.create_topic(topic_name, partitions=1)
    consumers = [share_consumer(bootstrap, "fair", topic_name) for _ in range(3)]
    pollers = poll_together(cluster, topic_name, consumers, 300)
    counts = [len(got) for got in pollers.got]
    assert sorted(o for got in pollers.got for o, _ in got) == list(range(300)), "each record exactly once"
    assert min(counts) >= 20, f"a member was starved: {counts}"
    assert not pollers.errors

