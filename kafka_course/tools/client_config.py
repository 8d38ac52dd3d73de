"""``--command-config FILE``: the client settings Kafka's scripts read, for the course's tools.

Kafka's shell tools take a properties file of Java client settings, most often to log in:

    security.protocol=SASL_SSL
    sasl.mechanism=SCRAM-SHA-256
    sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
        username="alice" password="alice-secret";
    ssl.truststore.type=PEM
    ssl.truststore.location=/path/to/ca.pem

The course's tools run on librdkafka (confluent-kafka), whose names differ in places:
the JAAS line becomes ``sasl.username``/``sasl.password``, a PEM trust store becomes
``ssl.ca.location``, a PEM key store ``ssl.certificate.location``/``ssl.key.location``.
Settings librdkafka spells as Java does pass through unchanged. A setting that only
the JVM understands (a JKS trust store, a Kerberos login) is refused with a sentence.
"""

from __future__ import annotations

import re
from pathlib import Path

from minikafka.api import ConfigError

_JAAS = re.compile(r'(\w+)\s*=\s*"([^"]*)"')
_RENAMED = {"sasl.mechanism": "sasl.mechanisms", "ssl.key.password": "ssl.key.password",
            "ssl.endpoint.identification.algorithm": "ssl.endpoint.identification.algorithm"}
_PEM_FILES = {"ssl.truststore.location": "ssl.ca.location", "ssl.keystore.location": "ssl.certificate.location"}
_JVM_ONLY = {"sasl.login.callback.handler.class", "sasl.client.callback.handler.class", "sasl.kerberos.service.name"}


def read(path: str | Path) -> dict[str, str]:
    """The librdkafka settings for the Java client settings in ``path``."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise ConfigError(f"Cannot read the --command-config file {path}: {e.strerror}.") from None
    return translate(parse_properties(text))


def parse_properties(text: str) -> dict[str, str]:
    """Java properties: ``key=value`` lines, ``#`` comments, a trailing ``\\`` continues a line."""
    out: dict[str, str] = {}
    logical = re.sub(r"\\\n\s*", "", text)
    for raw in logical.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        name, sep, value = line.partition("=")
        if not sep:
            raise ConfigError(f"--command-config: the line {line!r} is not name=value.")
        out[name.strip()] = value.strip()
    return out


def translate(java: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in java.items():
        if name in _JVM_ONLY:
            raise ConfigError(f"{name} is a setting of the Java client only; the course's tools cannot use it.")
        if name == "sasl.jaas.config":
            out.update(_jaas(value))
        elif name in ("ssl.truststore.type", "ssl.keystore.type"):
            if value.upper() != "PEM":
                raise ConfigError(f"{name}={value}: the course's tools read PEM files only; convert the store "
                                  "with keytool/openssl, or give ssl.ca.location instead.")
        elif name in _PEM_FILES:
            out[_PEM_FILES[name]] = value
        else:
            out[_RENAMED.get(name, name)] = value
    if "ssl.certificate.location" in out and "ssl.key.location" not in out:
        out["ssl.key.location"] = out["ssl.certificate.location"]  # a PEM key store holds both
    return out


def _jaas(line: str) -> dict[str, str]:
    if "PlainLoginModule" not in line and "ScramLoginModule" not in line:
        raise ConfigError("sasl.jaas.config: only PlainLoginModule and ScramLoginModule logins work with the "
                          "course's tools.")
    found = dict(_JAAS.findall(line))
    if "username" not in found or "password" not in found:
        raise ConfigError('sasl.jaas.config must give username="..." and password="...".')
    return {"sasl.username": found["username"], "sasl.password": found["password"]}
