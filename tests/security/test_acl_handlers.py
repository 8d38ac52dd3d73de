"""The ACL and SCRAM credential handlers alone (issue 27): each gets a ``Caller`` and a fake port
(``FakeAcls``, ``FakeScram`` below), never a broker, a socket or a Cluster. Requests are built at a
version a client sends and lifted as dispatch lifts them."""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

import pytest

from minikafka.broker import Broker
from minikafka.errors import ErrorCode
from minikafka.handlers import registry
from minikafka.handlers.alter_user_scram_credentials import AlterUserScramCredentials
from minikafka.handlers.create_acls import CreateAcls
from minikafka.handlers.delete_acls import DeleteAcls
from minikafka.handlers.describe_acls import DescribeAcls
from minikafka.handlers.describe_user_scram_credentials import DescribeUserScramCredentials
from minikafka.handlers.dispatch import lift
from minikafka.handlers.ports import AclsPort, Caller, ScramPort
from minikafka.security.acl import CLUSTER_NAME, AclBinding, Operation, PatternType, Permission, ResourceType
from minikafka.security.scram import SCRAM_SHA_256, SCRAM_SHA_512, ScramCredential
from tests.fake_authorizer import Acls
from tests.port_checks import assert_provides

READ_T = AclBinding(ResourceType.TOPIC, "t", PatternType.LITERAL, "User:bob", "*", Operation.READ, Permission.ALLOW)
WRITE_T = AclBinding(ResourceType.TOPIC, "t", PatternType.LITERAL, "User:bob", "*", Operation.WRITE, Permission.DENY)
READ_P = AclBinding(ResourceType.TOPIC, "t", PatternType.PREFIXED, "User:bob", "*", Operation.READ, Permission.ALLOW)
READ_G = AclBinding(ResourceType.GROUP, "g", PatternType.LITERAL, "User:eve", "*", Operation.READ, Permission.ALLOW)


class FakeAcls:
    """An AclsPort over a list; it records what was added and removed."""

    def __init__(self, *acls: AclBinding) -> None:
        self.stored = list(acls)
        self.added: list[AclBinding] = []
        self.removed: list[AclBinding] = []

    def acls(self) -> list[AclBinding]:
        return list(self.stored)

    def add_acl(self, acl: AclBinding) -> None:
        self.added.append(acl)
        if acl not in self.stored:
            self.stored.append(acl)

    def remove_acl(self, acl: AclBinding) -> None:
        self.removed.append(acl)
        self.stored.remove(acl)


class FakeScram:
    """A ScramPort over a dict of credentials by (user, mechanism name)."""

    def __init__(self, **users: tuple[str, int]) -> None:
        self.stored = {(u, m): ScramCredential(b"salt", b"stored", b"server", n) for u, (m, n) in users.items()}

    def scram_credentials(self) -> dict[tuple[str, str], ScramCredential]:
        return dict(self.stored)

    def scram_credential(self, user: str, mechanism: str) -> ScramCredential | None:
        return self.stored.get((user, mechanism))

    def set_scram_credential(self, user: str, mechanism: str, credential: ScramCredential) -> None:
        self.stored[(user, mechanism)] = credential

    def remove_scram_credential(self, user: str, mechanism: str) -> None:
        del self.stored[(user, mechanism)]


ADMIN = Acls((Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME), (Operation.ALTER, ResourceType.CLUSTER,
                                                                         CLUSTER_NAME))
NOBODY = Acls()


def kio(api: str, version: int) -> Any:
    return importlib.import_module(f"kio.schema.{api}.v{version}.request")


def run(handler: Any, api_key: int, request: Any, authorizer: Any = ADMIN) -> Any:
    caller = Caller(api_key, request.__version__, principal="User:alice", authorizer=authorizer)
    return asyncio.run(handler.handle(caller, lift(api_key, request)))


@pytest.mark.parametrize(("port", "fakes"), [(AclsPort, (FakeAcls,)), (ScramPort, (FakeScram,))])
def test_broker_and_the_fakes_provide_the_ports(port, fakes):
    assert_provides(port, Broker, *fakes)


