"""``minikafka configs`` describes and changes settings the way kafka-configs.sh does, against
a real broker, and its mistakes are sentences."""

from __future__ import annotations

import subprocess
import sys

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource

from kafka_course.tools.configs import main
from kafka_course.tools.topics import main as topics


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def overrides(bootstrap: str, topic: str) -> dict[str, str]:
    """The topic's own settings, as the broker reports them to an AdminClient."""
    resource = ConfigResource("topic", topic)
    client = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the answer arrives
    entries = client.describe_configs([resource])[resource].result(10)
    return {k: e.value for k, e in entries.items() if e.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value}


@pytest.fixture
def orders(bootstrap, capsys):
    topics(["--bootstrap-server", bootstrap, "--create", "--topic", "orders", "--partitions", "3",
            "--config", "retention.ms=60000", "--config", "segment.ms=3600000"])
    capsys.readouterr()
    return "orders"


def test_describe_lists_a_topics_overrides_with_their_synonyms(capsys, bootstrap, orders):
    code, out, _ = run(capsys, "--bootstrap-server", bootstrap, "--entity-type", "topics", "--entity-name", orders,
                       "--describe")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "Dynamic configs for topic orders are:" and len(lines) == 3
    assert lines[1] == ("  retention.ms=60000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=60000, "
                        "DEFAULT_CONFIG:log.retention.ms=604800000}")
    assert lines[2].startswith("  segment.ms=3600000 ")
    code, out, _ = run(capsys, "--bootstrap-server", bootstrap, "--topic", orders, "--describe", "--all")
    assert code == 0 and out.startswith("All configs for topic orders are:")
    assert "  cleanup.policy=delete sensitive=false" in out and len(out.splitlines()) > 10


def test_alter_sets_and_deletes_only_the_named_settings(capsys, bootstrap, orders):
    code, out, _ = run(capsys, "--bootstrap-server", bootstrap, "--topic", orders, "--alter",
                       "--add-config", "retention.ms=1209600000,cleanup.policy=[compact,delete]",
                       "--add-config", "max.message.bytes=2097152", "--delete-config", "segment.ms")
    assert code == 0 and out == "Completed updating config for topic orders.\n"
    assert overrides(bootstrap, orders) == {"retention.ms": "1209600000", "cleanup.policy": "compact,delete",
                                            "max.message.bytes": "2097152"}
    code, _, _ = run(capsys, "--bootstrap-server", bootstrap, "--entity-type", "topics", "--entity-name", orders,
                     "--alter", "--delete-config", "cleanup.policy,max.message.bytes")
    assert code == 0 and overrides(bootstrap, orders) == {"retention.ms": "1209600000"}


def test_broker_settings_are_described_and_changed(capsys, bootstrap):
    code, out, _ = run(capsys, "--bootstrap-server", bootstrap, "--broker", "1", "--alter",
                       "--add-config", "log.retention.ms=3600000")
    assert code == 0 and out == "Completed updating config for broker 1.\n"
    code, out, _ = run(capsys, "--bootstrap-server", bootstrap, "--entity-type", "brokers", "--entity-name", "1",
                       "--describe", "--all")
    assert code == 0 and out.startswith("All configs for broker 1 are:")
    assert "  log.retention.ms=3600000 sensitive=false" in out


@pytest.mark.parametrize("argv, sentence", [
    (["--topic", "nope", "--describe"], "does not exist"),
    (["--topic", "nope", "--alter", "--add-config", "retention.ms=1"], "Topic 'nope' does not exist."),
    (["--topic", "orders", "--alter", "--add-config", "retention.ms=abc"], "retention.ms must be a whole number"),
    (["--topic", "orders", "--alter", "--add-config", "no.such.setting=1"], "unknown topic setting"),
    (["--topic", "orders", "--alter", "--add-config", "retention.ms"], "must look like name=value"),
    (["--topic", "orders", "--alter"], "--alter needs --add-config"),
    (["--topic", "orders", "--alter", "--add-config", "retention.ms=1", "--delete-config", "retention.ms"],
     "both added and deleted"),
    (["--describe"], "Say what to configure"),
    (["--topic", "orders", "--broker", "1", "--describe"], "Name one entity"),
    (["--entity-name", "orders", "--describe"], "needs --entity-type"),
])
def test_mistakes_are_one_sentence_and_change_nothing(capsys, bootstrap, orders, argv, sentence):
    code, _, err = run(capsys, "--bootstrap-server", bootstrap, *argv)
    assert code == 1 and sentence in err and err.count("\n") == 1 and err.startswith("Error: ")
    assert overrides(bootstrap, orders) == {"retention.ms": "60000", "segment.ms": "3600000"}
    topics(["--bootstrap-server", bootstrap, "--list"])
    assert "nope" not in capsys.readouterr().out.split()  # asking about a topic never creates it


def test_the_minikafka_command_runs_it(bootstrap, orders):
    done = subprocess.run([sys.executable, "-m", "minikafka.cli.main", "configs", "--bootstrap-server", bootstrap,
                           "--topic", orders, "--describe"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("Dynamic configs for topic orders are:")


def test_an_absent_broker_is_one_sentence(capsys):
    code, _, err = run(capsys, "--bootstrap-server", "127.0.0.1:1", "--topic", "orders", "--describe")
    assert code == 1 and err.startswith("Error: Cannot reach a Kafka broker at 127.0.0.1:1: is one running there?")
    assert err.count("\n") == 1


# -- users: SCRAM credentials (KIP-554), as kafka-configs.sh --entity-type users -----------------------
def test_users_get_scram_credentials_that_describe_shows_without_the_password(capsys, bootstrap):
    base = ["--bootstrap-server", bootstrap, "--entity-type", "users"]
    code, out, _ = run(capsys, *base, "--entity-name", "alice", "--alter", "--add-config",
                       "SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-secret]")
    assert code == 0 and out == "Completed updating config for user alice.\n"
    code, out, _ = run(capsys, *base, "--entity-name", "alice", "--describe")
    assert code == 0 and out == ("SCRAM credential configs for user-principal 'alice' are "
                                 "SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n")
    assert "alice-secret" not in out
    code, out, _ = run(capsys, *base, "--entity-name", "alice", "--alter", "--delete-config", "SCRAM-SHA-512")
    assert code == 0
    code, out, _ = run(capsys, *base, "--describe")
    assert out == "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192\n"


def test_users_mistakes_are_sentences(capsys, bootstrap):
    base = ["--bootstrap-server", bootstrap, "--entity-type", "users", "--entity-name", "bob", "--alter"]
    cases = {("--add-config", "SCRAM-SHA-256=[iterations=8192]"): "SCRAM-SHA-256 needs a password",
             ("--add-config", "retention.ms=1"): "its SCRAM credentials (SCRAM-SHA-256 or SCRAM-SHA-512), not",
             ("--add-config", "SCRAM-SHA-256=[iterations=10,password=p]"): "Too few iterations",
             ("--delete-config", "SCRAM-SHA-256"): "does not exist"}
    for argv, sentence in cases.items():
        code, _, err = run(capsys, *base, *argv)
        assert code == 1 and sentence in err and "Traceback" not in err, (argv, err)
    code, out, _ = run(capsys, "--bootstrap-server", bootstrap, "--entity-type", "users", "--entity-name", "bob",
                       "--describe")
    assert code == 0 and out == "No SCRAM credentials for user-principal 'bob'.\n"
