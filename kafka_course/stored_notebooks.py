"""A notebook as the repository stores it: no outputs, no execution counts, the full
``language_info`` a kernel writes (so JupyterLab opens it unmodified).

``./course setup`` makes this git's *clean filter* for ``*.ipynb`` (``.gitattributes``): git
compares and commits each notebook in this form, so a notebook a learner ran and saved, with
its outputs, is not a local change, and ``git pull`` updates it (the outputs are replaced by
the new version; code the learner wrote is a change, which ``git stash`` keeps aside)::

    python -S kafka_course/stored_notebooks.py < notebook.ipynb > stored.ipynb

It runs as a script on the standard library alone: git starts it once per notebook it looks at, and
importing the course package (or nbformat, whose validator loads every format checker) costs seconds.
"""

from __future__ import annotations

import json
import sys
from typing import Any

# What ipykernel writes, with the course's reference Python (kafka_course.jupyter_contents gives
# JupyterLab the learner's own version when it opens a notebook).
LANGUAGE_INFO = {"codemirror_mode": {"name": "ipython", "version": 3}, "file_extension": ".py",
                 "mimetype": "text/x-python", "name": "python", "nbconvert_exporter": "python",
                 "pygments_lexer": "ipython3", "version": "3.11.7"}
RUN_ONLY = ("execution", "collapsed", "scrolled")  # cell metadata a run or a click adds
SPLIT_MIMES = ("application/javascript", "image/svg+xml")  # split into lines like text, as nbformat does


def stored(notebook: dict[str, Any]) -> dict[str, Any]:
    """``notebook`` (nbformat 4 JSON) without what running it added."""
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
        for key in RUN_ONLY:
            cell.get("metadata", {}).pop(key, None)
    info = notebook.get("metadata", {}).get("language_info")
    if isinstance(info, dict) and info.get("name") == "python":
        notebook["metadata"]["language_info"] = dict(LANGUAGE_INFO)
    notebook.get("metadata", {}).pop("papermill", None)
    return notebook


def layout(notebook: dict[str, Any]) -> str:
    """``notebook`` as nbformat's v4 writer lays it out (one space of indent, sorted keys, each text
    split into lines), written here with ``json`` alone: importing nbformat takes seconds (its
    validator loads every format checker), and git runs this filter once per notebook."""
    for cell in notebook.get("cells", []):
        if isinstance(cell.get("source"), str):
            cell["source"] = cell["source"].splitlines(True)
        for bundle in cell.get("attachments", {}).values():
            for mime, value in list(bundle.items()):
                if isinstance(value, str) and (mime.startswith("text/") or mime in SPLIT_MIMES):
                    bundle[mime] = value.splitlines(True)
        cell.get("metadata", {}).pop("trusted", None)
    for key in ("orig_nbformat", "orig_nbformat_minor", "signature"):
        notebook.get("metadata", {}).pop(key, None)
    return json.dumps(notebook, indent=1, sort_keys=True, separators=(",", ": "), ensure_ascii=False) + "\n"


def main() -> int:
    text = sys.stdin.read()
    try:
        notebook = json.loads(text)
    except ValueError:  # not a notebook git can parse (a merge conflict): leave it to the person
        sys.stdout.write(text)
        return 0
    if notebook.get("nbformat") == 4:
        sys.stdout.write(layout(stored(notebook)))
        return 0
    import nbformat  # an older format: nbformat's own writer
    sys.stdout.write(nbformat.writes(nbformat.from_dict(stored(notebook))) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