def test_the_registry_builds_the_acl_and_scram_handlers_from_ports():
    for key, fake in ((29, FakeAcls), (30, FakeAcls), (31, FakeAcls), (50, FakeScram), (51, FakeScram)):
        row = registry.HANDLERS[key]
        assert isinstance(row, registry.PortHandler)
        assert isinstance(row.make(fake()), row.make)  # type: ignore[arg-type]


# -- DescribeAcls --------------------------------------------------------------------------------

def describe(version: int, resource_type: int = ResourceType.ANY, name: str | None = None,
             pattern: int = PatternType.ANY, operation: int = Operation.ANY) -> Any:
    return kio("describe_acls", version).DescribeAclsRequest(
        resource_type_filter=resource_type, resource_name_filter=name, pattern_type_filter=pattern,
        principal_filter=None, host_filter=None, operation=operation, permission_type=Permission.ANY)


@pytest.mark.parametrize("version", [1, 3])
def test_describe_acls_groups_the_matches_by_resource_pattern(version):
    answer = run(DescribeAcls(FakeAcls(READ_G, WRITE_T, READ_P, READ_T)), 29,
                 describe(version, ResourceType.TOPIC, "t", PatternType.MATCH))
    assert (answer.error_code, answer.error_message) == (ErrorCode.none, None)
    assert [(r.resource_type, r.resource_name, r.pattern_type, [(a.operation, a.permission_type) for a in r.acls])
            for r in answer.resources] == [
        (ResourceType.TOPIC, "t", PatternType.LITERAL, [(Operation.WRITE, Permission.DENY),  # as stored
                                                         (Operation.READ, Permission.ALLOW)]),
        (ResourceType.TOPIC, "t", PatternType.PREFIXED, [(Operation.READ, Permission.ALLOW)])]


def test_describe_acls_refuses_an_unknown_filter_value_with_invalid_request():
    for bad in ({"resource_type": 0}, {"pattern": 0}, {"operation": 99}):
        answer = run(DescribeAcls(FakeAcls(READ_T)), 29, describe(3, **bad))
        assert answer.error_code == ErrorCode.invalid_request and "UNKNOWN" in answer.error_message
        assert answer.resources == ()


@pytest.mark.parametrize(("authorizer", "code", "message"), [
    (None, ErrorCode.security_disabled, "No Authorizer is configured."),
    (NOBODY, ErrorCode.cluster_authorization_failed, "Not authorized to DESCRIBE the cluster's ACLs.")])
def test_describe_acls_needs_an_authorizer_and_describe_on_the_cluster(authorizer, code, message):
    answer = run(DescribeAcls(FakeAcls(READ_T)), 29, describe(3), authorizer)
    assert (answer.error_code, answer.error_message, answer.resources) == (code, message, ())


# -- CreateAcls ----------------------------------------------------------------------------------

def creation(version: int, acl: AclBinding, **changed: Any) -> Any:
    values = {"resource_type": acl.resource_type, "resource_name": acl.name, "resource_pattern_type": acl.pattern,
              "principal": acl.principal, "host": acl.host, "operation": acl.operation,
              "permission_type": acl.permission, **changed}
    return kio("create_acls", version).AclCreation(**values)


@pytest.mark.parametrize("version", [1, 3])
def test_create_acls_refuses_a_bad_creation_alone_and_stores_the_others(version):
    port = FakeAcls()
    request = kio("create_acls", version).CreateAclsRequest(creations=(
        creation(version, READ_T), creation(version, READ_T, principal="bob"),
        creation(version, READ_G, resource_pattern_type=PatternType.MATCH), creation(version, READ_P)))
    results = run(CreateAcls(port), 30, request).results
    assert [r.error_code for r in results] == [ErrorCode.none, ErrorCode.invalid_request, ErrorCode.invalid_request,
                                               ErrorCode.none]
    assert "principal" in results[1].error_message and results[2].error_message == "Invalid patternType MATCH"
    assert port.added == [READ_T, READ_P]


@pytest.mark.parametrize(("authorizer", "code"), [(None, ErrorCode.security_disabled),
                                                   (NOBODY, ErrorCode.cluster_authorization_failed),
                                                   (Acls((Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME)),
                                                    ErrorCode.cluster_authorization_failed)])
def test_create_acls_needs_alter_on_the_cluster_and_answers_every_creation(authorizer, code):
    port = FakeAcls()
    request = kio("create_acls", 3).CreateAclsRequest(creations=(creation(3, READ_T), creation(3, READ_G)))
    assert [r.error_code for r in run(CreateAcls(port), 30, request, authorizer).results] == [code, code]
    assert port.added == []


