"""TLS for the SSL and SASL_SSL listeners, with the standard library's ``ssl``.

The broker's certificate and key come from Kafka's PEM settings: either a PEM file with
the private key and the certificate chain (``ssl.keystore.type=PEM``,
``ssl.keystore.location``, ``ssl.key.password`` when the key is encrypted) or the PEM
text itself (``ssl.keystore.certificate.chain``, ``ssl.keystore.key``). With
``ssl.client.auth=required`` (or ``requested``) clients show a certificate signed by a CA
of the truststore (``ssl.truststore.location`` or ``ssl.truststore.certificates``), and
on an SSL listener their principal is the certificate's subject, ``User:CN=alice,O=...``
as Kafka writes it (RFC 2253: most specific first).
"""

from __future__ import annotations

import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..config import ConfigError

CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
_TLS_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_RDN_NAMES = {"commonName": "CN", "organizationName": "O", "organizationalUnitName": "OU", "countryName": "C",
              "localityName": "L", "stateOrProvinceName": "ST", "streetAddress": "STREET",
              "domainComponent": "DC", "userId": "UID", "emailAddress": "EMAILADDRESS"}


@dataclass(frozen=True)
class TlsSettings:
    """One listener's TLS settings; ``prefix`` is how its settings are named in errors."""

    prefix: str
    keystore_location: str | None = None
    key_password: str | None = None
    certificate_chain: str | None = None
    private_key: str | None = None
    truststore_location: str | None = None
    truststore_certificates: str | None = None
    client_auth: str = "none"
    enabled_protocols: tuple[str, ...] = ("TLSv1.2", "TLSv1.3")


def server_context(s: TlsSettings) -> ssl.SSLContext:
    """An SSLContext for a listener, or ConfigError with a sentence naming the setting."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    versions = [_TLS_VERSIONS[v] for v in s.enabled_protocols if v in _TLS_VERSIONS]
    if not versions:
        raise ConfigError(f"{s.prefix}ssl.enabled.protocols must include TLSv1.2 or TLSv1.3, not "
                          f"{','.join(s.enabled_protocols)!r}")
    ctx.minimum_version, ctx.maximum_version = min(versions), max(versions)
    _load_keystore(ctx, s)
    if s.client_auth not in CLIENT_AUTH:
        raise ConfigError(f"{s.prefix}ssl.client.auth must be none, requested or required, not {s.client_auth!r}")
    ctx.verify_mode = CLIENT_AUTH[s.client_auth]
    if ctx.verify_mode != ssl.CERT_NONE:
        _load_truststore(ctx, s)
    return ctx


def _load_keystore(ctx: ssl.SSLContext, s: TlsSettings) -> None:
    if s.keystore_location:
        path = Path(s.keystore_location)
        if not path.is_file():
            raise ConfigError(f"{s.prefix}ssl.keystore.location: there is no file {str(path)!r}")
        _load_chain(ctx, str(path), None, s, f"{s.prefix}ssl.keystore.location ({path})")
    elif s.certificate_chain and s.private_key:
        with tempfile.TemporaryDirectory(prefix="minikafka-tls-") as tmp:
            cert, key = Path(tmp, "chain.pem"), Path(tmp, "key.pem")
            cert.write_text(s.certificate_chain)
            key.write_text(s.private_key)
            os.chmod(key, 0o600)
            _load_chain(ctx, str(cert), str(key), s, f"{s.prefix}ssl.keystore.certificate.chain and "
                                                     f"{s.prefix}ssl.keystore.key")
    else:
        raise ConfigError(f"a TLS listener needs a certificate: set {s.prefix}ssl.keystore.location (a PEM file "
                          f"with the key and the certificate chain), or {s.prefix}ssl.keystore.certificate.chain "
                          f"and {s.prefix}ssl.keystore.key, with ssl.keystore.type=PEM")


def _load_chain(ctx: ssl.SSLContext, certfile: str, keyfile: str | None, s: TlsSettings, what: str) -> None:
    try:
        # a callable, never None: with None OpenSSL would prompt on the terminal for an encrypted key's password
        ctx.load_cert_chain(certfile, keyfile, password=lambda: (s.key_password or "").encode())
    except ssl.SSLError as e:
        encrypted = "ENCRYPTED" in Path(keyfile or certfile).read_text(errors="replace")
        hint = (f"{s.prefix}ssl.key.password does not decrypt its private key" if encrypted and s.key_password
                else f"its private key is encrypted: set {s.prefix}ssl.key.password" if encrypted
                else "it needs a PEM private key and the certificate that goes with it")
        raise ConfigError(f"{what} cannot be used as the broker's certificate: {hint} ({e.reason or e})") from None
    except (OSError, ValueError) as e:
        raise ConfigError(f"{what} cannot be read ({e})") from None


def _load_truststore(ctx: ssl.SSLContext, s: TlsSettings) -> None:
    try:
        if s.truststore_location:
            if not Path(s.truststore_location).is_file():
                raise ConfigError(f"{s.prefix}ssl.truststore.location: there is no file {s.truststore_location!r}")
            ctx.load_verify_locations(cafile=s.truststore_location)
        elif s.truststore_certificates:
            ctx.load_verify_locations(cadata=s.truststore_certificates)
        else:
            raise ConfigError(f"{s.prefix}ssl.client.auth={s.client_auth} needs the CAs that sign client "
                              f"certificates: set {s.prefix}ssl.truststore.location (PEM, ssl.truststore.type=PEM)")
    except ssl.SSLError as e:
        raise ConfigError(f"{s.prefix}ssl.truststore cannot be read as PEM certificates ({e.reason or e})") from None


def principal_from_certificate(cert: dict | None) -> str | None:
    """``User:CN=alice,O=Course`` from a verified peer certificate, or None without one."""
    if not cert or not cert.get("subject"):
        return None
    parts = []
    for rdn in reversed(cert["subject"]):
        for name, value in rdn:
            escaped = "".join("\\" + c if c in ',+"\\<>;=' else c for c in value)
            parts.append(f"{_RDN_NAMES.get(name, name)}={escaped}")
    return "User:" + ",".join(parts)
