"""A cluster the course may lock down: logins (SASL), encryption (TLS) and ACLs.

Notebook 08b and lab 08b change a cluster's security, which nobody should try on the
course's everyday cluster, let alone a company's. ``secured_cluster()`` finds one made
for it, with the same two listeners and the same administrator wherever it runs:

* next to the embedded minikafka, a second one-broker minikafka started here, with a
  ``SASL_PLAINTEXT`` and a ``SASL_SSL`` listener, the standard authorizer, and a wire
  tap (``kafka_course.wiretap``) in front of each listener, so a cell can show what
  someone on the network would read;
* next to the docker compose cluster, the ``kafka-secure`` service of the compose
  file's ``security`` profile (``LOGIN`` on localhost:9096 is SASL_PLAINTEXT, ``SECURE``
  on localhost:9097 is SASL_SSL), whose certificate ``python -m kafka_course.secured``
  writes into ``security-certs/`` before ``docker compose --profile security up -d``;
* anywhere else, nothing: it prints one sentence and returns ``None``.

Both know the administrator ``admin`` (password ``admin-secret``, a PLAIN login kept in
the broker's settings, and a super user); every other user is a SCRAM credential made
with ``add_user`` (AlterUserScramCredentials), as on a real cluster.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .client_logs import client_log
from .connection import current_bootstrap, embedded_at
from .handle import MinikafkaOnly, compose_running
from .i18n import N_, _
from .preflight import tcp_error
from .wiretap import WireTap

if TYPE_CHECKING:
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import AdminClient

__all__ = ["ADMIN", "OK", "SecuredCluster", "secured_cluster", "try_create_topic", "try_read", "try_write",
           "visible_topics", "write_compose_certificates"]

ADMIN = ("admin", "admin-secret")
PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
COMPOSE_LISTENERS = {"SASL_PLAINTEXT": "localhost:9096", "SASL_SSL": "localhost:9097"}
COMPOSE_CERTS = Path(__file__).resolve().parents[1] / "security-certs"
KEY_PASSWORD = "course-key-secret"  # the broker's private key is stored encrypted with it
_PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
               f'username="{ADMIN[0]}" password="{ADMIN[1]}" user_{ADMIN[0]}="{ADMIN[1]}";')


@dataclass
class SecuredCluster:
    """The addresses of a secured cluster's listeners, the CA its clients trust, and its wire taps."""

    listeners: dict[str, str]  # security protocol -> bootstrap servers
    ca_location: Path
    where: str  # "embedded minikafka" or "docker compose"
    taps: dict[str, WireTap] = field(default_factory=dict)

    def __repr__(self) -> str:
        listening = ", ".join(_("{protocol} at {address}").format(protocol=p, address=a)
                              for p, a in self.listeners.items())
        return "<" + _("secured cluster ({where}): {listening}").format(where=_(self.where), listening=listening) + ">"

    def bootstrap(self, protocol: str = "SASL_SSL") -> str:
        return self.listeners[protocol]

    def login(self, user: str, password: str, protocol: str = "SASL_SSL", mechanism: str = "SCRAM-SHA-256",
              **more: Any) -> dict:
        """librdkafka (confluent-kafka) settings for ``user`` on the listener of ``protocol``."""
        settings = {"bootstrap.servers": self.listeners[protocol], "security.protocol": protocol,
                    "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password,
                    "logger": client_log}
        if protocol.endswith("SSL"):
            settings["ssl.ca.location"] = str(self.ca_location)
        return {**settings, **more}

    def admin_login(self, protocol: str = "SASL_SSL", **more: Any) -> dict:
        """The administrator's settings: a PLAIN login, sent only inside TLS by default."""
        return self.login(*ADMIN, protocol=protocol, mechanism="PLAIN", **more)

    def admin(self, user: str | None = None, password: str | None = None, **more: Any) -> AdminClient:
        """A confluent-kafka AdminClient logged in as ``user`` (the administrator by default)."""
        from confluent_kafka.admin import AdminClient
        settings = self.login(user, password or "", **more) if user else self.admin_login(**more)
        return AdminClient(settings)

    def add_user(self, user: str, password: str, mechanism: str = "SCRAM-SHA-256", iterations: int = 4096) -> None:
        """Create (or change) a SCRAM login, as ``kafka-configs.sh --entity-type users --alter`` does."""
        from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion
        info = ScramCredentialInfo(ScramMechanism[mechanism.replace("-", "_")], iterations)
        client = self.admin()  # kept until the answer comes: a collected client drops its requests
        done = client.alter_user_scram_credentials([UserScramCredentialUpsertion(user, info, password.encode())])
        done[user].result(timeout=15)

    def command_config(self, user: str, password: str, path: str | Path, protocol: str = "SASL_SSL",
                       mechanism: str = "SCRAM-SHA-256") -> Path:
        """Write the Java client settings file Kafka's tools take as ``--command-config``."""
        module = ("plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule")
        lines = [f"security.protocol={protocol}", f"sasl.mechanism={mechanism}",
                 f"sasl.jaas.config=org.apache.kafka.common.security.{module} required "
                 f'username="{user}" password="{password}";']
        if protocol.endswith("SSL"):
            lines += ["ssl.truststore.type=PEM", f"ssl.truststore.location={self.ca_location}"]
        path = Path(path)
        path.write_text("\n".join(lines) + "\n")
        path.chmod(0o600)  # it holds a password
        return path

    def seen(self, protocol: str) -> bytes:
        """Every byte clients sent to the listener of ``protocol`` so far (embedded minikafka only)."""
        if protocol not in self.taps:
            raise MinikafkaOnly("Only the embedded secured minikafka has a wire tap in front of its listeners.")
        return self.taps[protocol].seen()


