"""The reliability part of the course runs: notebooks 05-08 and labs 05-08, and the helpers they stand on.

- The part 2 notebooks and labs exist, carry no outputs, and follow the conventions
  (helper import first, papermill parameters second, a summary and exercises).
- (test_notebooks.py runs every notebook and lab under nbval and papermill, with the
  smaller sizes given in its ``OTHER_PARAMETERS``, and proves the starters fail.)
- The crash tools (``CrashPlan``, ``tally``), the state-machine drawing and the lab
  harnesses behave as the notebooks and checks assume.

"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import nbformat
import pytest

from tests.course.test_notebooks import OTHER_PARAMETERS, ROOT, code_cells, name, parameters

matplotlib.use("Agg")

NOTEBOOKS = [ROOT / "notebooks" / f for f in ("05-brokers-and-replication.ipynb",
                                               "06-storage-retention-compaction.ipynb",
                                               "07-delivery-guarantees.ipynb", "08-transactions.ipynb")]
LABS = [ROOT / "labs" / d for d in ("05-survive-a-broker-failure", "06-event-sourcing", "07-at-least-once",
                                    "08-exactly-once-pipeline")]
SOLUTIONS = [lab / f"lab{lab.name}-solution.ipynb" for lab in LABS]
STARTERS = [lab / f"lab{lab.name}.ipynb" for lab in LABS]

def key(path: Path) -> str:
    return path.parent.name if path.parent.parent.name == "labs" else path.name


def texts(path: Path) -> str:
    return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")


# -- shape: fast ---------------------------------------------------------------------------------
@pytest.mark.parametrize("path", NOTEBOOKS + SOLUTIONS, ids=name)
def test_reliability_other_sizes_name_real_parameters(path):
    assert path.exists(), f"{name(path)} is missing"
    assert set(OTHER_PARAMETERS[key(path)]) <= set(parameters(path)), "the test varies parameters the notebook lacks"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_reliability_notebook_has_an_opening_a_summary_and_exercises(path):
    prose = texts(path)
    for heading in ("**Why this matters.**", "## Summary", "## Exercises"):
        assert heading in prose, f"{name(path)} lacks {heading}"


def test_the_refused_replication_factor_is_shown_as_an_expected_error():
    cells = code_cells(nbformat.read(NOTEBOOKS[0], as_version=4))
    shown = [c for c in cells if "replication_factor=4" in c.source]
    assert len(shown) == 1 and "with course.expect_error():" in shown[0].source


@pytest.mark.parametrize("path", SOLUTIONS + STARTERS, ids=name)
def test_a_lab_calls_its_check_in_the_last_cell(path):
    assert ".check(" in code_cells(nbformat.read(path, as_version=4))[-1].source


# -- the helpers the notebooks stand on: fast -------------------------------------------------------
def test_a_crash_plan_is_repeatable_and_crashes_where_it_said():
    from kafka_course.guarantees import Crash, CrashPlan
    plan = CrashPlan(crashes=3, steps=50, seed=4)
    assert plan.points == CrashPlan(crashes=3, steps=50, seed=4).points and len(plan.points) == 3
    crashed_at = []
    for step in range(1, 51):
        try:
            plan.step()
        except Crash:
            crashed_at.append(step)
    assert crashed_at == plan.points and plan.finished


def test_tally_counts_lost_and_repeated_work():
    from kafka_course.guarantees import tally
    result = tally(["a", "b", "c", "d"], ["a", "b", "b", "c", "c", "c"])
    assert (result.once, result.lost, result.duplicated) == (1, 1, 3)


def test_the_transaction_diagram_is_drawn_from_the_transitions_table():
    from kafka_course import state_machines
    from minikafka.transactions.states import TRANSITIONS, TxnState
    layers = state_machines._layers(TRANSITIONS, TxnState.EMPTY)
    drawn = {state for layer in layers for state in layer}
    assert drawn == {s for row in TRANSITIONS for s in (row[0], row[2])}
    assert layers[0] == [TxnState.EMPTY] and layers[-1] == [TxnState.DEAD]
    fig = state_machines.state_machine_figure(TRANSITIONS, start=TxnState.EMPTY)
    labels = {t.get_text() for t in fig.axes[0].texts}
    assert any("EndTxn(commit)" in label for label in labels)


def test_a_crashing_producer_counts_only_the_end_of_real_batches():
    from kafka_course.guarantees import Crash, CrashPlan
    from kafka_course.labs.exactly_once import CrashingProducer

    class Recorder:
        def __init__(self):
            self.calls = []

        def produce(self, *args, **kwargs):
            self.calls.append("produce")

        def flush(self, *args):
            self.calls.append("flush")
            return 0

    end = CrashPlan(crashes=1, steps=3, seed=0)
    producer = CrashingProducer(Recorder(), CrashPlan(0, 10), end)
    producer.flush(1)  # nothing produced: not a batch boundary
    assert end.taken == 0
    with pytest.raises(Crash, match="right after flush"):
        for _ in range(3):
            producer.produce("topic", b"x")
            producer.flush(1)
    assert end.taken == end.points[0]
