"""bench/room.py, the workshop-room load generator, on a tiny room: two learners for a few
seconds against the `minikafka serve` it starts. Its figures are not checked here (speed is
for bench/), only that it drives the clients it says it does and that they see no error."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


@pytest.mark.slow  # about 10 s: a broker, two learners' clients, their groups closing
def test_a_tiny_room_reports_operations_and_no_error():
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "room.py"), "--learners", "2", "--seconds", "3",
                          "--burst-every", "1", "--think", "0.3"], capture_output=True, text=True, timeout=120)
    out = run.stdout
    counts = dict(re.findall(r"^(produce|create_topic \(a new admin client\)|init_transactions)\s+(\d+)", out, re.M))
    assert set(counts) == {"produce", "create_topic (a new admin client)", "init_transactions"}, out + run.stderr
    assert int(counts["create_topic (a new admin client)"]) == 2 and int(counts["produce"]) > 0
    assert "errors: 0" in out, out
    assert re.search(r"(PASS|FAIL)  broker RSS < 1 GiB: \d+ MiB", out), out
