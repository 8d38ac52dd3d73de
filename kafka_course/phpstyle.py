"""What php-rdkafka's consumer prints, reproduced on top of confluent-kafka.

php-rdkafka and confluent-kafka are both thin layers over librdkafka, so a PHP
consumer and a Python one see the same messages with the same error codes. This
module gives a Python message the shape of PHP's ``RdKafka\\Message`` object and
prints it the way PHP's ``var_dump()`` does, so notebook 10 can show the two side by
side:

    message = RdKafkaMessage.from_confluent(msg)
    print(var_dump(message))

``var_dump`` follows PHP's rules: ``string(N)`` counts *bytes* (UTF-8), not
characters; a missing key is ``NULL``; headers are an ``array`` of name => string.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

# librdkafka's error codes, under the constant names php-rdkafka exports.
RD_KAFKA_RESP_ERR_NO_ERROR = 0
RD_KAFKA_RESP_ERR__PARTITION_EOF = -191
RD_KAFKA_RESP_ERR__TIMED_OUT = -185
# Logical offsets accepted by consumeStart() (the same numbers in every librdkafka binding).
RD_KAFKA_OFFSET_BEGINNING = -2
RD_KAFKA_OFFSET_END = -1


@dataclass
class RdKafkaMessage:
    """The nine public properties of php-rdkafka's ``RdKafka\\Message``, in PHP's order."""
    err: int
    topic_name: str | None
    timestamp: int
    partition: int
    payload: bytes | None
    len: int | None
    key: bytes | None
    offset: int
    headers: dict[str, bytes] | None

    @classmethod
    # msg: a confluent Message, Any because its stubs type headers() as the dict produce() also takes and
    # mypy does not narrow msg.partition() and msg.offset() (called twice) by their None tests
    def from_confluent(cls, msg: Any) -> RdKafkaMessage:
        """Convert a ``confluent_kafka.Message`` (a record, or an event such as partition EOF)."""
        error = msg.error()
        payload = msg.value() if error is None else (error.str().encode() if error.code() < 0 else None)
        headers = msg.headers()
        return cls(
            err=RD_KAFKA_RESP_ERR_NO_ERROR if error is None else error.code(),
            topic_name=msg.topic(),
            timestamp=msg.timestamp()[1],
            partition=msg.partition() if msg.partition() is not None else -1,
            payload=payload,
            len=len(payload) if payload is not None else None,
            key=msg.key(),
            offset=msg.offset() if msg.offset() is not None else -1001,
            headers={name: value for name, value in headers} if headers else None,
        )

    @classmethod
    def timed_out(cls) -> RdKafkaMessage:
        """What a consume call that waited in vain reports (librdkafka's ``_TIMED_OUT``)."""
        return cls(RD_KAFKA_RESP_ERR__TIMED_OUT, None, -1, -1, None, None, None, -1001, None)


def var_dump(value: Any, handle: int = 5, indent: int = 0) -> str:
    """PHP's ``var_dump()`` output for an ``RdKafkaMessage`` (or an int, string, dict, None).

    ``handle`` is the ``#N`` PHP shows after an object's class: its object id, which
    PHP reuses as soon as an earlier object is freed.
    """
    pad = "  " * indent
    if isinstance(value, RdKafkaMessage):
        props = [(f.name, getattr(value, f.name)) for f in fields(value)]
        return _container(f"object(RdKafka\\Message)#{handle} ({len(props)})", props, pad, indent)
    if isinstance(value, dict):
        return _container(f"array({len(value)})", list(value.items()), pad, indent)
    return pad + _scalar(value)


def _container(head: str, items: list[tuple[str, Any]], pad: str, indent: int) -> str:
    lines = [pad + head + " {"]
    for name, item in items:
        lines.append(f'{pad}  ["{name}"]=>')
        lines.append(var_dump(item, indent=indent + 1))
    lines.append(pad + "}")
    return "\n".join(lines)


def _scalar(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return f"bool({'true' if value else 'false'})"
    if isinstance(value, int):
        return f"int({value})"
    if isinstance(value, float):
        return f"float({value!r})"
    raw = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    return f'string({len(raw)}) "{raw.decode("utf-8", "replace")}"'


def describe(message: RdKafkaMessage | None, handle: int = 5) -> str:
    """What the course's PHP consumer prints for one result of ``consume()``."""
    if message is None or message.err == RD_KAFKA_RESP_ERR__TIMED_OUT:
        return "Timed out"
    if message.err == RD_KAFKA_RESP_ERR_NO_ERROR:
        return var_dump(message, handle)
    if message.err == RD_KAFKA_RESP_ERR__PARTITION_EOF:
        return "No more messages; will wait for more"
    raise RuntimeError(f"Kafka error {message.err}: {(message.payload or b'').decode()}")
