"""bench/joins.py, simultaneous joins of new groups, on a tiny scale: two classic joins against the
`minikafka serve` it starts. Its figures are not checked here, only that every join got its
partitions and that it reports the broker's part and the broker's CPU."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


@pytest.mark.slow  # about 10 s: a broker, two consumers' joins twice
def test_two_joins_report_the_brokers_part_and_cpu():
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "joins.py"), "--joins", "2", "--rounds", "1",
                          "--cold", "1", "--settle", "0"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"^cold #1 K=2: broker's part\s+2\s", run.stdout, re.M), run.stdout
    assert re.search(r"^K=2: broker's part\s+2\s", run.stdout, re.M), run.stdout
    assert re.search(r"^K=2: broker CPU [\d.]+ ms per join", run.stdout, re.M), run.stdout
