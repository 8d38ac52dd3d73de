"""The cluster-operation tools (reassign-partitions, leader-election, log-dirs,
metadata-quorum) run as commands, like Kafka's scripts, against an embedded three-broker
cluster: the data really moves, and every mistake reads as a sentence."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.admin.helpers import log_files, produce, read_partitions, three_brokers, wait_for

MINIKAFKA = str(Path(sys.executable).parent / "minikafka")


def tool(cluster, name: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    done = subprocess.run([MINIKAFKA, name, "--bootstrap-server", cluster.bootstrap_servers, *args],
                          capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def after(text: str, heading: str) -> str:
    lines = text.splitlines()
    return next(line for line in lines[lines.index(heading) + 1:] if line.strip())


def test_generate_execute_verify_moves_the_data_to_the_new_brokers(make_cluster, tmp_path):
    cluster = three_brokers(make_cluster, tmp_path)
    cluster.create_topic("orders", 3, 1)  # partition p on broker p+1
    values = {p: produce(cluster, "orders", 20, partition=p, prefix=f"p{p}-") for p in range(3)}
    (tmp_path / "topics.json").write_text(json.dumps({"topics": [{"topic": "orders"}], "version": 1}))
    gen = tool(cluster, "reassign-partitions", "--generate", "--topics-to-move-json-file",
               str(tmp_path / "topics.json"), "--broker-list", "2,3")
    assert gen.returncode == 0, gen.stderr
    current = json.loads(after(gen.stdout, "Current partition replica assignment"))
    assert [p["replicas"] for p in current["partitions"]] == [[1], [2], [3]]
    proposed = json.loads(after(gen.stdout, "Proposed partition reassignment configuration"))
    assert {p["replicas"][0] for p in proposed["partitions"]} <= {2, 3} and len(proposed["partitions"]) == 3
    plan = {"version": 1, "partitions": [{"topic": "orders", "partition": p, "replicas": [2, 3]} for p in range(3)]}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    run = tool(cluster, "reassign-partitions", "--execute", "--reassignment-json-file", str(tmp_path / "plan.json"),
               "--throttle", "50000000")
    assert run.returncode == 0, run.stderr
    assert "Successfully started partition reassignments for orders-0,orders-1,orders-2" in run.stdout
    assert json.loads(after(run.stdout, "Current partition replica assignment")) == current  # for a rollback

    def verified() -> bool:
        out = tool(cluster, "reassign-partitions", "--verify", "--reassignment-json-file", str(tmp_path / "plan.json"))
        cleared = "Clearing broker-level throttles on brokers 1,2,3" in out.stdout
        return out.stdout.count("is completed.") == 3 and cleared
    assert wait_for(verified, timeout=30, interval=0.5)
    assert [cluster.partition_state("orders", p)["replicas"] for p in range(3)] == [[2, 3]] * 3
    assert not any(d.is_dir() for b in (1,) for root in cluster.broker_log_dirs(b) for d in root.glob("orders-*"))
    rate = cluster.call(lambda: cluster.broker(2).config["follower.replication.throttled.rate"])
    assert rate == 2**63 - 1  # --verify removed the throttle once everything had moved
    cluster.stop_broker(2)  # broker 3, a new replica of every partition, serves it all alone
    assert read_partitions(cluster.bootstrap_servers, "orders", 3) == values


def test_a_move_in_progress_is_listed_and_cancelled(make_cluster, tmp_path):
    cluster = three_brokers(make_cluster, tmp_path)
    cluster.create_topic("orders", 1, 2)
    cluster.stop_broker(3)  # the new replica cannot catch up while its broker is down
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [3, 1]}]}))
    assert tool(cluster, "reassign-partitions", "--execute", "--reassignment-json-file", str(plan)).returncode == 0
    listed = tool(cluster, "reassign-partitions", "--list").stdout
    assert "orders-0: replicas: 3,1,2. adding: 3. removing: 2." in listed
    again = tool(cluster, "reassign-partitions", "--execute", "--reassignment-json-file", str(plan))
    assert again.returncode == 1 and "Use --additional" in again.stderr
    verify = tool(cluster, "reassign-partitions", "--verify", "--reassignment-json-file", str(plan)).stdout
    assert "Reassignment of partition orders-0 is still in progress." in verify and "Clearing" not in verify
    cancel = tool(cluster, "reassign-partitions", "--cancel", "--reassignment-json-file", str(plan))
    assert "Successfully cancelled partition reassignment(s) for: orders-0" in cancel.stdout
    assert cluster.partition_state("orders")["replicas"] == [1, 2]
    assert "No partition reassignments found." in tool(cluster, "reassign-partitions", "--list").stdout


def test_reassign_partitions_mistakes_are_sentences(make_cluster, tmp_path):
    cluster = make_cluster(brokers=3)
    cluster.create_topic("orders", 1, 2)
    bad_json, plan = tmp_path / "bad.json", tmp_path / "plan.json"
    bad_json.write_text("{not json")
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [1, 7]}]}))
    cases = [(["--execute", "--reassignment-json-file", str(tmp_path / "missing.json")], "Cannot read"),
             (["--execute", "--reassignment-json-file", str(bad_json)], "is not valid JSON"),
             (["--execute", "--reassignment-json-file", str(plan)], "orders-0: INVALID_REPLICA_ASSIGNMENT"),
             (["--execute"], "--execute needs --reassignment-json-file"),
             (["--generate", "--topics-to-move-json-file", str(bad_json), "--broker-list", "1"], "is not valid JSON")]
    for args, sentence in cases:
        done = tool(cluster, "reassign-partitions", *args)
        assert done.returncode == 1 and sentence in done.stderr, (args, done.stderr)


def test_leader_election_preferred_and_unclean(make_cluster, tmp_path):
    cluster = make_cluster(brokers=3)
    cluster.create_topic("orders", 1, 3)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "orders", "partition": 0,
                                                               "replicas": [3, 1, 2]}]}))
    assert tool(cluster, "reassign-partitions", "--execute", "--reassignment-json-file", str(plan)).returncode == 0
    assert wait_for(lambda: cluster.partition_state("orders")["replicas"] == [3, 1, 2])
    done = tool(cluster, "leader-election", "--election-type", "PREFERRED", "--topic", "orders", "--partition", "0")
    assert done.returncode == 0 and "Successfully completed leader election (PREFERRED) for partitions orders-0" \
        in done.stdout
    assert cluster.partition_state("orders")["leader"] == 3
    again = tool(cluster, "leader-election", "--election-type", "preferred", "--all-topic-partitions")
    assert again.returncode == 0 and again.stdout == "Valid replica already elected for partitions orders-0\n"
    cluster.create_topic("ledger", 1, 2)  # [1, 2]
    cluster.stop_broker(2)
    cluster.stop_broker(1)  # offline: its only in-sync replica is down
    cluster.start_broker(2)
    parts = tmp_path / "parts.json"
    parts.write_text(json.dumps({"partitions": [{"topic": "ledger", "partition": 0},
                                                {"topic": "nope", "partition": 0}]}))
    done = tool(cluster, "leader-election", "--election-type", "UNCLEAN", "--path-to-json-file", str(parts))
    assert "Successfully completed leader election (UNCLEAN) for partitions ledger-0" in done.stdout
    assert "for partition: nope-0: UNKNOWN_TOPIC_OR_PARTITION" in done.stdout
    assert done.returncode == 1 and "1 replica(s) could not be elected" in done.stderr
    assert cluster.partition_state("ledger")["leader"] == 2
    missing = tool(cluster, "leader-election", "--election-type", "PREFERRED", "--topic", "orders")
    assert missing.returncode == 1 and "--topic needs --partition" in missing.stderr


def test_log_dirs_describes_each_directory_in_kafkas_json(make_cluster, tmp_path):
    cluster = three_brokers(make_cluster, tmp_path)
    cluster.create_topic("orders", 2, 3)
    cluster.create_topic("other", 1, 1)
    produce(cluster, "orders", 12)
    assert wait_for(lambda: set(cluster.partition_state("orders")["log_end_offsets"].values()) == {12})
    done = tool(cluster, "log-dirs", "--describe", "--broker-list", "1,2", "--topic-list", "orders")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["Querying brokers for log directories information",
                         "Received log directory information from brokers 1,2"]
    answer = json.loads(lines[2])
    assert answer["version"] == 1 and [b["broker"] for b in answer["brokers"]] == [1, 2]
    for broker in answer["brokers"]:
        assert [d["logDir"] for d in broker["logDirs"]] == [str(d) for d in cluster.broker_log_dirs(broker["broker"])]
        found = {p["partition"]: (d["logDir"], p) for d in broker["logDirs"] for p in d["partitions"]}
        assert sorted(found) == ["orders-0", "orders-1"]  # --topic-list left "other" out
        for name, (root, p) in found.items():
            assert p["size"] == log_files(Path(root) / name) and p["offsetLag"] == 0 and p["isFuture"] is False
    unknown = tool(cluster, "log-dirs", "--describe", "--broker-list", "1,9")
    assert unknown.returncode == 1 and "do not exist from --broker-list: 9" in unknown.stderr


def test_metadata_quorum_status_and_replication(make_cluster):
    cluster = make_cluster(brokers=3)
    status = tool(cluster, "metadata-quorum", "describe", "--status").stdout
    fields = dict(line.split(":", 1) for line in status.splitlines())
    assert fields["LeaderId"].strip() == "1" and fields["ClusterId"].strip() == cluster.metadata.cluster_id
    assert [v["id"] for v in json.loads(fields["CurrentVoters"])] == [1, 2, 3]
    epoch = int(fields["LeaderEpoch"])
    cluster.stop_broker(1)
    cluster.create_topic("orders", 2, 2)  # metadata the stopped voter has not seen
    status = dict(line.split(":", 1) for line in tool(cluster, "metadata-quorum", "describe", "--status")
                  .stdout.splitlines())
    assert status["LeaderId"].strip() == "2" and int(status["LeaderEpoch"]) == epoch + 1
    assert int(status["MaxFollowerLag"]) > 0
    table = tool(cluster, "metadata-quorum", "describe", "--replication", "--human-readable").stdout.splitlines()
    assert table[0].split() == ["NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp",
                                "LastCaughtUpTimestamp", "Status"]
    rows = {line.split()[0]: line for line in table[1:]}
    assert rows["2"].endswith("Leader") and rows["3"].endswith("Follower") and "ms ago" in rows["1"]
    assert int(rows["1"].split()[3]) > 0 and int(rows["3"].split()[3]) == 0


def test_an_unreachable_cluster_is_a_sentence():
    done = subprocess.run([MINIKAFKA, "metadata-quorum", "--bootstrap-server", "127.0.0.1:1", "describe", "--status"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "Cannot reach a broker at 127.0.0.1:1" in done.stderr


def test_command_config_logs_the_tools_in(make_cluster, tmp_path):
    from tests.security.conftest import PLAIN_JAAS, STANDARD_AUTHORIZER
    cluster = make_cluster(config={"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN",
                                   "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
                                   "authorizer.class.name": STANDARD_AUTHORIZER, "super.users": "User:admin"},
                           in_memory=True)
    login = ('security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config='
             'org.apache.kafka.common.security.plain.PlainLoginModule required username="{}" password="{}";\n')
    admin, alice, wrong = tmp_path / "admin.properties", tmp_path / "alice.properties", tmp_path / "wrong.properties"
    admin.write_text(login.format("admin", "admin-secret"))
    alice.write_text(login.format("alice", "alice-secret"))
    wrong.write_text(login.format("admin", "not-the-password"))
    done = tool(cluster, "metadata-quorum", "--command-config", str(admin), "describe", "--status")
    assert done.returncode == 0 and "LeaderId:" in done.stdout, done.stderr
    refused = tool(cluster, "leader-election", "--command-config", str(alice), "--election-type", "PREFERRED",
                   "--all-topic-partitions")  # ElectLeaders needs ALTER on the cluster
    assert refused.returncode == 1 and "CLUSTER_AUTHORIZATION_FAILED" in refused.stderr, refused.stderr
    wrong_login = tool(cluster, "log-dirs", "--command-config", str(wrong), "--describe")
    assert wrong_login.returncode == 1 and "refused the login (Invalid username or password)" in wrong_login.stderr
