"""SASL/SCRAM-SHA-256 and -512 on the broker (RFC 5802, RFC 7677; Kafka's KIP-84, KIP-554).

The broker never keeps a password. A credential is a random salt, an iteration count
and two keys derived from ``SaltedPassword = PBKDF2(password, salt, iterations)``:
``StoredKey = H(HMAC(SaltedPassword, "Client Key"))`` and
``ServerKey = HMAC(SaltedPassword, "Server Key")``. AlterUserScramCredentials brings the
salted password, computed by the admin client; the broker derives the keys and forgets it.

The exchange, two round trips::

    client-first  n,,n=alice,r=<client nonce>
    server-first  r=<client nonce + server nonce>,s=<salt>,i=<iterations>
    client-final  c=biws,r=<both nonces>,p=<ClientKey XOR HMAC(StoredKey, AuthMessage)>
    server-final  v=<HMAC(ServerKey, AuthMessage)>

so each side proves it knows the password's keys without sending them.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from .mechanisms import AuthenticationFailed

MIN_ITERATIONS, MAX_ITERATIONS = 4096, 16384


@dataclass(frozen=True)
class ScramMechanism:
    name: str
    hash_name: str
    code: int  # the int8 of DescribeUserScramCredentials and AlterUserScramCredentials

    def hmac(self, key: bytes, message: bytes) -> bytes:
        return hmac.new(key, message, self.hash_name).digest()

    def hash(self, data: bytes) -> bytes:
        return hashlib.new(self.hash_name, data).digest()

    def salted_password(self, password: str, salt: bytes, iterations: int) -> bytes:
        return hashlib.pbkdf2_hmac(self.hash_name, password.encode(), salt, iterations)

    def credential(self, salted_password: bytes, salt: bytes, iterations: int) -> ScramCredential:
        client_key = self.hmac(salted_password, b"Client Key")
        return ScramCredential(salt, self.hash(client_key), self.hmac(salted_password, b"Server Key"), iterations)

    def credential_from_password(self, password: str, iterations: int = MIN_ITERATIONS) -> ScramCredential:
        salt = secrets.token_bytes(32)
        return self.credential(self.salted_password(password, salt, iterations), salt, iterations)


SCRAM_SHA_256 = ScramMechanism("SCRAM-SHA-256", "sha256", 1)
SCRAM_SHA_512 = ScramMechanism("SCRAM-SHA-512", "sha512", 2)
MECHANISMS = {m.name: m for m in (SCRAM_SHA_256, SCRAM_SHA_512)}
BY_CODE = {m.code: m for m in MECHANISMS.values()}


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def to_record(self) -> dict:
        b64 = base64.b64encode
        return {"salt": b64(self.salt).decode(), "stored_key": b64(self.stored_key).decode(),
                "server_key": b64(self.server_key).decode(), "iterations": self.iterations}

    @classmethod
    def from_record(cls, rec: dict) -> ScramCredential:
        d = base64.b64decode
        return cls(d(rec["salt"]), d(rec["stored_key"]), d(rec["server_key"]), int(rec["iterations"]))


def _attributes(message: str) -> list[tuple[str, str]]:
    out = []
    for part in message.split(","):
        key, eq, value = part.partition("=")
        if len(key) != 1 or not eq:
            raise AuthenticationFailed(f"Invalid SCRAM message {message!r}")
        out.append((key, value))
    return out


def sasl_name(name: str) -> str:
    """RFC 5802 saslname: ``=2C`` is a comma and ``=3D`` an equals sign."""
    return name.replace("=2C", ",").replace("=3D", "=")


CredentialLookup = Callable[[str, str], "ScramCredential | None"]  # (user, mechanism name)


class ScramServer:
    """The broker's side of one SCRAM exchange, fed token by token."""

    def __init__(self, mechanism: ScramMechanism, lookup: CredentialLookup, nonce: str | None = None):
        self.mechanism, self.lookup = mechanism, lookup
        self.name = mechanism.name
        self.server_nonce = nonce or secrets.token_urlsafe(24)
        self.complete = False
        self.authorization_id = ""
        self._first_bare = self._server_first = self._gs2 = ""
        self._credential: ScramCredential | None = None

    def step(self, token: bytes) -> bytes:
        if self.complete:
            raise AuthenticationFailed("the SCRAM exchange is already complete")
        text = token.decode("utf-8", "replace")
        return self._client_final(text) if self._credential else self._client_first(text)

    def _client_first(self, message: str) -> bytes:
        flag, authzid, bare = ([*message.split(",", 2), "", ""])[:3]
        if flag != "n" or not bare:
            raise AuthenticationFailed(f"Invalid SCRAM client first message {message!r}")
        attrs = dict(_attributes(bare))  # n=, r= and extensions such as tokenauth=true
        user, nonce = sasl_name(attrs.get("n", "")), attrs.get("r", "")
        if not user or not nonce:
            raise AuthenticationFailed(f"Invalid SCRAM client first message {message!r}")
        credential = self.lookup(user, self.mechanism.name)
        if credential is None:
            raise AuthenticationFailed(f"Authentication failed: Invalid user credentials (no user {user!r})")
        if authzid and sasl_name(authzid.removeprefix("a=")) != user:
            raise AuthenticationFailed("authzid differs", "Authentication failed: Client requested an "
                                       "authorization id that is different from username")
        self._gs2, self._first_bare, self._credential = f"{flag},{authzid},", bare, credential
        self.authorization_id = user
        salt = base64.b64encode(credential.salt).decode()
        self._server_first = f"r={nonce}{self.server_nonce},s={salt},i={credential.iterations}"
        return self._server_first.encode()

    def _client_final(self, message: str) -> bytes:
        without_proof, sep, proof = message.rpartition(",p=")
        attrs = dict(_attributes(without_proof)) if sep else {}
        expected_nonce = self._server_first.split(",", 1)[0][2:]
        if not sep or attrs.get("r") != expected_nonce:
            raise AuthenticationFailed("Invalid client nonce in the final client message.")
        if attrs.get("c") != base64.b64encode(self._gs2.encode()).decode():
            raise AuthenticationFailed("Invalid channel binding in the final client message.")
        credential = self._credential
        assert credential is not None
        auth_message = f"{self._first_bare},{self._server_first},{without_proof}".encode()
        signature = self.mechanism.hmac(credential.stored_key, auth_message)
        try:
            client_key = bytes(a ^ b for a, b in zip(base64.b64decode(proof, validate=True), signature, strict=True))
        except ValueError:
            raise AuthenticationFailed("Invalid client proof in the final client message.") from None
        if not hmac.compare_digest(self.mechanism.hash(client_key), credential.stored_key):
            raise AuthenticationFailed(f"Invalid client credentials for {self.authorization_id!r}")
        self.complete = True
        server_signature = self.mechanism.hmac(credential.server_key, auth_message)
        return b"v=" + base64.b64encode(server_signature)