_embedded: SecuredCluster | None = None


def secured_cluster(what: str | None = None) -> SecuredCluster | None:
    """The secured cluster next to the course's cluster, or ``None`` after a sentence saying why
    (``what``: the caller's words for what is skipped, "This cell" in the course's language by default)."""
    servers = current_bootstrap()
    what = what or _("This cell")
    if embedded_at(servers) is not None:
        return _start_embedded()
    host, port = COMPOSE_LISTENERS["SASL_SSL"].rsplit(":", 1)
    if compose_running() and tcp_error(host, int(port)) is None:
        if not (COMPOSE_CERTS / "ca.pem").exists():
            print(_("{what} needs {ca}, the CA the compose file's kafka-secure service uses: run `python -m "
                    "kafka_course.secured` before `docker compose --profile security up -d`.").format(
                        what=what, ca=COMPOSE_CERTS / "ca.pem"))
            return None
        return SecuredCluster(dict(COMPOSE_LISTENERS), COMPOSE_CERTS / "ca.pem", "docker compose")
    print(_("{what} changes a cluster's logins and ACLs, so it runs only on a cluster made for it: the embedded "
            "minikafka's secured twin, or the compose file's `security` profile (docker compose --profile security "
            "up -d). {servers} is neither, so it is skipped.").format(what=what, servers=servers))
    return None


def _start_embedded() -> SecuredCluster:
    global _embedded
    if _embedded is not None:
        return _embedded
    from minikafka.api import Cluster

    from .certificates import make_certificates
    certs = make_certificates(tempfile.mkdtemp(prefix="course-certs-"), key_password=KEY_PASSWORD)
    taps = {protocol: WireTap() for protocol in PROTOCOLS}
    config = {
        "listeners": ",".join(f"{p}://127.0.0.1:0" for p in PROTOCOLS),
        "advertised.listeners": ",".join(f"{p}://{taps[p].address}" for p in PROTOCOLS),  # every byte via a tap
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        **{f"listener.name.{p.lower()}.plain.sasl.jaas.config": _PLAIN_JAAS for p in PROTOCOLS},
        "authorizer.class.name": STANDARD_AUTHORIZER, "super.users": f"User:{ADMIN[0]}",
        "group.initial.rebalance.delay.ms": 0,  # as the course's other clusters: a lone consumer starts at once
        **certs.broker_settings(),
    }
    cluster = Cluster(config=config, in_memory=True).start()
    for protocol, tap in taps.items():
        tap.forward_to(cluster.bootstrap_servers_of(protocol))
    _embedded = SecuredCluster({p: taps[p].address for p in PROTOCOLS}, certs.ca_certificate,
                               N_("embedded minikafka"), taps)
    return _embedded


