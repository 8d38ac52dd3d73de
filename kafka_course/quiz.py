"""Questions a learner answers: one to predict right before the cell that answers it, and a
short recap at the end of a notebook.

The questions of notebook NN live out of the learner's view, in its bank
``kafka_course/quizzes/nbNN.py`` (``QUESTIONS`` by key, ``RECAP`` the keys of the end quiz),
written in English with ``N_()`` so the package's catalog translates them::

    course.predict("02", "same-key")   # right before the cell that answers it
    course.quiz("02")                  # the recap, before the summary

In JupyterLab each question is a set of radio buttons and a *Check* button that says
whether the choice is right and why; it shows once, and the cell's source holds no answer.
Where no widget can run (a deck, an HTML export, papermill), the same questions appear as
static HTML with each answer folded in a ``<details>`` element, so the quiz is readable
everywhere and never blocks a run.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .i18n import _

RIGHT_BEFORE = "?"  # the number shown for a predict question


@dataclass(frozen=True)
class Question:
    prompt: str
    options: Sequence[str]
    answer: int  # index into options
    why: str  # shown with the verdict, right or wrong

    def __post_init__(self) -> None:
        if not 0 <= self.answer < len(self.options):
            raise ValueError(f"answer {self.answer} is not one of the {len(self.options)} options of {self.prompt!r}")

    def translated(self) -> Question:
        """The question in the course's language of this moment (banks hold English, marked ``N_``)."""
        return Question(_(self.prompt), [_(o) for o in self.options], self.answer, _(self.why))

    def verdict(self, choice: int | None) -> str:
        if choice is None:
            return _("Pick an answer first.")
        right = self.options[self.answer]
        if choice == self.answer:
            return "✔ " + _("Right.") + f" {self.why}"
        return "✘ " + _("Not quite: the answer is “{right}”.").format(right=right) + f" {self.why}"


def _text(text: str) -> str:
    """Escaped text, with `code` in backticks shown as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def static_html(questions: Sequence[Question], numbers: Sequence[str] | None = None) -> str:
    """The quiz as HTML that needs no kernel: questions, options, answers folded."""
    items = []
    for n, q in zip(numbers or [str(i) for i in range(1, len(questions) + 1)], questions):
        options = "".join(f"<li>{_text(o)}</li>" for o in q.options)
        items.append(f"<div class='course-quiz'><p><b>{n}. {_text(q.prompt)}</b></p><ol type='a'>{options}</ol>"
                     f"<details><summary>{_('Answer')}</summary><p>{_text(q.options[q.answer])}. "
                     f"{_text(q.why)}</p></details></div>")
    return "".join(items)


def _widget(question: Question, n: str) -> Any:
    import ipywidgets as widgets
    choice = widgets.RadioButtons(options=[(o, i) for i, o in enumerate(question.options)], value=None,
                                  layout=widgets.Layout(width="auto"))
    button = widgets.Button(description=_("Check"), button_style="primary")
    feedback = widgets.HTML()

    def check(_: Any) -> None:
        feedback.value = html.escape(question.verdict(choice.value))
    button.on_click(check)
    title = widgets.HTML(f"<b>{n}. {_text(question.prompt)}</b>")
    return widgets.VBox([title, choice, widgets.HBox([button, feedback])])


class Quiz:
    """Displays as widgets in a live kernel, and as static HTML everywhere else."""

    def __init__(self, questions: Sequence[Question], numbers: Sequence[str] | None = None):
        if not questions:
            raise ValueError("a quiz needs at least one question")
        self.questions = list(questions)
        self.numbers = list(numbers or [str(i) for i in range(1, len(self.questions) + 1)])

    def _repr_html_(self) -> str:
        return static_html(self.questions, self.numbers)

    def widgets(self) -> Any:
        import ipywidgets as widgets
        return widgets.VBox([_widget(q, n) for n, q in zip(self.numbers, self.questions)])

    def show(self) -> None:
        """Once: widgets in a live kernel, folded static HTML anywhere else (papermill, decks)."""
        from IPython import get_ipython
        from IPython.display import HTML, display
        shell = get_ipython()
        if shell is not None and getattr(shell, "kernel", None) is not None:
            display(self.widgets())
        else:
            display(HTML(static_html(self.questions, self.numbers)))


def bank(notebook: str) -> Any:
    """The question bank of a notebook ("02", "08b"): ``kafka_course/quizzes/nb02.py``."""
    import importlib
    try:
        return importlib.import_module(f"{__package__}.quizzes.nb{notebook}")
    except ModuleNotFoundError:
        raise ValueError(f"no question bank for notebook {notebook!r} (kafka_course/quizzes/nb{notebook}.py)") from None


def question(notebook: str, key: str) -> Question:
    """One question of a notebook's bank, in the course's language."""
    questions = bank(notebook).QUESTIONS
    if key not in questions:
        raise ValueError(f"notebook {notebook} has no question {key!r}; it has {', '.join(questions)}")
    return questions[key].translated()


def predict(notebook: str, key: str) -> None:
    """One question to answer before running the next cell, which answers it."""
    Quiz([question(notebook, key)], [RIGHT_BEFORE]).show()


def quiz(questions: str | Sequence[Question]) -> None:
    """The recap at the end of a notebook (its bank's ``RECAP``), or the questions given; shown once,
    and nothing returned, so JupyterLab does not show it a second time as the cell's value."""
    if isinstance(questions, str):
        notebook = questions
        questions = [question(notebook, key) for key in bank(notebook).RECAP]
    Quiz(questions).show()
