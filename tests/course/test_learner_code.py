"""Issue 25's figure: how many of the lessons' code cells call only the course's helpers
(``tests/course/learner_code.py``), at most 20%, and the README states it as measured."""

from __future__ import annotations

import re
from pathlib import Path

from tests.course.learner_code import TARGET, helper_only_share

ROOT = Path(__file__).resolve().parents[2]


def test_at_most_a_fifth_of_the_lessons_code_cells_call_only_course_helpers():
    helper, counted = helper_only_share()
    assert helper <= TARGET * counted, (
        f"{helper} of {counted} code cells ({helper / counted:.0%}) call only course helpers; at most {TARGET:.0%}: "
        "show the real client call (`python -m tests.course.learner_code` lists them per notebook)")


def test_the_readme_states_the_measured_figure_in_both_languages():
    helper, counted = helper_only_share()
    said = {"README.md": r"(\d+) of (\d+) code cells \((\d+) ?%\)",
            "README.es.md": r"(\d+) de (\d+) celdas de código \((\d+) ?%\)"}
    for readme, pattern in said.items():
        found = re.search(pattern, (ROOT / readme).read_text())
        assert found, f"{readme} states how many lesson code cells call only course helpers ({pattern})"
        assert tuple(map(int, found.groups())) == (helper, counted, round(100 * helper / counted)), (
            f"{readme} says {found.group(0)}; measured {helper} of {counted} ({helper / counted:.0%}): update the "
            "README (and README.es through translations/es/README.po)")
