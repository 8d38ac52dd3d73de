"""Lab 02's check fails the mistakes learners make with Kafka's partitioner, and passes the solution.

Each wrong solution is the reference solution with one mistake put in (see notebook_code),
or an answer that borrows a partitioner instead of writing one; the check must fail it
with a sentence that names the mistake.
"""

from __future__ import annotations

import time

import pytest

from kafka_course.checks import CheckFailed
from kafka_course.labs import partitioner as lab_check

from .notebook_code import mutated, run, solution, starter

NAMES = ("murmur2", "partition")
SIGNED = ("return h - 2**32 if h >= 2**31 else h", "return h")
MASK = ("(murmur2(key) & 0x7FFFFFFF) % num_partitions",)


def fails(functions: dict, bootstrap: str, capsys, *expected: str) -> str:
    with pytest.raises(CheckFailed) as failure:
        lab_check.check(functions["murmur2"], functions["partition"], bootstrap=bootstrap, partitions=4, keys=40)
    printed = capsys.readouterr().out
    for words in expected:
        assert words in str(failure.value), f"{words!r} not in the failure: {failure.value}"
    return printed


def test_the_reference_solution_passes(one_broker, capsys):
    started = time.monotonic()
    functions = solution("02", *NAMES)
    lab_check.check(functions["murmur2"], functions["partition"], bootstrap=one_broker)
    assert "All 4 checks passed" in capsys.readouterr().out
    print(f"lab 02 check: {time.monotonic() - started:.1f} s")


def test_importing_the_course_partitioner_is_not_writing_one(one_broker, capsys):
    given = {}
    exec("from kafka_course.partitioner import murmur2, partition_for as partition", given)
    printed = fails(given, one_broker, capsys, "is kafka_course.partitioner.murmur2",
                    "write the hash yourself")
    assert "· not run: murmur2() against Kafka's hash" in printed and "0 of 4 checks passed" in printed


@pytest.mark.parametrize("body, library", [
    ("from kafka.partitioner.default import murmur2 as kafka_python\n"
     "def murmur2(data):\n    h = kafka_python(data)\n    return h - 2**32 if h >= 2**31 else h", "kafka"),
    ("import aiokafka.partitioner\n"
     "def murmur2(data):\n    h = aiokafka.partitioner.murmur2(data)\n    return h - 2**32 if h >= 2**31 else h",
     "aiokafka"),
])
def test_wrapping_a_clients_murmur2_is_not_writing_one(one_broker, capsys, body, library):
    functions = run(body, "a murmur2 that wraps a client's", **solution("02", *NAMES))
    # the learner's murmur2 now calls the client's; partition() calls it in turn
    fails(functions, one_broker, capsys, f"calls {library}.partitioner", "h = ", "write the hash yourself")


def test_a_partition_that_asks_confluent_kafka_is_not_one_written(one_broker, capsys):
    functions = mutated("02", NAMES, (*MASK, "confluent_kafka.murmur2(key, num_partitions)"),
                        confluent_kafka=__import__("confluent_kafka"))
    fails(functions, one_broker, capsys, "partition() calls confluent_kafka", "write the hash yourself")


def test_an_unsigned_hash_is_explained(one_broker, capsys):
    fails(mutated("02", NAMES, SIGNED), one_broker, capsys, "It looks unsigned")


def test_abs_instead_of_the_mask_is_explained(one_broker, capsys):
    functions = mutated("02", NAMES, (*MASK, "abs(murmur2(key)) % num_partitions"))
    fails(functions, one_broker, capsys, "abs() gives a different number", "& 0x7fffffff")


def test_pythons_modulo_on_a_signed_hash_is_explained(one_broker, capsys):
    functions = mutated("02", NAMES, (*MASK, "murmur2(key) % num_partitions"))
    fails(functions, one_broker, capsys, "Python's % of a negative number")


def test_a_forgotten_tail_and_big_endian_blocks_are_located(one_broker, capsys):
    no_tail = mutated("02", NAMES, ("    if len(tail) >= 1:\n        h ^= tail[0]\n        h = (h * M) & MASK\n", ""))
    printed = fails(no_tail, one_broker, capsys, "A key of 1 byte exercises the tail: one leftover byte")
    assert "1 of 4 checks passed, 1 failed and 2 not run." in printed
    big_endian = mutated("02", NAMES, ('"little")', '"big")'))
    fails(big_endian, one_broker, capsys, "4 bytes at a time, little-endian")


def test_the_untouched_starter_fails_the_first_check(one_broker, capsys):
    printed = fails(starter("02", *NAMES), one_broker, capsys, "murmur2() returns 0 for every sample key",
                    "still the starter's stub")
    assert "0 of 4 checks passed, 1 failed and 3 not run." in printed


def test_a_stub_partition_under_a_written_hash_is_caught_first(one_broker, capsys):
    functions = mutated("02", NAMES, (*MASK, "0"))
    fails(functions, one_broker, capsys, "partition() returns 0 for every sample key")


def test_a_forgotten_final_mix_is_located_for_the_empty_key(one_broker, capsys):
    no_mix = mutated("02", NAMES, ("    h ^= h >> 13\n    h = (h * M) & MASK\n    h ^= h >> 15\n", ""))
    said = str(fails(no_mix, one_broker, capsys, "murmur2(b'') should be 275646681", "the final mix"))
    assert "nothing else runs" not in said
