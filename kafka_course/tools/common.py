"""What the client tools share: the bootstrap option, ``name=value`` settings, and a
client's error turned into one sentence a person can act on."""

from __future__ import annotations

import argparse
import os

from minikafka.cli.common import fail, parse_pairs
from minikafka.errors import explain

__all__ = ["add_bootstrap", "admin", "describe_client_error", "fail", "parse_pairs", "wait_all"]

DEFAULT_BOOTSTRAP = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")


def add_bootstrap(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bootstrap-server", default=DEFAULT_BOOTSTRAP, metavar="HOST:PORT",
                        help=f"broker(s) to connect to (default: $KAFKA_BOOTSTRAP_SERVERS or {DEFAULT_BOOTSTRAP})")


def _unreachable() -> set[int]:
    from confluent_kafka import KafkaError
    return {KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN, KafkaError._TIMED_OUT}


def describe_client_error(exc: BaseException) -> str:
    """A sentence for an error raised by confluent-kafka or kafka-python."""
    err = exc.args[0] if exc.args else None
    code = getattr(err, "code", None)
    if callable(code):  # confluent_kafka.KafkaError
        value, text = code(), err.str()
        if value >= 0:
            return f"{explain(value)} ({text})"
        if value in _unreachable():
            return f"Cannot reach a broker: {text}. Is one running at the bootstrap address?"
        return text
    return str(exc) or type(exc).__name__


def admin(bootstrap: str):
    """An AdminClient whose own log lines are silenced: a problem is reported once, as a sentence."""
    from confluent_kafka.admin import AdminClient
    return AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 10000, "log_level": 0})


def wait_all(futures: dict, timeout: float = 30) -> dict:
    """Resolve a confluent admin result dict, turning the first error into a sentence."""
    out = {}
    for key, fut in futures.items():
        try:
            out[key] = fut.result(timeout=timeout)
        except Exception as e:  # noqa: BLE001 - shown to the user as a sentence
            fail(f"{key}: {describe_client_error(e)}")
    return out
