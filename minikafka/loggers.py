"""Broker loggers (KIP-412): read and change log levels at run time, without a restart.

Kafka exposes its log4j loggers as the BROKER_LOGGER config resource: DescribeConfigs
lists each logger with its level, and IncrementalAlterConfigs SETs a level or DELETEs it
(the logger then follows the root logger). minikafka's loggers are Python ``logging``
loggers (``minikafka.broker``, ``minikafka.replication``, ...), shown with Kafka's level
names. The brokers of one ``Cluster`` share a process, so a level set through one of them
is the level of all of them.
"""

from __future__ import annotations

import logging

from .errors import ErrorCode, KafkaError

ROOT = "root"
TRACE = 5  # Python has no TRACE; Kafka's is below DEBUG
LEVELS = {"TRACE": TRACE, "DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING,
          "ERROR": logging.ERROR, "FATAL": logging.CRITICAL, "OFF": logging.CRITICAL + 10}
_NAMES = {number: name for name, number in LEVELS.items()}


def _level_name(number: int) -> str:
    if number in _NAMES:
        return _NAMES[number]
    return min(_NAMES.items(), key=lambda item: abs(item[0] - number))[1]


def levels() -> dict[str, str]:
    """Every logger of minikafka (and the root logger) with its effective level, by name."""
    names = sorted(n for n, obj in logging.Logger.manager.loggerDict.items()
                   if isinstance(obj, logging.Logger) and (n == "minikafka" or n.startswith("minikafka.")))
    out = {ROOT: _level_name(logging.getLogger().getEffectiveLevel())}
    out.update((n, _level_name(logging.getLogger(n).getEffectiveLevel())) for n in names)
    return out


def _logger(name: str) -> logging.Logger:
    if name == ROOT:
        return logging.getLogger()
    known = logging.Logger.manager.loggerDict.get(name)
    if not isinstance(known, logging.Logger) or not (name == "minikafka" or name.startswith("minikafka.")):
        raise KafkaError(ErrorCode.invalid_config, f"Logger {name} does not exist.")
    return known


def check(name: str, op: str, value: str | None) -> None:
    """Raise Kafka's error for a change it refuses (nothing is changed)."""
    if op not in ("SET", "DELETE"):
        raise KafkaError(ErrorCode.invalid_request, f"{op} is not allowed for a BROKER_LOGGER resource.")
    _logger(name)
    if op == "DELETE" and name == ROOT:
        raise KafkaError(ErrorCode.invalid_request, "The root logger's level cannot be removed.")
    if op == "SET" and (value or "").upper() not in LEVELS:
        raise KafkaError(ErrorCode.invalid_config, f"Cannot set the level of {name} to {value!r}: it must be "
                                                   f"one of {', '.join(LEVELS)}.")


def apply(name: str, op: str, value: str | None) -> None:
    """SET a logger's level, or DELETE it so that the logger follows the root logger."""
    _logger(name).setLevel(LEVELS[(value or "").upper()] if op == "SET" else logging.NOTSET)
