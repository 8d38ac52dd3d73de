"""The course runs: every notebook and lab, executed the way CI and learners run them.

- Committed notebooks carry no outputs and no execution counts, and follow the course
  conventions (first code cell imports the helper, second is the papermill parameters).
- Every notebook and every lab solution passes nbval in lax mode (cells must run without
  error; outputs are compared only in cells tagged ``nbval-check-output``).
- Every notebook and lab solution runs again through papermill with other parameters, to
  its end (exit 0: errors shown on purpose are caught by ``course.expect_error``) and
  without librdkafka's log lines in the cells' output.
- Every lab starter, untouched, fails in its check cell with ``CheckFailed``: the check
  really checks something.

Each notebook runs in a fresh kernel of this environment, with its own embedded minikafka.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SOLUTIONS = sorted((ROOT / "labs").glob("*/solution.ipynb"))
STARTERS = sorted((ROOT / "labs").glob("*/starter.ipynb"))
RUNNABLE = NOTEBOOKS + SOLUTIONS
RUN_TIMEOUT = 180  # seconds for one notebook, kernel start included; the course aims at < 60


def name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def code_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory):
    """Make the kernel name ``python3`` mean this interpreter, whatever else is installed."""
    share = tmp_path_factory.mktemp("jupyter")
    spec_dir = share / "kernels" / "python3"
    spec_dir.mkdir(parents=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (course)", "language": "python"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = str(share) + (os.pathsep + old if old else "")
    yield
    if old is None:
        os.environ.pop("JUPYTER_PATH", None)
    else:
        os.environ["JUPYTER_PATH"] = old


def test_every_lab_has_a_starter_and_a_solution():
    labs = sorted(p for p in (ROOT / "labs").iterdir() if p.is_dir())
    assert labs, "no labs found"
    for lab in labs:
        assert (lab / "starter.ipynb").exists() and (lab / "solution.ipynb").exists(), lab


@pytest.mark.parametrize("path", RUNNABLE + STARTERS, ids=name)
def test_stored_without_outputs(path):
    """Outputs are never committed: a notebook with outputs or execution counts fails."""
    nb = nbformat.read(path, as_version=4)
    dirty = [i for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert not dirty, f"{name(path)} carries outputs or execution counts in cells {dirty}; clear them before committing"


@pytest.mark.parametrize("path", RUNNABLE + STARTERS, ids=name)
def test_follows_the_course_conventions(path):
    """First code cell imports the course helper; the second is papermill's parameters cell."""
    cells = code_cells(nbformat.read(path, as_version=4))
    assert "import kafka_course as course" in cells[0].source
    assert "parameters" in cells[1].metadata.get("tags", []), "the second code cell must be tagged 'parameters'"
    assert "BOOTSTRAP = None" in cells[1].source
    tagged = [c.source[:60] for c in cells if "raises-exception" in c.metadata.get("tags", [])]
    assert not tagged, (f"{name(path)} lets an error escape on purpose in {tagged}; wrap the call in "
                        "`with course.expect_error():` so papermill and Run All go on")


def run_nbval(path: Path) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env", "-p", "no:cacheprovider",
            "--nbval-cell-timeout=120", "-q", "--rootdir", str(path.parent), str(path)]
    return subprocess.run(args, cwd=path.parent, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.slow
@pytest.mark.parametrize("path", RUNNABLE, ids=name)
def test_runs_under_nbval(path):
    started = time.monotonic()
    done = run_nbval(path)
    seconds = time.monotonic() - started
    print(f"{name(path)}: nbval {seconds:.1f} s")
    assert done.returncode == 0, f"nbval failed for {name(path)}:\n{done.stdout[-6000:]}\n{done.stderr[-2000:]}"


def parameters(path: Path) -> dict:
    cell = code_cells(nbformat.read(path, as_version=4))[1]
    values = {}
    for node in ast.parse(cell.source).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = ast.literal_eval(node.value)
    return values


# Sizes chosen by hand where the generic rule below would make a notebook slow or trivial.
OTHER_PARAMETERS = {
    "05-brokers-and-replication.ipynb": {"PARTITIONS": 2, "MESSAGES": 120},
    "06-storage-retention-compaction.ipynb": {"MESSAGES": 800, "ACCOUNTS": 3},
    "07-delivery-guarantees.ipynb": {"PARTITIONS": 2, "MESSAGES": 200, "CRASHES": 4},
    "08-transactions.ipynb": {"PARTITIONS": 2, "MESSAGES": 300, "KILLS": 2},
    "05-survive-a-broker-failure": {"PARTITIONS": 2},
    "06-event-sourcing": {"ACCOUNTS": 6, "EVENTS": 200},
    "07-at-least-once": {"PAYMENTS": 150, "CRASHES": 3},
    "08-exactly-once-pipeline": {"ORDERS": 150, "CRASHES": 4},
}


def other_parameters(path: Path) -> dict:
    """Different sizes than the defaults: one more partition, half the records."""
    chosen = OTHER_PARAMETERS.get(path.parent.name if path.parent.parent.name == "labs" else path.name)
    if chosen:
        return chosen
    changed = {}
    for key, value in parameters(path).items():
        if key == "PARTITIONS":
            changed[key] = value + 1
        elif isinstance(value, int) and key != "TIME_LIMIT":
            changed[key] = max(10, value // 2)
    return changed


@pytest.mark.slow
@pytest.mark.parametrize("path", RUNNABLE, ids=name)
def test_runs_with_other_parameters(path, tmp_path, kernel_env):
    import papermill
    params = other_parameters(path)
    assert params, f"{name(path)} has no size parameters to vary"
    started = time.monotonic()
    # No error on purpose escapes a cell (they are shown by course.expect_error), so papermill,
    # which stops at the first error, runs every notebook to its end with exit 0.
    papermill.execute_notebook(str(path), str(tmp_path / path.name), parameters=params, kernel_name="python3",
                               cwd=str(path.parent), progress_bar=False, execution_timeout=120)
    executed = nbformat.read(tmp_path / path.name, as_version=4)
    noisy = [line for c in code_cells(executed) for o in c.outputs if o.get("name") == "stderr"
             for line in o.text.splitlines() if "|FAIL|" in line or line.startswith("%")]
    assert not noisy, f"librdkafka wrote to {name(path)}'s cell output: {noisy[:3]}"
    print(f"{name(path)} with {params}: papermill {time.monotonic() - started:.1f} s")


@pytest.mark.slow
@pytest.mark.parametrize("path", STARTERS, ids=name)
def test_untouched_starter_fails_its_check(path, tmp_path, kernel_env):
    """A check that passes on the starter checks nothing; it must fail, and in the check cell."""
    import papermill
    from papermill.exceptions import PapermillExecutionError
    params = {"TIME_LIMIT": 5} if "TIME_LIMIT" in parameters(path) else {}
    with pytest.raises(PapermillExecutionError) as failure:
        papermill.execute_notebook(str(path), str(tmp_path / path.name), parameters=params, kernel_name="python3",
                                   cwd=str(path.parent), progress_bar=False, execution_timeout=120)
    assert failure.value.ename == "CheckFailed", f"the starter failed with {failure.value.ename}, not in its check"
    executed = nbformat.read(tmp_path / path.name, as_version=4)
    last = code_cells(executed)[-1]
    assert any(o.get("ename") == "CheckFailed" for o in last.outputs), "the failure must come from the last cell"
