"""Notebooks 09-11 (the fakeusers pipeline) run top to bottom, and are stored without outputs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = [ROOT / "notebooks" / name for name in (
    "09-faker-producer.ipynb", "10-php-style-consumer.ipynb", "11-spark-structured-streaming.ipynb")]
LAB = ROOT / "labs" / "11-streaming-aggregation"
STORED = NOTEBOOKS + [LAB / "starter.ipynb", LAB / "solution.ipynb"]


@pytest.mark.parametrize("path", STORED, ids=lambda p: p.name)
def test_notebook_is_stored_without_outputs(path):
    cells = json.loads(path.read_text())["cells"]
    dirty = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and (c["outputs"] or c["execution_count"])]
    assert not dirty, f"{path.name}: cells {dirty} carry outputs; clear them before committing"


@pytest.mark.parametrize("path", STORED, ids=lambda p: p.name)
def test_notebook_follows_the_course_conventions(path):
    code = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    assert "".join(code[0]["source"]).strip() == "from minikafka import course", "first code cell imports the helper"
    assert "parameters" in code[1]["metadata"].get("tags", []), "second code cell is tagged parameters"
    assert "BOOTSTRAP = None" in "".join(code[1]["source"])
    assert not any("while True" in "".join(c["source"]) for c in code), "every loop in a notebook is bounded"


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_top_to_bottom(path, tmp_path):
    if "spark" in path.name and shutil.which("java") is None:
        pytest.skip("the Spark notebook needs Java 17")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-cell-timeout=600", "-p", "no:cacheprovider",
         "-q", "--rootdir", str(tmp_path), str(path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=880)
    assert done.returncode == 0, f"{path.name} failed:\n{done.stdout[-6000:]}\n{done.stderr[-2000:]}"
