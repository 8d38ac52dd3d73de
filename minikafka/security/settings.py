"""Kafka's security settings, read once at start and refused with a sentence when wrong.

What turns security on, by Kafka's names:

- ``listeners=PLAINTEXT://127.0.0.1:9092,SASL_PLAINTEXT://127.0.0.1:9093,SSL://...`` and
  ``listener.security.protocol.map`` (a listener's name maps to PLAINTEXT, SSL,
  SASL_PLAINTEXT or SASL_SSL; by default each protocol's own name);
  ``advertised.listeners``, the address Metadata gives clients for a listener, when it
  is not where the broker listens (a proxy, a container's port mapping);
- ``sasl.enabled.mechanisms`` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), and for PLAIN the
  users of ``listener.name.<listener>.plain.sasl.jaas.config``;
- ``ssl.keystore.type=PEM`` with ``ssl.keystore.location`` (and ``ssl.key.password``) or
  ``ssl.keystore.certificate.chain`` and ``ssl.keystore.key``; ``ssl.client.auth``;
- ``authorizer.class.name``, ``super.users``, ``allow.everyone.if.no.acl.found``;
- ``connection.failed.authentication.delay.ms`` (100): how long a failed login's
  connection stays open after its answer, as in Kafka (KIP-306); clients that read
  the answer and the close together (kafka-python) need the pause to see the answer.

Any SASL or SSL setting may be given for one listener as ``listener.name.<name>.<setting>``.
Nothing here is on unless set: without them the broker has one PLAINTEXT listener and
lets everyone do everything, as Kafka does.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config import ConfigError
from . import jaas, tls
from .authorizer import AUTHORIZER_CLASSES

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_OWN = {"listeners", "advertised.listeners", "listener.security.protocol.map", "authorizer.class.name", "super.users",
        "allow.everyone.if.no.acl.found", "controller.listener.names", "inter.broker.listener.name",
        "security.inter.broker.protocol", "sasl.mechanism.inter.broker.protocol",
        "connection.failed.authentication.delay.ms"}
_PREFIXES = ("ssl.", "sasl.", "listener.name.")
_SSL_USED = {"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
             "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.type", "ssl.truststore.location",
             "ssl.truststore.password", "ssl.truststore.certificates", "ssl.client.auth", "ssl.enabled.protocols"}
# Accepted so that Kafka's files start; the stdlib's defaults stand in for them.
_SSL_NO_EFFECT = {"ssl.protocol", "ssl.cipher.suites", "ssl.endpoint.identification.algorithm",
                  "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm", "ssl.secure.random.implementation"}
_LISTENER = re.compile(r"(?P<name>[A-Za-z0-9_]+)://(?P<host>[^:/]*|\[[0-9a-fA-F:.]+\]):(?P<port>\d+)")


@dataclass(frozen=True)
class Listener:
    name: str
    protocol: str
    host: str
    port: int
    mechanisms: tuple[str, ...] = ()
    plain_users: Mapping[str, str] = field(default_factory=dict)
    tls: ssl.SSLContext | None = None
    advertised: tuple[str, int] | None = None  # advertised.listeners' address for it, if any

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("SASL_")


@dataclass(frozen=True)
class SecurityConfig:
    listeners: tuple[Listener, ...] = ()  # empty: one PLAINTEXT listener where the Cluster says
    authorizer: str | None = None
    super_users: frozenset[str] = frozenset()
    allow_everyone_if_no_acl: bool = False
    failed_authentication_delay_ms: int = 100  # Kafka's default (KIP-306)

    @property
    def active(self) -> bool:
        """Whether anything differs from one PLAINTEXT listener that lets everyone in."""
        plain = len(self.listeners) <= 1 and all(lst.protocol == "PLAINTEXT" for lst in self.listeners)
        return not plain or self.authorizer is not None


def takes(name: str) -> bool:
    """Whether a broker setting of this name is one of the security settings minikafka reads."""
    if name.startswith("ssl."):
        return name in _SSL_USED | _SSL_NO_EFFECT
    if name.startswith("sasl."):
        return name in _OWN | {"sasl.enabled.mechanisms", "sasl.jaas.config"}
    return name in _OWN or name.startswith("listener.name.")


def split(config: Mapping[str, Any]) -> tuple[SecurityConfig, dict[str, Any]]:
    """Take the security settings out of ``config``: (what they say, the other settings)."""
    own = {k: str(v) for k, v in config.items() if k in _OWN or k.startswith(_PREFIXES)}
    rest = {k: v for k, v in config.items() if k not in own}
    return parse(own), rest


def parse(s: Mapping[str, str]) -> SecurityConfig:
    _check_names(s)
    advertised = _advertised(s)
    listeners = tuple(_listener(s, *spec, advertised=advertised.pop(spec[0], None)) for spec in _listener_specs(s))
    if advertised:
        raise ConfigError(f"advertised.listeners names {', '.join(advertised)}, not in listeners; advertise only "
                          "listeners the broker has")
    _check_listener_prefixes(s, {lst.name for lst in listeners} | set(_items(s.get("controller.listener.names", ""))))
    authorizer = s.get("authorizer.class.name", "").strip() or None
    if authorizer is not None and authorizer not in AUTHORIZER_CLASSES:
        raise ConfigError(f"authorizer.class.name={authorizer} is not an authorizer minikafka has; use "
                          f"{AUTHORIZER_CLASSES[0]}")
    allow_everyone = s.get("allow.everyone.if.no.acl.found", "false").strip().lower()
    if allow_everyone not in ("true", "false"):
        raise ConfigError(f"allow.everyone.if.no.acl.found must be true or false, not {allow_everyone!r}")
    delay = s.get("connection.failed.authentication.delay.ms", "100").strip()
    if not delay.isdigit():
        raise ConfigError(f"connection.failed.authentication.delay.ms must be a whole number of ms, not {delay!r}")
    return SecurityConfig(listeners, authorizer, _super_users(s.get("super.users", "")),
                          allow_everyone == "true", int(delay))


def _items(text: str, sep: str = ",") -> list[str]:
    return [x.strip() for x in text.split(sep) if x.strip()]


def _check_names(s: Mapping[str, str]) -> None:
    for name in s:
        if name == "sasl.jaas.config":
            raise ConfigError("sasl.jaas.config must name its listener and mechanism on a broker, as in Kafka: "
                              "listener.name.sasl_plaintext.plain.sasl.jaas.config=...")
        if name.startswith("ssl.") and name not in _SSL_USED | _SSL_NO_EFFECT:
            raise ConfigError(f"{name} is not a TLS setting minikafka supports (it reads "
                              f"{', '.join(sorted(_SSL_USED))})")
        if name.startswith("sasl.") and name not in _OWN | {"sasl.enabled.mechanisms"}:
            raise ConfigError(f"{name} is not supported by minikafka (SASL here is PLAIN and SCRAM, with Kafka's "
                              "own login modules)")


def _protocol_map(s: Mapping[str, str]) -> dict[str, str]:
    if "listener.security.protocol.map" not in s:
        return {p: p for p in PROTOCOLS}
    out = {}
    for pair in _items(s["listener.security.protocol.map"]):
        name, _, protocol = pair.partition(":")
        if protocol.upper() not in PROTOCOLS:
            raise ConfigError(f"listener.security.protocol.map: {pair!r} maps to no security protocol; write "
                              f"NAME:PROTOCOL with one of {', '.join(PROTOCOLS)}")
        out[name.strip().upper()] = protocol.upper()
    return out


def _listener_specs(s: Mapping[str, str]) -> list[tuple[str, str, str, int]]:
    """(name, protocol, host, port) of each broker listener, controllers' left out."""
    protocols, controllers = _protocol_map(s), {n.upper() for n in _items(s.get("controller.listener.names", ""))}
    specs: list[tuple[str, str, str, int]] = []
    for text in _items(s.get("listeners", "")):
        m = _LISTENER.fullmatch(text)
        if m is None:
            raise ConfigError(f"listeners: {text!r} is not NAME://host:port, e.g. SASL_PLAINTEXT://127.0.0.1:9093")
        name, port = m["name"].upper(), int(m["port"])
        if name in controllers:
            continue
        if name not in protocols:
            raise ConfigError(f"listener {name} (in listeners) has no security protocol: add {name}:SASL_PLAINTEXT "
                              f"(or PLAINTEXT, SSL, SASL_SSL) to listener.security.protocol.map")
        if any(name == other[0] for other in specs):
            raise ConfigError(f"listeners names {name} twice; each listener needs its own name")
        if port and any(port == other[3] for other in specs):
            raise ConfigError(f"listeners gives port {port} to two listeners; each needs its own port")
        specs.append((name, protocols[name], m["host"].strip("[]") or "127.0.0.1", port))
    return specs


