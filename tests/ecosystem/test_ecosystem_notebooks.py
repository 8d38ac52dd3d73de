"""Notebooks 12 and 13 run top to bottom under nbval, and are committed without outputs.

Each notebook runs in its own ``python -m pytest --nbval-lax`` process, as CI would run it
by hand: every cell must execute without an error (cells tagged ``raises-exception`` may
fail on purpose), against the embedded minikafka unless KAFKA_BOOTSTRAP_SERVERS is set.
Sections that need PostgreSQL, RabbitMQ or NATS skip themselves with a sentence when those
servers are absent, so the notebooks pass either way.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = [REPO / "notebooks" / "12-ecosystem.ipynb", REPO / "notebooks" / "13-kafka-rabbitmq-nats.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    dirty = [i for i, cell in enumerate(nb.cells)
             if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count") is not None)]
    assert dirty == [], f"{path.name}: clear the outputs of cells {dirty} before committing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_follows_the_course_conventions(path):
    nb = nbformat.read(path, as_version=4)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert "from minikafka.course import" in code[0].source or "from minikafka import course" in code[0].source
    assert "parameters" in code[1].metadata.get("tags", []) and "BOOTSTRAP = None" in code[1].source
    text = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    for heading in ("Why this matters", "## Summary", "## Exercises"):
        assert heading in text, f"{path.name} has no {heading!r}"
    assert "while True" not in "\n".join(cell.source for cell in code), "every loop in a notebook is bounded"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_under_nbval(path):
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "--nbval-lax", "-p", "no:cacheprovider", "-q",
                           "--rootdir", str(path.parent), str(path)],
                          cwd=REPO, capture_output=True, text=True, timeout=240)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert took < 60, f"{path.name} took {took:.0f} s; the course promises well under a minute"
