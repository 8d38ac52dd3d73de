"""The figures the documents share agree with each other and with what was measured.

The README, the instructor guide and their Spanish and Portuguese editions each state the room kit's size and
the environment's; a figure changed in one place and not the others (785 MB in the README and
about 670 MB in the guide) is what this catches. The environment's size is measured when the
course's ``.venv`` is there (CI has it)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = ["README.md", "README.es.md", "README.pt-BR.md",
             "docs/instructor-guide.md", "docs/es/instructor-guide.md", "docs/pt-BR/instructor-guide.md"]
# Each figure: what introduces it in either language, then the number and its unit.
FIGURES = {
    "room kit": r"room-kit\.tar`\s+\((?:about |unos )?([\d.,]+) (MB|GB)",
    "environment": r"(?:the environment is|el entorno ocupa|o ambiente ocupa) ([\d.,]+) (MB|GB)",
}


def stated(figure: str) -> dict[str, float]:
    """Document -> the figure in MB, for every document that states it (the same everywhere inside one)."""
    found = {}
    for doc in DOCUMENTS:
        values = {float(n.replace(",", ".")) * (1000 if unit == "GB" else 1)
                  for n, unit in re.findall(FIGURES[figure], (ROOT / doc).read_text())}
        assert len(values) <= 1, f"{doc} gives the {figure} two sizes: {values}"
        if values:
            found[doc] = values.pop()
    return found


@pytest.mark.parametrize("figure", FIGURES)
def test_the_documents_give_the_same_figure(figure):
    found = stated(figure)
    assert len(found) >= 2, f"the {figure}'s size is stated in {list(found)} only: the pattern no longer matches"
    assert len(set(found.values())) == 1, f"the documents disagree on the {figure}: {found}"


def test_the_environment_is_the_size_the_documents_say():
    venv = ROOT / ".venv"
    if not (venv / "lib").is_dir():
        pytest.skip("no course environment (.venv) to measure here")
    kilobytes = int(subprocess.run(["du", "-sLk", str(venv)], capture_output=True, text=True).stdout.split()[0])
    said = next(iter(stated("environment").values()))
    measured = kilobytes / 1024
    assert abs(measured - said) <= 0.15 * said, f"the documents say {said:.0f} MB, .venv is {measured:.0f} MB"
