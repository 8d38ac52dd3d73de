"""What the client tools share: the bootstrap option and ``--command-config`` (the client
settings file Kafka's scripts take, for logging in), ``name=value`` settings, and a
client's error turned into one sentence a person can act on."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from minikafka.api import explain, fail, parse_pairs

if TYPE_CHECKING:
    from confluent_kafka.admin import AdminClient

__all__ = ["add_bootstrap", "admin", "client_settings", "describe_client_error", "fail", "parse_pairs", "table",
           "wait_all"]

DEFAULT_BOOTSTRAP = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")


_command_config: dict[str, str] = {}  # from --command-config, for every client a tool makes


def add_bootstrap(parser: argparse.ArgumentParser) -> None:
    _command_config.clear()  # a new command line: no login left over from an earlier one in this process
    parser.add_argument("--bootstrap-server", default=DEFAULT_BOOTSTRAP, metavar="HOST:PORT",
                        help=f"broker(s) to connect to (default: $KAFKA_BOOTSTRAP_SERVERS or {DEFAULT_BOOTSTRAP})")
    parser.add_argument("--command-config", metavar="FILE", type=_load_command_config,
                        help="client settings as Kafka's tools take them (security.protocol, sasl.*, ssl.*)")


def _load_command_config(path: str) -> str:
    from minikafka.api import ConfigError

    from .client_config import read
    try:
        settings = read(path)
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    _command_config.clear()
    _command_config.update(settings)
    return path


def client_settings(bootstrap: str, **extra: object) -> dict:
    """librdkafka settings for a tool's client: the address, ``--command-config``'s login, ``extra``."""
    return {"bootstrap.servers": bootstrap, **_command_config, **extra}


def _unreachable() -> set[int]:
    from confluent_kafka import KafkaError
    return {KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN, KafkaError._TIMED_OUT}


def describe_client_error(exc: BaseException) -> str:
    """A sentence for an error raised by confluent-kafka or kafka-python."""
    err = exc.args[0] if exc.args else None
    code = getattr(err, "code", None)
    if err is not None and callable(code):  # confluent_kafka.KafkaError
        value, text = code(), err.str()
        if value >= 0:
            return f"{explain(value)} ({text})"
        if value in _unreachable():
            return f"Cannot reach a broker: {text}. Is one running at the bootstrap address?"
        return text
    return str(exc) or type(exc).__name__


def admin(bootstrap: str) -> AdminClient:
    """An AdminClient whose own log lines are silenced: a problem is reported once, as a sentence."""
    from confluent_kafka.admin import AdminClient
    return AdminClient(client_settings(bootstrap, **{"socket.timeout.ms": 10000, "log_level": 0}))


def wait_all(futures: dict, timeout: float = 30) -> dict:
    """Resolve a confluent admin result dict, turning the first error into a sentence."""
    out = {}
    for key, fut in futures.items():
        try:
            out[key] = fut.result(timeout=timeout)
        except Exception as e:  # noqa: BLE001 - shown to the user as a sentence
            fail(f"{key}: {describe_client_error(e)}")
    return out


def table(headers: list[str], rows: list[list]) -> str:
    """Rows under headers in left-aligned columns, as Kafka's tools print them."""
    cells = [headers] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells)
