"""Lab 08b's check logs in as each user and tries what the shop needs and what nobody asked for:
the reference ACLs pass, and each usual mistake fails with a sentence that names it.

The ACLs are added with the course's ``minikafka acls`` (``kafka-acls.sh``) as the lab's
administrator, on the embedded secured twin, in this process.
"""

from __future__ import annotations

import contextlib
import io

import pytest

import kafka_course as course
from kafka_course.checks import CheckFailed
from kafka_course.labs import lock_down

SOLUTION = [
    "--allow-principal User:orders-app --producer --topic shop.orders",
    "--allow-principal User:billing --consumer --topic shop.orders --group billing",
    "--allow-principal User:billing --operation Write --operation Describe --topic shop.invoices",
    "--allow-principal User:auditor --operation Read --operation Describe --topic shop. "
    "--resource-pattern-type prefixed",
    "--allow-principal User:auditor --operation Read --group audit- --resource-pattern-type prefixed",
]


@pytest.fixture(scope="module")
def embedded():
    course.bootstrap()  # the secured twin stands next to the embedded course cluster


def attempt(acls: list[str]) -> CheckFailed | None:
    """Start the lab over, add ``acls`` as the administrator, run the check; its failure, if any."""
    lab = lock_down.prepare()
    with contextlib.redirect_stdout(io.StringIO()):
        for line in acls:
            assert course.shell(f"minikafka acls {lab.tool_options} --add {line}") == 0, line
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            lock_down.check(lab)
    except CheckFailed as failed:
        return failed
    return None


def test_the_reference_acls_pass(embedded):
    assert attempt(SOLUTION) is None


def replace(old: str, *new: str) -> list[str]:
    assert old in SOLUTION
    return [line for line in SOLUTION if line != old] + list(new)


WRONG = {
    "no ACLs at all (the starter)": ([], ["orders-app could not write shop.orders", "--producer shortcut"]),
    "everything to everybody": (
        ["--allow-principal User:* --operation All --topic * --group *"],
        ["mallory could read shop.orders", "User:*", "orders-app could read shop.orders"]),
    "billing without its group": (
        replace(SOLUTION[1], "--allow-principal User:billing --operation Read --operation Describe "
                             "--topic shop.orders"),
        ["billing could not read shop.orders in the group billing (GROUP_AUTHORIZATION_FAILED)",
         "Read on its group"]),
    "the auditor's topics listed, not prefixed": (
        replace(SOLUTION[3], "--allow-principal User:auditor --operation Read --operation Describe "
                             "--topic shop.orders --topic shop.invoices"),
        ["auditor could not read shop.refunds", "prefixed pattern"]),
    "All on the invoices for billing": (
        replace(SOLUTION[2], "--allow-principal User:billing --operation All --topic shop.invoices"),
        ["billing could read shop.invoices in the group billing, which nobody asked for"]),
    "a shop. prefix for orders-app": (
        replace(SOLUTION[0], "--allow-principal User:orders-app --producer --topic shop. --resource-pattern-type "
                             "prefixed"),
        ["orders-app could write shop.invoices, which nobody asked for", "prefixed pattern such as shop."]),
    "any group for the auditor": (
        replace(SOLUTION[4], "--allow-principal User:auditor --operation Read --group *"),
        ["auditor could read shop.orders in the group billing, which nobody asked for"]),
    "a prefixed consumer ACL for billing": (
        replace(SOLUTION[1], "--allow-principal User:billing --consumer --topic shop.orders --group billing "
                             "--resource-pattern-type prefixed"),
        ["billing could also read shop.orders-archive", "commit offsets in the group billing-reports",
         "A prefixed group ACL for billing", "A prefixed topic ACL for shop.orders covers"]),
    "Describe on every topic for everyone": (
        [*SOLUTION, "--allow-principal User:* --operation Describe --topic *"],
        ["orders-app could also see", "see payroll listed (Describe)", "mallory could also see shop.orders listed",
         "Describe on topics beyond orders-app's own", "an ACL for User:* (every principal)"]),
    "a prefix too short for the auditor": (
        replace(SOLUTION[3], "--allow-principal User:auditor --operation Read --operation Describe --topic * "),
        ["auditor could read payroll", "too short"]),
}


@pytest.mark.parametrize("mistake", list(WRONG))
def test_a_plausible_mistake_fails_with_a_sentence_that_names_it(embedded, mistake):
    acls, sentences = WRONG[mistake]
    failed = attempt(acls)
    assert failed is not None, f"{mistake}: the check passed"
    said = " ".join(failed.failures)
    for sentence in sentences:
        assert sentence in said, f"{mistake}: expected {sentence!r} in {said!r}"


def test_the_check_skips_with_a_sentence_without_a_secured_cluster(capsys):
    lock_down.check(None)
    assert "skipped" in capsys.readouterr().out