def _advertised(s: Mapping[str, str]) -> dict[str, tuple[str, int]]:
    """Each broker listener's advertised address; a controller listener's is left out, as its
    listener is (Kafka 4 lets controllers advertise theirs, KIP-853; minikafka has no separate ones)."""
    out, controllers = {}, {n.upper() for n in _items(s.get("controller.listener.names", ""))}
    for text in _items(s.get("advertised.listeners", "")):
        m = _LISTENER.fullmatch(text)
        if m is None or not m["host"]:
            raise ConfigError(f"advertised.listeners: {text!r} is not NAME://host:port, e.g. PLAINTEXT://localhost:9092")
        if m["name"].upper() not in controllers:
            out[m["name"].upper()] = (m["host"].strip("[]"), int(m["port"]))
    return out


def _check_listener_prefixes(s: Mapping[str, str], names: set[str]) -> None:
    for key in s:
        if key.startswith("listener.name."):
            listener = key.split(".")[2].upper()
            if listener not in {n.upper() for n in names}:
                raise ConfigError(f"{key} is for listener {listener}, which is not in listeners "
                                  f"({', '.join(sorted(names)) or 'none'})")


def _per_listener(s: Mapping[str, str], listener: str, name: str, default: str | None = None) -> str | None:
    return s.get(f"listener.name.{listener.lower()}.{name}", s.get(name, default))


