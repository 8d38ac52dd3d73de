"""Preflight checks for notebook 00: is this machine ready for the course?

The most common Kafka setup mistake is a broker that advertises an address its
clients cannot reach. A client uses the bootstrap address only to ask for metadata;
the metadata names every broker by its *advertised* listener, and from then on the
client connects there. A broker in Docker that advertises its container name
(``kafka:9092``) works for other containers and fails for a notebook on the host.
``advertised_listeners()`` fetches the metadata and tries every advertised address.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from dataclasses import dataclass
from typing import cast

from confluent_kafka.admin import AdminClient

from .i18n import _


@dataclass(frozen=True)
class Finding:
    ok: bool
    what: str
    detail: str

    def __str__(self) -> str:
        return f"{'✔' if self.ok else '✘'} {self.what}: {self.detail}"


def python_version(minimum: tuple[int, int] = (3, 11)) -> Finding:
    have = ".".join(map(str, sys.version_info[:3]))
    need = f"{minimum[0]}.{minimum[1]}"
    if sys.version_info[:2] >= minimum:
        return Finding(True, "Python", _("{have} (the course needs {need} or newer)").format(have=have, need=need))
    return Finding(False, "Python", _("{have} is too old; install Python {need} or newer").format(have=have, need=need))


def java_version() -> Finding:
    """Java is needed only by the Spark notebook (PySpark starts a JVM)."""
    try:
        done = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=20)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return Finding(False, "Java", _("not found; only the Spark notebook needs it (install a JDK 17 or newer)"))
    first = (done.stderr or done.stdout).strip().splitlines()[:1]
    return Finding(done.returncode == 0, "Java", first[0] if first else _("java -version printed nothing"))


def tcp_error(host: str, port: int, timeout: float = 2.0) -> str | None:
    """None if a TCP connection to host:port opens, else why not, in words."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except socket.gaierror:
        return _("the name {host!r} does not resolve from this machine").format(host=host)
    except TimeoutError:
        return _("no answer from {host}:{port} within {timeout} s").format(host=host, port=port, timeout=timeout)
    except OSError as e:
        return _("{host}:{port} refused the connection ({reason})").format(host=host, port=port, reason=e.strerror or e)


def split_address(address: str) -> tuple[str, int]:
    host, _sep, port = address.strip().rpartition(":")
    return host.strip("[]"), int(port)


def bootstrap_reachable(bootstrap: str) -> Finding:
    errors = [f"{a}: {e}" for a in bootstrap.split(",") if (e := tcp_error(*split_address(a)))]
    if len(errors) < len(bootstrap.split(",")):
        return Finding(True, "bootstrap", _("{bootstrap} accepts connections").format(bootstrap=bootstrap))
    return Finding(False, "bootstrap", _("no bootstrap address accepts connections: {errors}. Is the broker running, "
                                         "and is this the port it listens on?").format(errors="; ".join(errors)))


def advertised_brokers(bootstrap: str, timeout: float = 10) -> dict[int, tuple[str, int]]:
    """Broker id -> advertised (host, port), from a Metadata request to the bootstrap address."""
    client = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    metadata = client.list_topics(timeout=timeout)
    # confluent-kafka's BrokerMetadata sets host = None in __init__, so its inferred type is None; it is a str
    return {b.id: (cast(str, b.host), b.port) for b in metadata.brokers.values()}


def check_advertised(brokers: dict[int, tuple[str, int]]) -> Finding:
    """Try every advertised address and explain the fix when one cannot be reached."""
    bad = {i: (h, p, e) for i, (h, p) in sorted(brokers.items()) if (e := tcp_error(h, p))}
    listing = ", ".join(_("{broker} at {host}:{port}").format(broker=i, host=h, port=p)
                        for i, (h, p) in sorted(brokers.items()))
    if not bad:
        return Finding(True, _("advertised listeners"),
                       _("every broker is reachable where it says it is ({listing})").format(listing=listing))
    problems = "; ".join(_("broker {broker} advertises {host}:{port}, but {error}").format(broker=i, host=h, port=p,
                                                                                          error=e)
                         for i, (h, p, e) in bad.items())
    return Finding(False, _("advertised listeners"), _(
        "{problems}. The bootstrap address answered, so the broker runs; but clients connect to the "
        "advertised address after their first request, and this one does not work from here. "
        "Fix the broker, not the client: set advertised.listeners (KAFKA_ADVERTISED_LISTENERS in "
        "Docker) to a host:port this machine can reach, e.g. PLAINTEXT://localhost:9092. If containers "
        "must reach it too, give the broker two listeners, one advertised as the container name for "
        "them and one as localhost for the host, and map both in listener.security.protocol.map.").format(
            problems=problems))


def advertised_listeners(bootstrap: str) -> Finding:
    try:
        brokers = advertised_brokers(bootstrap)
    except Exception as e:  # noqa: BLE001 - any failure here is the finding
        return Finding(False, "metadata",
                       _("the bootstrap address did not answer a Metadata request: {error}").format(error=e))
    return check_advertised(brokers)


def run(bootstrap: str, *, need_java: bool = False) -> list[Finding]:
    """Run every preflight check, print one line each, and return the findings."""
    findings = [python_version(), java_version(), bootstrap_reachable(bootstrap)]
    if findings[-1].ok:
        findings.append(advertised_listeners(bootstrap))
    for finding in findings:
        print(finding)
    blocking = [f for f in findings if not f.ok and (f.what != "Java" or need_java)]
    print(_("Ready for the course.") if not blocking
          else _("{count} problem(s) to fix before you go on.").format(count=len(blocking)))
    return findings
