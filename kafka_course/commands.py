"""``shell("minikafka ...")``: a command line of the course's tools, run as a terminal would run it.

Notebooks and labs show the tools as the lines a learner types in a terminal, so the
same line works there (with the course's environment active) and, with ``kafka-topics.sh``
for ``minikafka topics`` and so on, on a real Kafka installation.
"""

from __future__ import annotations

import shlex

__all__ = ["ExitStatus", "shell"]


class ExitStatus(int):
    """A command's exit status: 0 for success. A notebook shows it only when it is not 0."""

    def _ipython_display_(self) -> None:
        if self:
            print(f"(exit status {int(self)})")


def shell(command: str) -> ExitStatus:
    """Run a ``minikafka ...`` command line and return its exit status; it prints what it prints.

    In a terminal with the course's environment active you would type the same line (on a
    real Kafka installation, ``kafka-topics.sh`` for ``minikafka topics`` and so on). Here
    the command runs inside this Python process, so it starts at once.
    """
    from minikafka.api import main
    argv = shlex.split(command)
    if not argv or argv[0] != "minikafka":
        raise ValueError(f"shell() runs minikafka commands only, not {command!r}")
    try:
        return ExitStatus(main(argv[1:]) or 0)
    except SystemExit as e:  # a tool's error: its sentence is already printed
        return ExitStatus(e.code if isinstance(e.code, int) else 1)

