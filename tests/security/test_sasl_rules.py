"""SASL without sockets: PLAIN, SCRAM (RFC 7677's own example) and a connection's
order of requests, fed bytes and API keys as the dispatcher feeds them."""

from __future__ import annotations

import base64

import pytest

from minikafka.security.mechanisms import AuthenticationFailed
from minikafka.security.plain import PlainServer
from minikafka.security.sasl import SaslExchange, SaslState, Verdict
from minikafka.security.scram import SCRAM_SHA_256, SCRAM_SHA_512, ScramServer

from .scram_client import ScramClient

API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE, METADATA, PRODUCE = 18, 17, 36, 3, 0


def test_scram_sha_256_answers_rfc_7677s_example_exactly():
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    credential = SCRAM_SHA_256.credential(SCRAM_SHA_256.salted_password("pencil", salt, 4096), salt, 4096)
    server = ScramServer(SCRAM_SHA_256, lambda user, mech: credential if user == "user" else None,
                         nonce="%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0")
    first = server.step(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
    assert first == b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    final = server.step(b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
    assert final == b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    assert server.complete and server.authorization_id == "user"


@pytest.mark.parametrize("mechanism", [SCRAM_SHA_256, SCRAM_SHA_512])
def test_scram_proves_both_sides_and_refuses_a_wrong_password(mechanism):
    credential = mechanism.credential_from_password("alice-secret", 4096)
    lookup = {("alice", mechanism.name): credential}.get
    good = ScramClient("alice", "alice-secret", mechanism.hash_name)
    server = ScramServer(mechanism, lambda u, m: lookup((u, m)))
    assert good.verify(server.step(good.final(server.step(good.first()))))  # the client checks the broker too
    bad = ScramClient("alice", "wrong", mechanism.hash_name)
    server = ScramServer(mechanism, lambda u, m: lookup((u, m)))
    with pytest.raises(AuthenticationFailed) as failed:
        server.step(bad.final(server.step(bad.first())))
    assert failed.value.client_message is None  # the client gets Kafka's generic sentence, not the reason
    assert not server.complete


def test_scram_refuses_an_unknown_user_at_the_first_message():
    server = ScramServer(SCRAM_SHA_256, lambda u, m: None)
    with pytest.raises(AuthenticationFailed):
        server.step(ScramClient("nobody", "x").first())


def test_plain_checks_the_jaas_users():
    assert PlainServer({"alice": "s3cret"}).step(b"\0alice\0s3cret") == b""
    for token in (b"\0alice\0wrong", b"\0mallory\0s3cret"):
        with pytest.raises(AuthenticationFailed) as failed:
            PlainServer({"alice": "s3cret"}).step(token)
        assert failed.value.client_message == "Authentication failed: Invalid username or password"
    with pytest.raises(AuthenticationFailed):
        PlainServer({"alice": "s3cret"}).step(b"alice s3cret")


def _exchange() -> SaslExchange:
    return SaslExchange(("PLAIN",), lambda name: PlainServer({"alice": "s3cret"}))


def test_a_connection_must_handshake_then_authenticate_before_anything_else():
    sasl = _exchange()
    assert sasl.admit(API_VERSIONS, version_supported=False) is Verdict.PASS  # a retry with a lower version
    assert sasl.state is SaslState.HANDSHAKE_OR_VERSIONS
    assert sasl.admit(API_VERSIONS) is Verdict.PASS and sasl.state is SaslState.HANDSHAKE
    assert sasl.admit(SASL_HANDSHAKE) is Verdict.PASS and sasl.handshake("PLAIN")
    assert sasl.admit(METADATA) is Verdict.REFUSE  # answered ILLEGAL_SASL_STATE, then closed
    assert sasl.admit(SASL_AUTHENTICATE) is Verdict.PASS
    assert sasl.principal == "User:ANONYMOUS"
    sasl.authenticate(b"\0alice\0s3cret")
    assert sasl.complete and sasl.principal == "User:alice"
    assert sasl.admit(PRODUCE) is Verdict.PASS


def test_requests_before_the_handshake_close_the_connection():
    assert _exchange().admit(METADATA) is Verdict.CLOSE
    assert _exchange().admit(SASL_AUTHENTICATE) is Verdict.CLOSE


def test_an_unknown_mechanism_and_a_wrong_password_end_the_exchange():
    sasl = _exchange()
    assert not sasl.handshake("SCRAM-SHA-256") and sasl.state is SaslState.FAILED
    sasl = _exchange()
    sasl.handshake("PLAIN")
    with pytest.raises(AuthenticationFailed) as failed:
        sasl.authenticate(b"\0alice\0wrong")
    assert failed.value.client_message == "Authentication failed: Invalid username or password"
    assert sasl.admit(METADATA) is Verdict.CLOSE and sasl.principal == "User:ANONYMOUS"
    sasl = _exchange()
    sasl.handshake("PLAIN")
    with pytest.raises(AuthenticationFailed) as failed:
        sasl.authenticate(b"garbage")
    assert failed.value.client_message == ("Authentication failed during authentication due to invalid "
                                           "credentials with SASL mechanism PLAIN")
