"""The course on any cluster: every notebook and lab solution against a broker outside the kernel.

An attendee may bring a company or cloud cluster and set only ``KAFKA_BOOTSTRAP_SERVERS``.
Here that cluster is a separate ``minikafka serve --brokers 3`` process with Kafka's own
defaults (a 3 s ``group.initial.rebalance.delay.ms``, a 30 s ``replica.lag.time.max.ms``),
which the notebooks cannot look inside nor stop: cells that need minikafka's inside view
or stop brokers must skip with one sentence, and everything else must run to the end.

The same run is the course's papermill run with other parameters than the defaults (one
more partition, half the records: ``other_parameters``): papermill stops at the first error
that escapes a cell, so exit 0 means the notebook ran to its end with those sizes, on that
cluster, and no librdkafka log line reached a cell's output.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from tests.course.test_notebooks import (RUNNABLE, code_cells, name, once_more_if_spark_was_late, other_parameters,
                                        run_timeout, timed)

ROOT = Path(__file__).resolve().parents[2]
SKIP_SENTENCES = ("skipped on", "cannot be stopped from here", "so it is skipped")


@pytest.fixture(scope="module")
def outside_cluster(tmp_path_factory):
    """``minikafka serve --brokers 3`` as its own process, on free ports, with Kafka's defaults."""
    work = tmp_path_factory.mktemp("outside")
    log = (work / "serve.log").open("w+")
    server = subprocess.Popen([sys.executable, "-m", "minikafka.cli.main", "serve", "--brokers", "3", "--port", "0",
                               "--data-dir", str(work / "data")], stdout=log, stderr=subprocess.STDOUT, cwd=work)
    deadline, servers = time.monotonic() + 60, None
    while servers is None and time.monotonic() < deadline:
        assert server.poll() is None, (work / "serve.log").read_text()
        found = re.search(r"listening on (\S+)", (work / "serve.log").read_text())
        servers = found.group(1) if found else None
        time.sleep(0.1)
    assert servers, "minikafka serve did not start"
    yield servers
    server.terminate()
    server.wait(30)


@pytest.mark.slow
@pytest.mark.parametrize("path", timed(RUNNABLE))
def test_runs_with_other_parameters_against_a_cluster_outside_the_kernel(path, outside_cluster, tmp_path):
    params = other_parameters(path)
    assert params, f"{name(path)} has no size parameters to vary"
    env = {**os.environ, "KAFKA_BOOTSTRAP_SERVERS": outside_cluster, "PYTHONPATH": str(ROOT),
           "KAFKA_COMPOSE_FILE": str(tmp_path / "no-compose-here.yml")}
    started = time.monotonic()
    done = once_more_if_spark_was_late(path, lambda: subprocess.run(
        [sys.executable, "-m", "papermill", "--cwd", str(path.parent), str(path), str(tmp_path / path.name),
         "-k", "python3", "-y", json.dumps(params), "--execution-timeout", "180", "--no-progress-bar"],
        capture_output=True, text=True, timeout=run_timeout(path), env=env), tmp_path / path.name)
    assert done.returncode == 0, f"{name(path)} with {params} failed against {outside_cluster}:\n{done.stderr[-3000:]}"
    executed = nbformat.read(tmp_path / path.name, as_version=4)
    printed = "".join(o.get("text", "") for c in code_cells(executed) for o in c.outputs)
    assert "Started an embedded minikafka" not in printed, "the notebook started its own broker"
    assert "KRaft controller processes" not in printed, "the notebook started its own process cluster"
    noisy = [line for c in code_cells(executed) for o in c.outputs if o.get("name") == "stderr"
             for line in o.text.splitlines() if "|FAIL|" in line or line.startswith("%")]
    assert not noisy, f"librdkafka wrote to {name(path)}'s cell output: {noisy[:3]}"
    skipped = [line for line in printed.splitlines() if any(s in line for s in SKIP_SENTENCES)]
    print(f"{name(path)} with {params}: {time.monotonic() - started:.0f} s against {outside_cluster}, "
          f"{len(skipped)} cells skipped")
