"""Share groups seen from the outside: ListGroups' group type, the course's consumer-groups
tool (--list, --list --type, --describe with --members and --state), and the share.*
group settings through IncrementalAlterConfigs/DescribeConfigs (kafka-configs.sh --entity-type groups)."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from kafka_course.tools.consumer_groups import main
from tests.groups.test_cli_consumer_groups import consume_and_commit, rows
from tests.share.helpers import SHARE_CONFIG, earliest, poll_one, produce_batches, share_consumer

pytestmark = pytest.mark.timeout(60)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_consumer_groups_tool_lists_and_describes_share_groups(capsys, make_cluster, topic_name):
    cluster = make_cluster(config=SHARE_CONFIG)
    bootstrap = cluster.bootstrap_servers
    earliest(bootstrap, "queue")
    produce_batches(bootstrap, topic_name, 5)
    consume_and_commit(bootstrap, "classic", topic_name, 1)
    consumer = share_consumer(bootstrap, "queue", topic_name, **{"max.poll.records": 1})
    try:
        poll_one(consumer)
        poll_one(consumer)  # accepts the first record, holds the second
        code, out, _ = run(capsys, "--bootstrap-server", bootstrap, "--list")
        assert code == 0 and {"classic", "queue"} <= set(out.split())
        code, out, _ = run(capsys, "--bootstrap-server", bootstrap, "--list", "--type", "--state")
        assert code == 0 and ["queue", "Share", "Stable"] in rows(out) and ["classic", "Classic", "Empty"] in rows(out)
        code, out, _ = run(capsys, "--bootstrap-server", bootstrap, "--describe", "--group", "queue")
        assert code == 0 and rows(out) == [["queue", topic_name, "0", "1", "4"]], "SPSO 1; 4 not yet accepted"
        code, out, _ = run(capsys, "--bootstrap-server", bootstrap, "--describe", "--group", "queue", "--members",
                           "--verbose")
        [member] = rows(out)
        assert code == 0 and member[-2:] == ["1", f"{topic_name}(0)"]
        code, out, _ = run(capsys, "--bootstrap-server", bootstrap, "--describe", "--group", "queue", "--state")
        assert code == 0 and rows(out)[0][-2:] == ["Stable", "1"]
    finally:
        consumer.close()
    code, out, _ = run(capsys, "--bootstrap-server", bootstrap, "--describe", "--group", "queue")
    assert code == 0 and "has no active members" in out
    code, _, err = run(capsys, "--bootstrap-server", bootstrap, "--describe", "--group", "nobody")
    assert code == 1 and "does not exist" in err


def alter(admin, group: str, name: str, value: str):
    entry = ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
    [future] = admin.incremental_alter_configs([ConfigResource(ResourceType.GROUP, group,
                                                               incremental_configs=[entry])]).values()
    return future


def test_share_group_settings_are_checked_described_and_kept_across_a_restart(make_cluster):
    cluster = make_cluster(config=SHARE_CONFIG)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    alter(admin, "g", "share.auto.offset.reset", "earliest").result(10)
    alter(admin, "g", "share.record.lock.duration.ms", "5000").result(10)
    for name, value, problem in (("share.auto.offset.reset", "middle", "one of latest, earliest"),
                                 ("share.record.lock.duration.ms", "100", "between 1000"),
                                 ("share.no.such.setting", "1", "unknown group setting")):
        with pytest.raises(Exception) as e:
            alter(admin, "g", name, value).result(10)
        assert e.value.args[0].name() == "INVALID_CONFIG" and problem in e.value.args[0].str()
    cluster.restart()
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    [future] = admin.describe_configs([ConfigResource(ResourceType.GROUP, "g")]).values()
    configs = future.result(10)
    assert configs["share.auto.offset.reset"].value == "earliest"
    assert configs["share.auto.offset.reset"].source == 8, "DYNAMIC_GROUP_CONFIG"
    assert configs["share.record.lock.duration.ms"].value == "5000"
    assert configs["share.session.timeout.ms"].value == "45000" and configs["share.session.timeout.ms"].is_default
