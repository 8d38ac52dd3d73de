"""The official Java client (kafka-clients 4.3.0) against minikafka: producer, consumer with both
group protocols, admin client, transactions, fencing and a share consumer, each a scenario of
tests/java/Conformance.java run in its own JVM. Skipped, with one sentence, where Java or the
jars (``python -m tests.java.jars``, run by ``./course test``) are missing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.java.jars import CACHE, jars

SOURCE = Path(__file__).with_name("Conformance.java")
SCENARIOS = ["produce-consume-classic", "produce-consume-consumer", "admin", "transactions", "fencing", "share"]


@pytest.fixture(scope="module")
def classpath(tmp_path_factory) -> str:
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("Java 17 (javac and java) is not installed, so the Java client cannot run")
    found = jars()
    if not found:
        pytest.skip(f"the Java client's jars are not in {CACHE}: run `python -m tests.java.jars` (./course test does)")
    classes = tmp_path_factory.mktemp("java-classes")
    cp = ":".join(str(j) for j in found)
    done = subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", str(classes), str(SOURCE)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return f"{cp}:{classes}"


@pytest.mark.timeout(180)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_java_client(classpath, make_cluster, scenario):
    cluster = make_cluster(brokers=1, config={"group.initial.rebalance.delay.ms": 0})
    done = subprocess.run(["java", "-cp", classpath, "Conformance", scenario, cluster.bootstrap_servers],
                          capture_output=True, text=True, timeout=150)
    verdict = [line for line in done.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert done.returncode == 0 and verdict and verdict[-1].startswith("PASS"), (
        "\n".join(verdict) or done.stdout[-2000:] + done.stderr[-2000:])
