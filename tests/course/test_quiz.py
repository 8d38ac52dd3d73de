"""The question banks (``kafka_course/quizzes/nbNN.py``) and how a question shows.

- Every lesson has a bank; every question of a bank is asked, by a ``course.predict`` cell of its
  notebook or in its end-of-notebook recap (``RECAP``).
- Right answers are spread over the positions: no position holds more than 40% of them, over all
  banks (always picking B once scored 72%).
- In a live kernel a question shows once: one widget per cell, no second copy as the cell's value
  or as static HTML (tests/course/test_jupyterlab.py counts the widgets of every notebook in JupyterLab).
"""

from __future__ import annotations

import importlib
from collections import Counter
from pathlib import Path

import nbformat
import pytest

from tests.course.test_notebooks import NOTEBOOKS, kernel_env, name, number, predictions  # noqa: F401 (a fixture)

ROOT = Path(__file__).resolve().parents[2]
BANKS = sorted(p.stem.removeprefix("nb") for p in (ROOT / "kafka_course" / "quizzes").glob("nb*.py"))
MOST_AT_ONE_POSITION = 0.40


def bank(notebook: str):
    return importlib.import_module(f"kafka_course.quizzes.nb{notebook}")


def test_every_lesson_has_a_bank_and_every_bank_a_lesson():
    assert sorted(number(p) for p in NOTEBOOKS) == BANKS, (
        "one bank kafka_course/quizzes/nbNN.py per lesson notebooks/NN-*.ipynb")


def test_right_answers_are_spread_over_the_positions():
    questions = [q for nb in BANKS for q in bank(nb).QUESTIONS.values()]
    assert questions, "no question banks yet"
    positions = Counter(q.answer for q in questions)
    top, count = positions.most_common(1)[0]
    assert count <= MOST_AT_ONE_POSITION * len(questions), (
        f"{count} of {len(questions)} right answers are option {'abcdef'[top]} ({count / len(questions):.0%}; "
        f"at most {MOST_AT_ONE_POSITION:.0%}): {dict(sorted(positions.items()))}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_every_question_of_the_bank_is_asked(path):
    nb = nbformat.read(path, as_version=4)
    found = bank(number(path))
    asked = {key for _, _, key in predictions(nb)} | set(found.RECAP)
    unused = sorted(set(found.QUESTIONS) - asked)
    assert not unused, (f"kafka_course/quizzes/nb{number(path)}.py: questions neither predicted in {name(path)} "
                        f"nor in its RECAP: {unused}")


@pytest.mark.timeout(120)
def test_a_question_shows_once_in_a_live_kernel(kernel_env):  # noqa: F811
    """One display of widgets per cell: no value for JupyterLab to show again, no folded HTML copy."""
    from nbclient import NotebookClient
    asks = ('course.quiz([course.Question("Default acks?", ["0", "1", "all"], answer=2, why="Since Kafka 3.0."),\n'
            '    course.Question("Replicas serve reads?", ["never", "when asked"], answer=1, why="KIP-392.")])')
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import kafka_course as course"),
                                         nbformat.v4.new_code_cell(asks)])
    NotebookClient(nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    outputs = nb.cells[1].outputs
    assert [o.output_type for o in outputs] == ["display_data"], outputs
    assert "application/vnd.jupyter.widget-view+json" in outputs[0].data
    assert "text/html" not in outputs[0].data, "a second copy of the questions, as HTML"