def _listener(s: Mapping[str, str], name: str, protocol: str, host: str, port: int,
              advertised: tuple[str, int] | None = None) -> Listener:
    mechanisms: tuple[str, ...] = ()
    users: dict[str, str] = {}
    if protocol.startswith("SASL_"):
        mechanisms = _mechanisms(s, name)
        users = _plain_users(s, name) if "PLAIN" in mechanisms else {}
        _check_scram_jaas(s, name, mechanisms)
    context = tls.server_context(_tls_settings(s, name)) if protocol in ("SSL", "SASL_SSL") else None
    return Listener(name, protocol, host, port, mechanisms, users, context, advertised)


def _mechanisms(s: Mapping[str, str], listener: str) -> tuple[str, ...]:
    setting = f"listener.name.{listener.lower()}.sasl.enabled.mechanisms"
    setting = setting if setting in s else "sasl.enabled.mechanisms"
    given = _items(s.get(setting, "GSSAPI"))
    for mechanism in given:
        if mechanism == "GSSAPI":
            raise ConfigError(f"{setting}=GSSAPI (Kerberos, Kafka's default) is not supported by minikafka; set "
                              f"{setting}=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512 or some of them")
        if mechanism not in MECHANISMS:
            raise ConfigError(f"{setting}: {mechanism!r} is not a SASL mechanism minikafka has; use PLAIN, "
                              "SCRAM-SHA-256 or SCRAM-SHA-512")
    if not given:
        raise ConfigError(f"{setting} is empty: listener {listener} needs at least one SASL mechanism")
    return tuple(dict.fromkeys(given))


def _plain_users(s: Mapping[str, str], listener: str) -> dict[str, str]:
    setting = f"listener.name.{listener.lower()}.plain.sasl.jaas.config"
    if setting not in s:
        raise ConfigError(f"{setting} is missing: PLAIN on listener {listener} needs its users, as in Kafka: "
                          f'{setting}={jaas.PLAIN_MODULE} required user_alice="alice-secret";')
    entry = jaas.parse(s[setting], setting)
    if entry.module != jaas.PLAIN_MODULE:
        raise ConfigError(f"{setting} must use {jaas.PLAIN_MODULE}, not {entry.module}")
    if not entry.users():
        raise ConfigError(f'{setting} has no user_<name>="<password>" entries: nobody could log in with PLAIN')
    return entry.users()


def _check_scram_jaas(s: Mapping[str, str], listener: str, mechanisms: tuple[str, ...]) -> None:
    for mechanism in (m for m in mechanisms if m.startswith("SCRAM-")):
        setting = f"listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config"
        if setting in s and jaas.parse(s[setting], setting).module != jaas.SCRAM_MODULE:
            raise ConfigError(f"{setting} must use {jaas.SCRAM_MODULE}")


def _tls_settings(s: Mapping[str, str], listener: str) -> tls.TlsSettings:
    def get(name: str, default: str | None = None) -> str | None:
        return _per_listener(s, listener, name, default)
    for store in ("keystore", "truststore"):
        kind = (get(f"ssl.{store}.type", "JKS") or "JKS").upper()
        if kind != "PEM" and (store == "keystore" or get(f"ssl.{store}.location")):
            raise ConfigError(f"ssl.{store}.type is {kind}{' (Kafka’s default)' if kind == 'JKS' else ''}; "
                              f"minikafka reads PEM only: set ssl.{store}.type=PEM for listener {listener}")
    prefix = f"listener.name.{listener.lower()}." if any(k.startswith(f"listener.name.{listener.lower()}.ssl.")
                                                        for k in s) else ""
    return tls.TlsSettings(prefix, get("ssl.keystore.location"), get("ssl.key.password"),
                           get("ssl.keystore.certificate.chain"), get("ssl.keystore.key"),
                           get("ssl.truststore.location"), get("ssl.truststore.certificates"),
                           (get("ssl.client.auth", "none") or "none").lower(),
                           tuple(_items(get("ssl.enabled.protocols", "TLSv1.2,TLSv1.3") or "")))


def _super_users(text: str) -> frozenset[str]:
    users = _items(text, ";")
    for user in users:
        kind, _, name = user.partition(":")
        if not kind or not name:
            raise ConfigError(f"super.users: {user!r} is not a principal; write User:admin;User:ops")
    return frozenset(users)


def refuse_on_processes(config: Mapping[str, Any]) -> None:
    """Broker processes (``serve --controllers``) listen on one PLAINTEXT listener with no ACLs: their
    forwarding and replication carry no principal yet. A security setting given to them is refused
    with a sentence rather than ignored."""
    named = sorted(n for n in config if n in _OWN or n.startswith(_PREFIXES))
    if named:
        raise ValueError(f"{', '.join(named)}: broker processes (serve --controllers) take no security settings "
                         "yet (one PLAINTEXT listener, no SASL, TLS or ACLs); leave them out, or run `minikafka "
                         "serve` without --controllers for a secured cluster")

