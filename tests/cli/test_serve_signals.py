"""`minikafka serve` stops cleanly on SIGTERM (what `kill`, `docker stop` and systemd send) and on
SIGINT, also when it runs as a background job of a script, where SIGINT starts out ignored:
leadership moves, logs are flushed and each log directory gets Kafka's clean-shutdown marker,
so the next start does not check every segment."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer

MARKER = ".kafka_cleanshutdown"


def start_in_a_script(data_dir: Path, log: Path) -> int:
    """`minikafka serve &` from a non-interactive bash script: returns the broker's pid."""
    script = (f'"{sys.executable}" -m minikafka.cli.main serve --port 0 --data-dir "{data_dir}" '
              f'>"{log}" 2>&1 &\necho $!\n')
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    return int(done.stdout.strip())


def address(log: Path) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(r"listening on (\S+?:\d+)", log.read_text() if log.exists() else "")
        if found:
            return found.group(1)
        time.sleep(0.2)
    raise AssertionError(f"serve did not start: {log.read_text() if log.exists() else '(no output)'}")


def ended(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_serve_cleanly_from_a_background_job(tmp_path, sig):
    data, log = tmp_path / "data", tmp_path / "serve.log"
    pid = start_in_a_script(data, log)
    try:
        p = Producer({"bootstrap.servers": address(log)})
        p.produce("kept", b"acknowledged")
        assert p.flush(30) == 0
        os.kill(pid, sig)
        assert ended(pid, 30), f"serve still runs 30 s after {sig.name}"
    finally:
        if not ended(pid, 0):
            os.kill(pid, signal.SIGKILL)
    assert "stopped cleanly" in log.read_text(), log.read_text()
    assert list(data.rglob(MARKER)), f"no {MARKER} under {data}: the next start would check every segment"
