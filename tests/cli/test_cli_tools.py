"""The command-line tools work like Kafka's scripts, and errors read as sentences."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time


def mk(*args, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "minikafka.cli.main", *args], input=stdin, capture_output=True,
                          text=True, timeout=timeout)


def test_topics_create_list_describe_alter_delete(bootstrap):
    b = ["--bootstrap-server", bootstrap]
    r = mk("topics", *b, "--create", "--topic", "orders", "--partitions", "3", "--config", "retention.ms=60000")
    assert r.returncode == 0, r.stderr
    assert "orders" in mk("topics", *b, "--list").stdout.split()
    desc = mk("topics", *b, "--describe", "--topic", "orders").stdout
    assert "PartitionCount: 3" in desc and "retention.ms=60000" in desc and desc.count("Leader: 1") == 3
    assert mk("topics", *b, "--alter", "--topic", "orders", "--partitions", "5").returncode == 0
    assert "PartitionCount: 5" in mk("topics", *b, "--describe", "--topic", "orders").stdout
    assert mk("topics", *b, "--delete", "--topic", "orders").returncode == 0
    assert "orders" not in mk("topics", *b, "--list").stdout.split()


def test_topics_errors_are_sentences(bootstrap):
    b = ["--bootstrap-server", bootstrap]
    mk("topics", *b, "--create", "--topic", "dup")
    r = mk("topics", *b, "--create", "--topic", "dup")
    assert r.returncode != 0 and "already exists" in r.stderr and "Traceback" not in r.stderr
    r = mk("topics", *b, "--create", "--topic", "rf", "--replication-factor", "3")
    assert r.returncode != 0 and "Replication factor 3" in r.stderr and "Traceback" not in r.stderr
    r = mk("topics", *b, "--create", "--topic", "bad name")
    assert r.returncode != 0 and "letters, digits" in r.stderr


def test_unreachable_broker_is_explained():
    r = mk("topics", "--bootstrap-server", "127.0.0.1:1", "--create", "--topic", "x",
           "--partitions", "1", timeout=90)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "broker" in r.stderr.lower()


def test_console_producer_and_consumer_with_keys(bootstrap):
    b = ["--bootstrap-server", bootstrap]
    lines = "".join(f"user{i}:clicked {i}\n" for i in range(10))
    r = mk("console-producer", *b, "--topic", "clicks", "--property", "parse.key=true",
           "--property", "key.separator=:", stdin=lines)
    assert r.returncode == 0, r.stderr
    r = mk("console-consumer", *b, "--topic", "clicks", "--from-beginning", "--max-messages", "10",
           "--property", "print.key=true", "--property", "key.separator==", "--timeout-ms", "20000")
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split("\n")[:-1]) == sorted(f"user{i}=clicked {i}" for i in range(10))
    assert "Processed a total of 10 messages" in r.stderr


def test_console_producer_explains_bad_input_and_keeps_what_came_before(cluster, bootstrap):
    b = ["--bootstrap-server", bootstrap, "--topic", "typed", "--property", "parse.key=true"]
    r = mk("console-producer", *b, "--property", "key.separator=", stdin="a:1\n")
    assert r.returncode != 0 and "Traceback" not in r.stderr and "key.separator is empty" in r.stderr
    r = mk("console-producer", *b, "--property", "key.separator=:", stdin="a:1\nb:2\noops\nc:3\n")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "line 3 has no key separator" in r.stderr and "2 line(s) before it were sent" in r.stderr
    assert cluster.partition_offsets("typed")[0]["log_end_offset"] == 2
    r = mk("console-producer", *b, "--property", "key.separator=:", "--property", "ignore.error=true",
           stdin="d:4\nno key here\n")
    assert r.returncode == 0, r.stderr
    assert cluster.partition_offsets("typed")[0]["log_end_offset"] == 4


def test_dump_log_prints_batches(cluster, bootstrap):
    mk("console-producer", "--bootstrap-server", bootstrap, "--topic", "dumped", stdin="a\nb\nc\n")
    part_dir = cluster.data_dir / "dumped-0"
    r = mk("dump-log", str(part_dir), "--print-data-log")
    assert r.returncode == 0, r.stderr
    assert "baseOffset: 0" in r.stdout and "payload: a" in r.stdout


def test_dump_log_into_a_pipe_closed_early_stops_without_a_traceback(cluster, bootstrap):
    """``minikafka dump-log ... | head -2``: the reader goes away after two lines."""
    lines = "".join(f"{i}\n" for i in range(3000))
    mk("console-producer", "--bootstrap-server", bootstrap, "--topic", "piped", stdin=lines)
    proc = subprocess.Popen([sys.executable, "-m", "minikafka.cli.main", "dump-log", str(cluster.data_dir / "piped-0"),
                             "--print-data-log"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"Dumping")
    proc.stdout.close()  # as head does once it has its lines
    assert proc.wait(30) == 141
    assert proc.stderr.read() == b""


def test_serve_starts_and_answers(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "minikafka.cli.main", "serve", "--port", "0", "--in-memory"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        line = proc.stdout.readline()
        assert "listening on" in line
        address = line.split("listening on ")[1].split()[0]
        r = mk("topics", "--bootstrap-server", address, "--create", "--topic", "served")
        assert r.returncode == 0, r.stderr
    finally:
        proc.terminate()
        proc.wait(10)
    assert proc.returncode is not None


def test_serve_takes_its_broker_id_from_node_id(tmp_path):
    from confluent_kafka.admin import AdminClient
    proc = subprocess.Popen([sys.executable, "-m", "minikafka.cli.main", "serve", "--port", "0", "--in-memory",
                             "--brokers", "2", "--config", "node.id=5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        line = proc.stdout.readline()
        assert "(id 5, 6)" in line, line
        address = line.split("listening on ")[1].split()[0]
        brokers = AdminClient({"bootstrap.servers": address}).list_topics(timeout=10).brokers
        assert sorted(brokers) == [5, 6]
    finally:
        proc.terminate()
        proc.wait(10)


def test_serve_refuses_disagreeing_ids(tmp_path):
    r = subprocess.run([sys.executable, "-m", "minikafka.cli.main", "serve", "--port", "0", "--in-memory",
                        "--config", "node.id=2", "--config", "broker.id=3"], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 2 and "disagree" in r.stderr and "Traceback" not in r.stderr


def test_serve_reports_a_busy_port(cluster):
    port = cluster.bootstrap_servers.split(":")[1]
    started = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "minikafka.cli.main", "serve", "--port", port, "--in-memory"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "cannot listen" in r.stderr
    assert time.monotonic() - started < 20


def test_serve_reads_kafkas_own_server_properties(tmp_path):
    """The shipped config/server.properties is a single-node KRaft file real Kafka also reads:
    minikafka takes its listener, log.dirs (all of them), retention in hours and internal
    replication factors, and names the settings it has no part for."""
    from confluent_kafka.admin import AdminClient, ConfigResource
    from pathlib import Path

    shipped = (Path(__file__).resolve().parents[2] / "config" / "server.properties").read_text()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    props = tmp_path / "server.properties"
    props.write_text(shipped.replace("127.0.0.1:9092", f"127.0.0.1:{port}")
                     .replace("log.dirs=.minikafka-data", f"log.dirs={tmp_path / 'logs'},{tmp_path / 'more'}"))
    proc = subprocess.Popen([sys.executable, "-m", "minikafka.cli.main", "serve", str(props)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        notice, line = proc.stdout.readline(), proc.stdout.readline()
        assert notice.startswith("Not used by minikafka") and "process.roles" in notice and "log.dirs" not in notice
        assert f"listening on 127.0.0.1:{port} (data in {tmp_path / 'logs'},{tmp_path / 'more'})" in line, line
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"})
        resource = ConfigResource("BROKER", "1")
        configs = admin.describe_configs([resource])[resource].result(10)
        assert configs["log.retention.ms"].value == str(168 * 3_600_000)
        assert configs["num.partitions"].value == "3"
        assert mk("consumer-groups", "--bootstrap-server", f"127.0.0.1:{port}", "--list").returncode == 0
        r = mk("topics", "--bootstrap-server", f"127.0.0.1:{port}", "--create", "--topic", "kept")
        assert r.returncode == 0, r.stderr
        assert mk("topics", "--bootstrap-server", f"127.0.0.1:{port}", "--create", "--topic", "also").returncode == 0
        assert (tmp_path / "logs" / "kept-0").is_dir() and (tmp_path / "more" / "also-0").is_dir()  # both log.dirs
    finally:
        proc.terminate()
        proc.wait(10)


def test_internal_topics_take_their_replication_factor_from_the_settings(make_cluster):
    from kafka import KafkaConsumer, KafkaProducer
    cluster = make_cluster(brokers=3, config={"offsets.topic.replication.factor": 1})
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
    producer.send("t", b"x").get(10)
    consumer = KafkaConsumer("t", group_id="g", bootstrap_servers=cluster.bootstrap_servers,
                             auto_offset_reset="earliest", consumer_timeout_ms=5000)
    assert [m.value for m in consumer] == [b"x"]
    consumer.commit()
    consumer.close()
    producer.close()
    assert {len(cluster.partition_state("__consumer_offsets", p)["replicas"]) for p in range(50)} == {1}


def test_serve_explains_a_missing_file_or_an_unsupported_listener(tmp_path):
    r = mk("serve", str(tmp_path / "nothere.properties"))
    assert r.returncode == 2 and "cannot read" in r.stderr and "Traceback" not in r.stderr
    secure = tmp_path / "secure.properties"
    secure.write_text("listeners=SASL_SSL://:9092\n")  # Kafka's default mechanism is GSSAPI (Kerberos)
    r = mk("serve", str(secure))
    assert r.returncode == 2 and "sasl.enabled.mechanisms=GSSAPI" in r.stderr and "Traceback" not in r.stderr


def test_serve_takes_every_name_kafka_knows_and_warns_on_one_it_does_not(tmp_path):
    """A server.properties as kafka-python's test fixture renders it for Kafka 4 (a CONTROLLER
    listener advertised, replica and cleaner settings minikafka has no part for) starts a broker;
    a name Kafka does not know (confluent-kafka's test cluster has offsets.topic.min.isr) is named
    in a warning with the closest name Kafka knows, and the broker starts, as Kafka does."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    props = tmp_path / "server.properties"
    props.write_text("\n".join([
        "process.roles=broker,controller", "node.id=1", "controller.quorum.voters=1@127.0.0.1:1",
        f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{port + 1}",
        f"advertised.listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{port + 1}",
        "controller.listener.names=CONTROLLER",
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        f"log.dirs={tmp_path / 'logs'}", "replica.socket.timeout.ms=1000", "log.cleaner.enable=false",
        "offsets.commit.timeout.ms=500", "replica.fetch.max.bytes=1048576",
        "controller.quorum.election.timeout.ms=1000",
        "offsets.topic.min.isr=1", "num.partitions=2", ""]))
    proc = subprocess.Popen([sys.executable, "-m", "minikafka.cli.main", "serve", str(props)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        notice, line = proc.stdout.readline(), proc.stdout.readline()
        for name in ("log.cleaner.enable", "offsets.commit.timeout.ms", "controller.quorum.election.timeout.ms",
                     "process.roles"):
            assert name in notice, notice
        for name in ("replica.socket.timeout.ms", "replica.fetch.max.bytes"):  # the replica fetcher's own settings
            assert name not in notice, notice
        assert f"listening on 127.0.0.1:{port}" in line, line + proc.stderr.read()
        warning = proc.stderr.readline()
        assert "offsets.topic.min.isr (did you mean" in warning and warning.count("did you mean") == 1, warning
        r = mk("topics", "--bootstrap-server", f"127.0.0.1:{port}", "--create", "--topic", "started")
        assert r.returncode == 0, r.stderr
    finally:
        proc.terminate()
        proc.wait(30)
