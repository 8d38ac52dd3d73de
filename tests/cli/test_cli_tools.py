"""The command-line tools work like Kafka's scripts, and errors read as sentences."""

from __future__ import annotations

import os
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
