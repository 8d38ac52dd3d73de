"""Stream processors as their own processes, and their state read back from the changelog topics.

A Kafka Streams or Faust application is an ordinary process: you start it, stop it for a
deploy (SIGTERM: a Faust worker finishes the records in hand, commits its offsets and
leaves the group), or it crashes (SIGKILL: nothing is committed). ``FaustWorker`` does
exactly that to ``faust -A <app> worker``, run with the course's Python, and keeps the
worker's log in a file. ``changelog_table`` reads a table's compacted changelog topic to
its end and keeps the latest value per key: the table as any instance would restore it.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ._kafka import read_to_end

READY = "[^Worker]: Ready"
ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # Faust colours its log lines even in a file
# ``python -m faust``, after asking Linux to send the worker SIGTERM if the process that started it
# dies (a notebook kernel restarted mid-demo), so no worker is left behind consuming.
LAUNCH = ("import signal, sys\n"
          "if sys.platform == 'linux':\n"
          "    import ctypes; ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG\n"
          "from faust.cli.faust import cli; cli()")


class FaustWorker:
    """One ``faust -A app worker`` process, configured through its environment.

    ``settings`` become environment variables (``PAGE_VIEWS_TOPIC="..."``), as for a
    deployed app; ``log_dir`` keeps the logs (a fresh temporary folder by default).
    """

    def __init__(self, app: str, *, log_dir: str | Path | None = None, **settings: Any):
        self.app = app
        self.env = {**os.environ, **{k: str(v) for k, v in settings.items()}}
        self.log_dir = Path(log_dir or tempfile.mkdtemp(prefix="faust-"))
        self.log_path = self.log_dir / "worker.log"
        self.process: subprocess.Popen | None = None
        self.runs = 0
        atexit.register(self.kill)

    @property
    def command(self) -> str:
        """The command as you would type it."""
        return f"faust -A {self.app} worker -l info --without-web"

    def _argv(self) -> list[str]:
        return [sys.executable, "-c", LAUNCH, *self.command.split()[1:]]

    def start(self, timeout: float = 60) -> FaustWorker:
        """Start the worker and wait until it says it is ready (partitions assigned, tables restored)."""
        if self.process is not None and self.process.poll() is None:
            raise RuntimeError(f"the worker is already running (pid {self.process.pid})")
        self.runs += 1
        self.log_path = self.log_dir / f"worker-{self.runs}.log"
        with self.log_path.open("w") as out:
            self.process = subprocess.Popen(self._argv(), env=self.env, cwd=self.log_dir, stdout=out,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while READY not in self.log_path.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"the Faust worker did not start; the end of its log:\n{self.tail()}")
            time.sleep(0.1)
        return self

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM, as a deploy does: the worker commits, flushes and leaves its group. Returns the exit code."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise RuntimeError(f"the Faust worker did not stop within {timeout} s:\n{self.tail()}") from None

    def kill(self) -> None:
        """SIGKILL: a crash. Nothing is committed or flushed."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def log(self, containing: str = "") -> list[str]:
        """The lines of the current run's log that contain ``containing``, without Faust's prefix."""
        lines = ANSI_COLOUR.sub("", self.log_path.read_text()).splitlines() if self.log_path.exists() else []
        return [line.split("] ", 3)[-1].strip() for line in lines if containing in line]

    def tail(self, lines: int = 20) -> str:
        return "\n".join(self.log_path.read_text().splitlines()[-lines:]) if self.log_path.exists() else ""

    def __enter__(self) -> FaustWorker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def changelog_table(bootstrap: str, topic: str, timeout: float = 10) -> dict[Any, Any]:
    """The latest value per key of a Faust changelog topic (JSON keys and values), tombstones removed.

    Keys that are JSON lists (a windowed table's ``[key, [start, end]]``) become tuples.
    Aborted transactions are skipped: the records are read with ``read_committed``.
    """
    table: dict[Any, Any] = {}
    for msg in read_to_end(bootstrap, topic, timeout=timeout):
        raw_key, raw_value = msg.key(), msg.value()
        if raw_key is None:
            continue
        key = _hashable(json.loads(raw_key))
        if raw_value is None:
            table.pop(key, None)
        else:
            table[key] = json.loads(raw_value)
    return table


def _hashable(value: Any) -> Any:
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value
