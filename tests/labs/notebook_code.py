"""The code of a lab's notebooks, to run outside Jupyter: the reference solution, and wrong ones made from it.

``solution(lab, "murmur2", "partition")`` runs the solution notebook's cells that define
those names, in a fresh namespace, and returns it. ``mutated(...)`` does the same after
replacing a piece of the source, which is how the tests write the mistakes learners make
without copying the solution: a test fails loudly if the notebook no longer holds the
piece it changes. The source is registered with ``linecache``, so ``inspect.getsource``
works on these functions as it does on a notebook cell's.
"""

from __future__ import annotations

import ast
import linecache
from pathlib import Path
from typing import Any

import nbformat

LABS = Path(__file__).resolve().parents[2] / "labs"


def cell_defining(lab: str, name: str, notebook: str = "solution", /) -> str:
    """The definitions in the code cell of lab ``lab``'s notebook (``"starter"`` or ``"solution"``,
    ``labs/02-partitioner/lab02-partitioner.ipynb`` or ``...-solution.ipynb``) that defines ``name``.

    Only definitions are kept (functions, imports, assignments): the cell's demonstration
    lines, such as a ``print(...)`` that calls the function, are left out.
    """
    folder = next(LABS.glob(f"{lab}-*"))  # "08-" is lab 08, not 08b
    path = folder / f"lab{folder.name}{'-solution' if notebook == 'solution' else ''}.ipynb"
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    found = [s for s in cells if f"def {name}(" in s or f"\n{name} = " in f"\n{s}"]
    assert found, f"{path.name} of lab {lab} has no cell defining {name}"
    return "\n".join(ast.get_source_segment(found[0], node, padded=True) or "" for node in ast.parse(found[0]).body
                     if not isinstance(node, ast.Expr))


def run(source: str, label: str, /, **given: Any) -> dict[str, Any]:
    """Execute ``source`` in a namespace holding ``given``; return the namespace."""
    filename = f"<{label}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict[str, Any] = {"__name__": "__main__", **given}
    exec(compile(source, filename, "exec"), namespace)  # exec: the course's own notebook code
    return namespace


def solution(lab: str, /, *names: str, **given: Any) -> dict[str, Any]:
    """The solution notebook's definitions of ``names`` (cells run in notebook order)."""
    return _definitions(lab, "solution", names, given)


def starter(lab: str, /, *names: str, **given: Any) -> dict[str, Any]:
    """The untouched starter notebook's definitions of ``names``: the first wrong answer."""
    return _definitions(lab, "starter", names, given)


def _definitions(lab: str, notebook: str, names: tuple[str, ...], given: dict[str, Any]) -> dict[str, Any]:
    sources = dict.fromkeys(cell_defining(lab, name, notebook) for name in names)  # each cell once, in order
    return run("\n\n".join(sources), f"lab {lab} {notebook}", **given)


def mutated(lab: str, names: tuple[str, ...], /, *edits: tuple[str, str], **given: Any) -> dict[str, Any]:
    """Like ``solution``, after replacing each ``old`` piece of the source with ``new``."""
    source = "\n\n".join(dict.fromkeys(cell_defining(lab, name) for name in names))
    for old, new in edits:
        assert old in source, f"the lab {lab} solution no longer contains {old!r}; update this wrong solution"
        source = source.replace(old, new)
    return run(source, f"lab {lab} wrong solution", **given)
