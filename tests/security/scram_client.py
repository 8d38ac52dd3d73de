"""The client half of SCRAM (RFC 5802), for driving the broker's exchange without a socket."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets


class ScramClient:
    def __init__(self, user: str, password: str, hash_name: str = "sha256", nonce: str | None = None):
        self.user, self.password, self.hash_name = user, password, hash_name
        self.nonce = nonce or secrets.token_urlsafe(18)
        self.first_bare = f"n={user.replace('=', '=3D').replace(',', '=2C')},r={self.nonce}"
        self.server_signature = b""

    def first(self) -> bytes:
        return f"n,,{self.first_bare}".encode()

    def final(self, server_first: bytes) -> bytes:
        attrs = dict(part.split("=", 1) for part in server_first.decode().split(","))
        salted = hashlib.pbkdf2_hmac(self.hash_name, self.password.encode(), base64.b64decode(attrs["s"]),
                                     int(attrs["i"]))
        without_proof = f"c=biws,r={attrs['r']}"
        auth_message = f"{self.first_bare},{server_first.decode()},{without_proof}".encode()
        client_key = hmac.new(salted, b"Client Key", self.hash_name).digest()
        stored_key = hashlib.new(self.hash_name, client_key).digest()
        signature = hmac.new(stored_key, auth_message, self.hash_name).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        server_key = hmac.new(salted, b"Server Key", self.hash_name).digest()
        self.server_signature = hmac.new(server_key, auth_message, self.hash_name).digest()
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> bool:
        return server_final == b"v=" + base64.b64encode(self.server_signature)
