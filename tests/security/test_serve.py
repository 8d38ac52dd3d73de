"""``minikafka serve`` with Kafka's security settings from server.properties and --config."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

from .conftest import LIBRDKAFKA_LOG, PLAIN_JAAS, confluent, produce_one


def test_serve_opens_every_listener_of_server_properties(tmp_path, topic_name):
    props = tmp_path / "server.properties"
    props.write_text("listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0\n"
                     "controller.listener.names=CONTROLLER\n"
                     "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,"
                     "CONTROLLER:PLAINTEXT\n"
                     f"listener.name.sasl_plaintext.plain.sasl.jaas.config={PLAIN_JAAS}\n")
    proc = subprocess.Popen([sys.executable, "-m", "minikafka.cli.main", "serve", str(props), "--in-memory",
                             "--config", "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        line = proc.stdout.readline()
        found = re.search(r"listening on (\S+) \(PLAINTEXT\), (\S+) \(SASL_PLAINTEXT\) \(in memory\)", line)
        assert found, line  # the controller listener is minikafka's own business: not opened
        plaintext, sasl = found.groups()
        admin = AdminClient({"bootstrap.servers": plaintext, "logger": LIBRDKAFKA_LOG})
        upsert = UserScramCredentialUpsertion("gina", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),
                                              b"gina-secret")
        admin.alter_user_scram_credentials([upsert])["gina"].result(10)
        assert produce_one(confluent(sasl, "gina", "gina-secret", "SCRAM-SHA-256"), topic_name) == 0
        assert produce_one(confluent(sasl, "alice", "alice-secret", "PLAIN"), topic_name) == 1
    finally:
        proc.terminate()
        proc.wait(10)
