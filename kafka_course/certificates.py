"""TLS certificates for the course: a certificate authority, a broker certificate, client ones.

A TLS listener (``SSL``, ``SASL_SSL``) needs a certificate that clients trust. At work a
company CA signs it; here ``make_certificates`` plays that CA (with the ``cryptography``
package): it writes a CA certificate, and a broker certificate for ``localhost`` and
``127.0.0.1`` signed by it, as PEM files Kafka reads with ``ssl.keystore.type=PEM``::

    certs = make_certificates(tmp_dir)
    cluster = Cluster(config={"listeners": "SSL://127.0.0.1:0", **certs.broker_settings()})
    Producer({"bootstrap.servers": ..., **certs.client_settings()})   # security.protocol=SSL, ssl.ca.location

``client_certificate("alice")`` signs a certificate for a client, for listeners with
``ssl.client.auth=required`` (mutual TLS): the broker then knows the client as
``User:CN=alice``. The broker itself never imports this module: it reads the PEM files
with the standard library's ``ssl``.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["Certificates", "make_certificates"]

_SKEW = datetime.timedelta(minutes=5)  # valid a little before now: laptops' clocks disagree


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Kafka Hands-On"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _pem_key(key: ec.EllipticCurvePrivateKey, password: str | None = None) -> bytes:
    encryption = (serialization.BestAvailableEncryption(password.encode()) if password
                  else serialization.NoEncryption())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


def _pem_cert(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


@dataclass(frozen=True)
class _Authority:
    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate

    @classmethod
    def create(cls, days: int) -> _Authority:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        name = _name("Kafka Hands-On CA")
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - _SKEW).not_valid_after(now + datetime.timedelta(days))
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                             content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False,
                                             encipher_only=False, decipher_only=False), critical=True)
                .sign(key, hashes.SHA256()))
        return cls(key, cert)

    def sign(self, common_name: str, days: int, hosts: tuple[str, ...] = (),
             usage: x509.ObjectIdentifier = ExtendedKeyUsageOID.SERVER_AUTH
             ) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        builder = (x509.CertificateBuilder().subject_name(_name(common_name)).issuer_name(self.cert.subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - _SKEW).not_valid_after(now + datetime.timedelta(days))
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
        if hosts:
            builder = builder.add_extension(x509.SubjectAlternativeName([_alt_name(h) for h in hosts]), critical=False)
        return key, builder.sign(self.key, hashes.SHA256())


def _alt_name(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


@dataclass(frozen=True)
class Certificates:
    """The PEM files of one course CA and the broker certificate it signed."""

    directory: Path
    ca_certificate: Path  # what clients trust: ssl.ca.location
    broker_keystore: Path  # the broker's key and certificate chain in one PEM file
    key_password: str | None
    _authority: _Authority
    days: int

    def broker_settings(self, listener: str | None = None) -> dict[str, str]:
        """Kafka's broker settings for this certificate (for one listener when ``listener`` is given)."""
        prefix = f"listener.name.{listener.lower()}." if listener else ""
        settings = {f"{prefix}ssl.keystore.type": "PEM", f"{prefix}ssl.keystore.location": str(self.broker_keystore)}
        if self.key_password:
            settings[f"{prefix}ssl.key.password"] = self.key_password
        return settings

    def client_settings(self, protocol: str = "SSL") -> dict[str, str]:
        """confluent-kafka (librdkafka) settings that trust the course CA."""
        return {"security.protocol": protocol, "ssl.ca.location": str(self.ca_certificate)}

    def client_certificate(self, common_name: str) -> tuple[Path, Path]:
        """(certificate, key) PEM files of a client certificate signed by the course CA."""
        key, cert = self._authority.sign(common_name, self.days, usage=ExtendedKeyUsageOID.CLIENT_AUTH)
        cert_path, key_path = self.directory / f"{common_name}.pem", self.directory / f"{common_name}-key.pem"
        cert_path.write_bytes(_pem_cert(cert))
        key_path.write_bytes(_pem_key(key))
        key_path.chmod(0o600)
        return cert_path, key_path


def make_certificates(directory: str | Path, hosts: tuple[str, ...] = ("localhost", "127.0.0.1"),
                      days: int = 30, key_password: str | None = None) -> Certificates:
    """Write ``ca.pem`` and ``broker.pem`` (key and chain) into ``directory``; return their paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    authority = _Authority.create(days)
    key, cert = authority.sign(hosts[0] if hosts else "broker", days, hosts)
    ca_path, keystore = directory / "ca.pem", directory / "broker.pem"
    ca_path.write_bytes(_pem_cert(authority.cert))
    keystore.write_bytes(_pem_key(key, key_password) + _pem_cert(cert) + _pem_cert(authority.cert))
    keystore.chmod(0o600)
    return Certificates(directory, ca_path, keystore, key_password, authority, days)
