"""Self-check questions at the end of a notebook: pick an answer, get feedback.

    course.quiz([
        course.Question("Two records with the same key go to...",
                        ["the same partition", "any partition", "the leader's partition 0"],
                        answer=0, why="The partitioner hashes the key, so equal keys land together."),
    ])

In JupyterLab each question is a set of radio buttons and a *Check* button that says
whether the choice is right and why. Where no widget can run (a deck, an HTML export,
papermill), the same questions appear as static HTML with each answer folded in a
``<details>`` element, so the quiz is readable everywhere and never blocks a run.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, Sequence

from .i18n import _


@dataclass(frozen=True)
class Question:
    prompt: str
    options: Sequence[str]
    answer: int  # index into options
    why: str  # shown with the verdict, right or wrong

    def __post_init__(self) -> None:
        if not 0 <= self.answer < len(self.options):
            raise ValueError(f"answer {self.answer} is not one of the {len(self.options)} options of {self.prompt!r}")

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


def static_html(questions: Sequence[Question]) -> str:
    """The quiz as HTML that needs no kernel: questions, options, answers folded."""
    items = []
    for n, q in enumerate(questions, 1):
        options = "".join(f"<li>{_text(o)}</li>" for o in q.options)
        items.append(f"<div class='course-quiz'><p><b>{n}. {_text(q.prompt)}</b></p><ol type='a'>{options}</ol>"
                     f"<details><summary>{_('Answer')}</summary><p>{_text(q.options[q.answer])}. "
                     f"{_text(q.why)}</p></details></div>")
    return "".join(items)


def _widget(question: Question, n: int) -> Any:
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

    def __init__(self, questions: Sequence[Question]):
        if not questions:
            raise ValueError("a quiz needs at least one question")
        self.questions = list(questions)

    def _repr_html_(self) -> str:
        return static_html(self.questions)

    def widgets(self) -> Any:
        import ipywidgets as widgets
        return widgets.VBox([_widget(q, n) for n, q in enumerate(self.questions, 1)])


def quiz(questions: Sequence[Question]) -> Quiz:
    """Show the questions: interactive in JupyterLab, folded static HTML in exports and decks."""
    from IPython import get_ipython
    from IPython.display import HTML, display
    q = Quiz(questions)
    shell = get_ipython()
    if shell is not None and getattr(shell, "kernel", None) is not None:
        display(q.widgets())  # a live kernel: buttons that answer
        display(HTML(f"<details><summary>{_('All answers')}</summary>{static_html(q.questions)}</details>"))
    else:
        display(HTML(static_html(q.questions)))
    return q