# -- DeleteAcls ----------------------------------------------------------------------------------

def delete_filter(version: int, resource_type: int, name: str | None, pattern: int = PatternType.ANY) -> Any:
    return kio("delete_acls", version).DeleteAclsFilter(
        resource_type_filter=resource_type, resource_name_filter=name, pattern_type_filter=pattern,
        principal_filter=None, host_filter=None, operation=Operation.ANY, permission_type=Permission.ANY)


@pytest.mark.parametrize("version", [1, 3])
def test_delete_acls_removes_what_each_filter_matches_and_lists_it(version):
    port = FakeAcls(READ_T, READ_P, READ_G)
    request = kio("delete_acls", version).DeleteAclsRequest(filters=(
        delete_filter(version, ResourceType.TOPIC, "t", PatternType.LITERAL),
        delete_filter(version, ResourceType.UNKNOWN, None),
        delete_filter(version, ResourceType.CLUSTER, None)))
    removed, bad, nothing = run(DeleteAcls(port), 31, request).filter_results
    assert removed.error_code == ErrorCode.none
    assert [(m.resource_name, m.pattern_type, m.principal, m.operation) for m in removed.matching_acls] == [
        ("t", PatternType.LITERAL, "User:bob", Operation.READ)]
    assert (bad.error_code, bad.matching_acls) == (ErrorCode.invalid_request, ())
    assert (nothing.error_code, nothing.matching_acls) == (ErrorCode.none, ())
    assert port.stored == [READ_P, READ_G]


def test_delete_acls_needs_alter_on_the_cluster():
    port = FakeAcls(READ_T)
    request = kio("delete_acls", 3).DeleteAclsRequest(filters=(delete_filter(3, ResourceType.ANY, None),))
    [result] = run(DeleteAcls(port), 31, request, NOBODY).filter_results
    assert (result.error_code, result.error_message) == (ErrorCode.cluster_authorization_failed,
                                                         "Not authorized to ALTER the cluster's ACLs.")
    assert port.stored == [READ_T]
    [result] = run(DeleteAcls(port), 31, request, None).filter_results
    assert result.error_code == ErrorCode.security_disabled


# -- DescribeUserScramCredentials ----------------------------------------------------------------

def describe_users(*names: str) -> Any:
    m = kio("describe_user_scram_credentials", 0)
    return m.DescribeUserScramCredentialsRequest(users=tuple(m.UserName(name=n) for n in names) if names else None)


def test_describe_scram_lists_every_user_with_a_credential_when_none_is_named():
    port = FakeScram(bob=("SCRAM-SHA-512", 8192), amy=("SCRAM-SHA-256", 4096))
    answer = run(DescribeUserScramCredentials(port), 50, describe_users())
    assert answer.error_code == ErrorCode.none
    assert [(r.user, r.error_code, [(c.mechanism, c.iterations) for c in r.credential_infos])
            for r in answer.results] == [("amy", 0, [(1, 4096)]), ("bob", 0, [(2, 8192)])]


def test_describe_scram_answers_duplicates_and_unknown_users_with_kafkas_sentences():
    port = FakeScram(bob=("SCRAM-SHA-256", 4096))
    twice, unknown, bob = run(DescribeUserScramCredentials(port), 50, describe_users("bob", "zed", "bob", "amy")
                              ).results[:3]
    assert (twice.user, twice.error_code) == ("bob", ErrorCode.duplicate_resource)
    assert twice.error_message.startswith("Cannot describe SCRAM credentials for the same user twice")
    assert (unknown.user, unknown.error_code) == ("zed", ErrorCode.resource_not_found)
    assert unknown.error_message == "Attempt to describe a user credential that does not exist: zed"
    assert bob.user == "amy"


def test_describe_scram_needs_describe_on_the_cluster():
    answer = run(DescribeUserScramCredentials(FakeScram(bob=("SCRAM-SHA-256", 4096))), 50, describe_users(), NOBODY)
    assert (answer.error_code, answer.results) == (ErrorCode.cluster_authorization_failed, ())
    assert answer.error_message == "Not authorized to describe SCRAM credentials."
    # without an authorizer everyone may
    assert run(DescribeUserScramCredentials(FakeScram()), 50, describe_users(), None).error_code == ErrorCode.none


