"""The authorizer without a broker: Kafka's StandardAuthorizer rules on ACL bindings."""

from __future__ import annotations

import pytest

from minikafka.security.acl import AclBinding, AclFilter, InvalidAcl, Operation as Op, PatternType, \
    Permission, ResourceType as Res
from minikafka.security.authorizer import StandardAuthorizer
from minikafka.security.store import SecurityRecords

ALICE, HOST = "User:alice", "127.0.0.1"


def acl(name, op, permission=Permission.ALLOW, principal=ALICE, pattern=PatternType.LITERAL,
        resource=Res.TOPIC, host="*") -> AclBinding:
    return AclBinding(resource, name, pattern, principal, host, op, permission)


def authorizer(*acls, **kwargs) -> StandardAuthorizer:
    store = SecurityRecords()
    for a in acls:
        store.add_acl(a)
    return StandardAuthorizer(store, **kwargs)


def test_nothing_is_allowed_without_an_acl_unless_allow_everyone_if_no_acl_found():
    assert not authorizer().authorize(ALICE, HOST, Op.READ, Res.TOPIC, "orders")
    assert authorizer(allow_everyone_if_no_acl=True).authorize(ALICE, HOST, Op.READ, Res.TOPIC, "orders")
    # an ACL on the topic, even for someone else, means "no acl found" no longer applies
    other = authorizer(acl("orders", Op.READ, principal="User:bob"), allow_everyone_if_no_acl=True)
    assert not other.authorize(ALICE, HOST, Op.READ, Res.TOPIC, "orders")


def test_literal_prefixed_and_wildcard_patterns():
    auth = authorizer(acl("orders", Op.WRITE), acl("logs-", Op.READ, pattern=PatternType.PREFIXED),
                      acl("*", Op.DESCRIBE, resource=Res.GROUP))
    assert auth.authorize(ALICE, HOST, Op.WRITE, Res.TOPIC, "orders")
    assert not auth.authorize(ALICE, HOST, Op.WRITE, Res.TOPIC, "orders2")
    assert auth.authorize(ALICE, HOST, Op.READ, Res.TOPIC, "logs-app")
    assert not auth.authorize(ALICE, HOST, Op.READ, Res.TOPIC, "log")
    assert auth.authorize(ALICE, HOST, Op.DESCRIBE, Res.GROUP, "any-group")


def test_deny_wins_and_implies_nothing():
    auth = authorizer(acl("*", Op.ALL), acl("secret", Op.READ, Permission.DENY))
    assert not auth.authorize(ALICE, HOST, Op.READ, Res.TOPIC, "secret")
    assert auth.authorize(ALICE, HOST, Op.DESCRIBE, Res.TOPIC, "secret")  # denying READ does not deny DESCRIBE
    assert auth.authorize(ALICE, HOST, Op.READ, Res.TOPIC, "public")


def test_read_write_delete_alter_imply_describe_and_alter_configs_implies_describe_configs():
    for op in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER):
        assert authorizer(acl("t", op)).authorize(ALICE, HOST, Op.DESCRIBE, Res.TOPIC, "t")
    assert not authorizer(acl("t", Op.CREATE)).authorize(ALICE, HOST, Op.DESCRIBE, Res.TOPIC, "t")
    assert authorizer(acl("t", Op.ALTER_CONFIGS)).authorize(ALICE, HOST, Op.DESCRIBE_CONFIGS, Res.TOPIC, "t")
    assert not authorizer(acl("t", Op.DESCRIBE)).authorize(ALICE, HOST, Op.READ, Res.TOPIC, "t")


def test_principal_and_host_must_match_or_be_wildcards():
    auth = authorizer(acl("t", Op.READ, principal="User:*", host="10.0.0.1"), acl("u", Op.READ, host=HOST))
    assert not auth.authorize(ALICE, HOST, Op.READ, Res.TOPIC, "t")
    assert auth.authorize("User:bob", "10.0.0.1", Op.READ, Res.TOPIC, "t")
    assert auth.authorize(ALICE, HOST, Op.READ, Res.TOPIC, "u") and not auth.authorize("User:bob", HOST, Op.READ,
                                                                                        Res.TOPIC, "u")


def test_super_users_pass_even_a_deny():
    auth = authorizer(acl("t", Op.ALL, Permission.DENY, principal="User:*"), super_users={"User:admin"})
    assert auth.authorize("User:admin", HOST, Op.DELETE, Res.TOPIC, "t")
    assert not auth.authorize(ALICE, HOST, Op.DELETE, Res.TOPIC, "t")


def test_authorize_by_resource_type_for_idempotent_producers():
    assert authorizer(acl("orders", Op.WRITE)).authorize_any(ALICE, HOST, Op.WRITE, Res.TOPIC)
    assert not authorizer(acl("orders", Op.READ)).authorize_any(ALICE, HOST, Op.WRITE, Res.TOPIC)
    denied = authorizer(acl("app-", Op.WRITE, pattern=PatternType.PREFIXED),
                        acl("app", Op.WRITE, Permission.DENY, pattern=PatternType.PREFIXED))
    assert not denied.authorize_any(ALICE, HOST, Op.WRITE, Res.TOPIC)


def test_invalid_bindings_are_refused_with_kafkas_reason():
    with pytest.raises(InvalidAcl, match="patternType"):
        acl("t", Op.READ, pattern=PatternType.MATCH).validate()
    with pytest.raises(InvalidAcl, match="kafka-cluster"):
        acl("my-cluster", Op.ALTER, resource=Res.CLUSTER).validate()
    with pytest.raises(InvalidAcl, match="principal"):
        acl("t", Op.READ, principal="alice").validate()
    with pytest.raises(InvalidAcl, match="operation"):
        acl("t", Op.ANY).validate()


def test_filters_match_any_and_match_finds_every_pattern_that_applies():
    bindings = [acl("orders", Op.READ), acl("ord", Op.WRITE, pattern=PatternType.PREFIXED), acl("*", Op.DESCRIBE),
                acl("other", Op.READ)]
    match = AclFilter(Res.TOPIC, "orders", PatternType.MATCH, None, None, Op.ANY, Permission.ANY)
    assert [b.name for b in bindings if match.matches(b)] == ["orders", "ord", "*"]
    literal = AclFilter(Res.ANY, None, PatternType.LITERAL, ALICE, None, Op.READ, Permission.ALLOW)
    assert [b.name for b in bindings if literal.matches(b)] == ["orders", "other"]


def test_every_api_declares_how_it_is_authorized():
    """A new API must say how Kafka's authorizer applies to it before it can be merged."""
    from minikafka.handlers._authorize import CHECKED_IN_HANDLER, NOT_CHECKED, RULES
    from minikafka.protocol.apis import API_TABLE

    declared = set(RULES) | set(CHECKED_IN_HANDLER) | set(NOT_CHECKED)
    missing = [f"{api.name} ({api.key})" for api in API_TABLE if api.key not in declared]
    assert not missing, ("declare how these APIs are authorized in minikafka/handlers/_authorize.py "
                         f"(RULES, CHECKED_IN_HANDLER or NOT_CHECKED): {', '.join(missing)}")
