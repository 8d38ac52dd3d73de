"""What notebook 08b prints about security, held to account: the secured twin next to the
embedded minikafka, its wire taps, and the answers a login gets before and after an ACL."""

from __future__ import annotations

import kafka_course as course
from kafka_course import secured
from kafka_course.secured import ADMIN, OK, try_create_topic, try_read, try_write, visible_topics


def test_the_wire_shows_a_plain_password_and_records_on_sasl_plaintext_and_nothing_on_sasl_ssl():
    course.bootstrap()
    twin = course.secured_cluster()
    assert twin is not None and twin.where == "embedded minikafka"
    topic = "wire-test"
    assert try_create_topic(twin.admin_login(), topic) in (OK, "TOPIC_ALREADY_EXISTS")
    before = {p: len(twin.taps[p].connections()) for p in secured.PROTOCOLS}
    for protocol in secured.PROTOCOLS:
        assert try_write(twin.admin_login(protocol), topic, b"card=4111 1111") == OK
    clear = twin.taps["SASL_PLAINTEXT"].connections()[before["SASL_PLAINTEXT"]:]
    hidden = twin.taps["SASL_SSL"].connections()[before["SASL_SSL"]:]
    assert clear and hidden
    assert ADMIN[1].encode() in b"".join(clear) and b"card=4111 1111" in b"".join(clear)
    # each TLS connection opens with a handshake record (0x16); nothing readable follows
    assert all(sent[:1] == b"\x16" for sent in hidden if sent), [sent[:8] for sent in hidden]
    assert ADMIN[1].encode() not in b"".join(hidden) and b"card=4111 1111" not in b"".join(hidden)


def test_a_login_is_not_a_permission_and_each_refusal_has_its_name():
    course.bootstrap()
    twin = course.secured_cluster()
    twin.add_user("tester", "tester-secret")
    assert try_create_topic(twin.admin_login(), "acl-test") in (OK, "TOPIC_ALREADY_EXISTS")
    me = twin.login("tester", "tester-secret")
    assert try_write(me, "acl-test") == "TOPIC_AUTHORIZATION_FAILED"  # logged in, not allowed
    assert try_write(twin.login("tester", "guess"), "acl-test") == "SASL_AUTHENTICATION_FAILED"
    untrusting = {k: v for k, v in me.items() if k != "ssl.ca.location"}
    assert try_write(untrusting, "acl-test") == "SSL_HANDSHAKE_FAILED"
    assert "acl-test" not in visible_topics(me)  # no Describe: hidden from Metadata
    options = f"--bootstrap-server {twin.bootstrap()} --command-config " + str(
        twin.command_config(*ADMIN, twin.ca_location.parent / "admin.properties", mechanism="PLAIN"))
    assert course.shell(f"minikafka acls {options} --add --allow-principal User:tester --consumer "
                        "--topic acl-test --group testers") == 0
    assert try_write(twin.admin_login(), "acl-test") == OK
    assert try_read(me, "acl-test", "testers") == OK
    assert try_read(me, "acl-test", "others") == "GROUP_AUTHORIZATION_FAILED"
    assert "acl-test" in visible_topics(me)


def test_elsewhere_there_is_no_cluster_to_lock_down_and_a_sentence_says_so(capsys, monkeypatch):
    monkeypatch.setattr(secured, "current_bootstrap", lambda: "127.0.0.1:1")
    monkeypatch.setattr(secured, "compose_running", lambda: False)
    assert secured.secured_cluster("The security part") is None
    assert "is neither, so it is skipped" in capsys.readouterr().out