# -- AlterUserScramCredentials -------------------------------------------------------------------

def alter(deletions: tuple[tuple[str, int], ...] = (), upsertions: tuple[tuple[str, int, int], ...] = (),
          salt: bytes = b"pepper") -> Any:
    m = kio("alter_user_scram_credentials", 0)
    return m.AlterUserScramCredentialsRequest(
        deletions=tuple(m.ScramCredentialDeletion(name=n, mechanism=c) for n, c in deletions),
        upsertions=tuple(m.ScramCredentialUpsertion(name=n, mechanism=c, iterations=i, salt=salt,
                                                    salted_password=b"salted") for n, c, i in upsertions))


def results(answer: Any) -> list[tuple[str, ErrorCode, str | None]]:
    return [(r.user, r.error_code, r.error_message) for r in answer.results]


def test_alter_scram_stores_the_derived_keys_and_deletes_what_exists():
    port = FakeScram(bob=("SCRAM-SHA-256", 4096))
    answer = run(AlterUserScramCredentials(port), 51, alter(deletions=(("bob", 1),), upsertions=(("amy", 2, 8192),)))
    assert results(answer) == [("bob", ErrorCode.none, None), ("amy", ErrorCode.none, None)]
    assert port.stored == {("amy", "SCRAM-SHA-512"): SCRAM_SHA_512.credential(b"salted", b"pepper", 8192)}
    assert port.stored[("amy", "SCRAM-SHA-512")] != SCRAM_SHA_256.credential(b"salted", b"pepper", 8192)


@pytest.mark.parametrize(("request_", "code", "message"), [
    (alter(upsertions=(("amy", 1, 4095),)), ErrorCode.unacceptable_credential, "Too few iterations"),
    (alter(upsertions=(("amy", 1, 16385),)), ErrorCode.unacceptable_credential, "Too many iterations"),
    (alter(upsertions=(("amy", 3, 4096),)), ErrorCode.unsupported_sasl_mechanism, "Unknown SCRAM mechanism"),
    (alter(upsertions=(("amy", 1, 4096),), salt=b""), ErrorCode.unacceptable_credential,
     "Salt and salted password must not be empty"),
    (alter(deletions=(("amy", 1),)), ErrorCode.resource_not_found,
     "Attempt to delete a user credential that does not exist"),
    (alter(deletions=(("amy", 1),), upsertions=(("amy", 2, 4096),)), ErrorCode.resource_not_found,
     "Attempt to delete a user credential that does not exist"),
])
def test_alter_scram_refuses_bad_input_per_user_with_kafkas_sentences(request_, code, message):
    port = FakeScram()
    assert results(run(AlterUserScramCredentials(port), 51, request_)) == [("amy", code, message)]
    assert port.stored == {}


def test_alter_scram_a_user_named_twice_fails_as_a_whole_and_the_others_go_on():
    port = FakeScram(bob=("SCRAM-SHA-256", 4096))
    answer = run(AlterUserScramCredentials(port), 51, alter(deletions=(("bob", 1),),
                                                            upsertions=(("bob", 2, 4096), ("", 1, 4096),
                                                                        ("cy", 1, 4096))))
    assert results(answer) == [
        ("bob", ErrorCode.duplicate_resource, "A user credential cannot be altered twice in the same request"),
        ("", ErrorCode.unacceptable_credential, "Username must not be empty"), ("cy", ErrorCode.none, None)]
    assert set(port.stored) == {("bob", "SCRAM-SHA-256"), ("cy", "SCRAM-SHA-256")}


def test_alter_scram_needs_alter_on_the_cluster_and_changes_nothing_without_it():
    port = FakeScram(bob=("SCRAM-SHA-256", 4096))
    describe_only = Acls((Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME))
    answer = run(AlterUserScramCredentials(port), 51, alter(deletions=(("bob", 1),), upsertions=(("amy", 1, 4096),)),
                 describe_only)
    assert results(answer) == [(u, ErrorCode.cluster_authorization_failed, "Not authorized to alter SCRAM credentials.")
                               for u in ("bob", "amy")]
    assert set(port.stored) == {("bob", "SCRAM-SHA-256")}
