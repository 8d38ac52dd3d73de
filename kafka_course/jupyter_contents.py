"""The notebooks as JupyterLab opens them for the course (``./course`` starts JupyterLab with it).

JupyterLab writes the kernel's ``language_info`` into a notebook it opens; when that differs
from the file's, the notebook is "modified" before the learner typed anything, and closing it
asks to save. The notebooks are committed with the full ``language_info`` a kernel writes, but
the Python version is the learner's own: this contents manager hands JupyterLab each course
notebook with the version of the Python that serves it (the course's kernel is that same
Python), so opening and closing a notebook changes nothing.
"""

from __future__ import annotations

import platform
from typing import Any

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager


def with_this_python(notebook: dict[str, Any]) -> dict[str, Any]:
    """``notebook`` (nbformat JSON) with its Python ``language_info`` naming this interpreter's version."""
    info = notebook.get("metadata", {}).get("language_info")
    if isinstance(info, dict) and info.get("name") == "python":
        info["version"] = platform.python_version()
    return notebook


class CourseContentsManager(AsyncLargeFileManager):
    """Jupyter's default contents manager, with each notebook's Python version set as above."""

    async def get(self, path: str, content: bool = True, type: str | None = None,  # noqa: A002 - Jupyter's names
                  format: str | None = None, require_hash: bool = False, **kwargs: Any) -> dict[str, Any]:  # noqa: A002
        if require_hash:  # passed on only when asked for, as before: older jupyter_servers lack the argument
            kwargs["require_hash"] = require_hash
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        if model.get("type") == "notebook" and isinstance(model.get("content"), dict):
            with_this_python(model["content"])
        return model
