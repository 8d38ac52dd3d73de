"""The instructor guide's times and agendas are the ones ``tests/course/agenda.py`` computes from
the speaker notes and the measured run times, and every day of every plan fits its hours."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.course import agenda

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "instructor-guide.md"
DAYS = [pytest.param(day, id=f"{plan}, day {n}") for plan, days in agenda.PLANS.items()
        for n, day in enumerate(days, 1)]
REGENERATE = "run `python -m tests.course.agenda` and put its tables in docs/instructor-guide.md (Spanish: its catalog)"


def test_the_guide_holds_every_notebooks_time_as_computed():
    assert agenda.times_table() in GUIDE.read_text(), f"the guide's table of times is out of date: {REGENERATE}"
    assert agenda.totals() in GUIDE.read_text(), f"the guide's totals are out of date: {REGENERATE}"
    assert sorted(agenda.RUN_SECONDS) == agenda.lessons() == sorted(agenda.TITLES), "a lesson without a time"


@pytest.mark.parametrize("day", DAYS)
def test_every_day_fits_its_hours_and_the_guide_shows_it_as_computed(day):
    assert agenda.ends(day) <= agenda.END, f"the day ends at {agenda.clock(agenda.ends(day))}, after 17:00"
    assert day.count("lunch") == 1 and day.count("break") == 2
    assert agenda.day_table(day) in GUIDE.read_text(), f"the guide shows another schedule for this day: {REGENERATE}"


def test_the_one_day_plan_has_the_faker_producer_and_the_php_style_consumer():
    assert {"09", "10"} <= set(agenda.PLANS["one day"][0])


def test_the_operations_plan_has_the_operations_lab():
    assert "lab 08c" in {item for day in agenda.PLANS["two days"] for item in day}