def write_compose_certificates(directory: str | Path = COMPOSE_CERTS) -> Path:
    """The course CA and the kafka-secure service's certificate, where the compose file mounts them."""
    from .certificates import make_certificates
    certs = make_certificates(directory, hosts=("localhost", "127.0.0.1", "kafka-secure"), days=365,
                              key_password=KEY_PASSWORD)
    certs.broker_keystore.chmod(0o644)  # read by the container's own user; the key inside is encrypted
    return certs.directory


if __name__ == "__main__":  # python -m kafka_course.secured [DIRECTORY]
    out = write_compose_certificates(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("COURSE_CERTS",
                                                                                             COMPOSE_CERTS))
    print(f"Wrote ca.pem and broker.pem into {out}: `docker compose --profile security up -d` can start kafka-secure.")


# -- trying what a login may do: "OK", or the error Kafka answered ------------------------------------
OK = "OK"
_WAIT = 10  # seconds an action may take before it counts as failed
_REFUSED_LOGIN = ("SASL_AUTHENTICATION_FAILED", "SSL_HANDSHAKE_FAILED")


def _error_name(error: KafkaError) -> str:
    from confluent_kafka import KafkaError
    if error.code() == KafkaError._AUTHENTICATION:  # librdkafka's name for a refused login
        return "SASL_AUTHENTICATION_FAILED"
    if error.code() == KafkaError._SSL:
        return "SSL_HANDSHAKE_FAILED"
    return error.name()


def try_write(settings: dict, topic: str, value: bytes = b"probe") -> str:
    """Produce one record with ``settings`` (a login): ``"OK"`` or the name of the error."""
    import time

    from confluent_kafka import Producer
    errors: list = []
    producer = Producer({**settings, "error_cb": errors.append, "message.timeout.ms": _WAIT * 1000})
    results: list = []
    producer.produce(topic, value, on_delivery=lambda err, msg: results.append(err))
    deadline = time.monotonic() + _WAIT
    while not results and time.monotonic() < deadline:
        producer.flush(0.2)
        refused = [e for e in errors if _error_name(e) in _REFUSED_LOGIN]
        if refused:  # librdkafka would retry the login until the timeout: the answer is already known
            return _error_name(refused[0])
    if results:
        return OK if results[0] is None else _error_name(results[0])
    return _error_name(errors[0]) if errors else "_TIMED_OUT"


def try_read(settings: dict, topic: str, group: str) -> str:
    """Read one record of ``topic`` as a member of ``group``: ``"OK"`` or the name of the error."""
    import time

    from confluent_kafka import Consumer
    errors: list = []
    consumer = Consumer({**settings, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "error_cb": errors.append})
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + _WAIT
        while time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            error = None if msg is None else msg.error()
            if msg is not None and error is None:
                return OK
            if error is not None and not error.code() < 0:  # the broker's answer, not a local event
                return _error_name(error)
            refused = [e for e in errors if _error_name(e) in _REFUSED_LOGIN or e.code() >= 0]
            if refused:
                return _error_name(refused[0])
        return "_TIMED_OUT"
    finally:
        consumer.close()


def try_create_topic(settings: dict, topic: str, partitions: int = 1) -> str:
    """Create ``topic`` with ``settings`` (a login): ``"OK"`` or the name of the error."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic
    client = AdminClient({**settings})
    try:
        client.create_topics([NewTopic(topic, partitions, 1)], request_timeout=_WAIT)[topic].result(_WAIT)
        return OK
    except KafkaException as e:
        return _error_name(e.args[0])


def visible_topics(settings: dict) -> list[str]:
    """The topics ``settings`` (a login) may see in Metadata: those it may DESCRIBE."""
    from confluent_kafka.admin import AdminClient
    client = AdminClient({**settings})
    return sorted(t for t in client.list_topics(timeout=_WAIT).topics if not t.startswith("__"))
