"""The short form of ``bench/faults_processes.py``: 40 s of idempotent acks=all writes to three
broker processes and three controller processes while brokers and the active controller are
killed and restarted, nodes paused and links cut; then nothing acknowledged may be lost or
duplicated and the replicas' logs must agree."""

from __future__ import annotations

import pytest

from bench.faults_processes import run_processes

pytestmark = pytest.mark.slow


@pytest.mark.timeout(240)
def test_acknowledged_writes_survive_kills_pauses_and_cut_links_of_broker_and_controller_processes(tmp_path):
    # the first faults are fixed (the active controller killed, a broker killed) so the short run
    # always has them; the rest is drawn from the seed
    result, figures = run_processes(tmp_path, 40, seed=7, producers=2,
                                    first=["kill-controller", "kill-broker", "cut-broker"])
    assert figures["settled"], figures
    assert figures["producer_fatal_errors"] == [], figures  # e.g. a new leader's OUT_OF_ORDER_SEQUENCE_NUMBER
    assert result.lost == [], result.lost[:5]
    assert result.duplicated == {}, list(result.duplicated.items())[:5]
    assert result.wrong_offset == [] and result.reordered == [], figures
    assert result.diverged == [], result.diverged
    assert result.ok
    assert figures["acknowledged"] > 1000, figures
    assert figures["controller_kills"] >= 1 and figures["controller_elections"] >= 1, figures
    assert figures["max_seconds_to_new_controller"] < 30, figures  # a new leader, not a hang
    assert figures["faults_by_kind"].get("kill-broker", 0) >= 1, figures
    # every replica held every record below the high watermark: the comparison was not vacuous
    stored = figures["acknowledged"] + figures["indeterminate_stored"]
    assert sum(counts[0] for counts in figures["replica_records"].values()) == stored, figures
    assert all(len(counts) == 1 for counts in figures["replica_records"].values()), figures
