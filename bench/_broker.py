"""Start ``minikafka serve`` as its own process for a benchmark (the way a user would
run any broker), unless a bootstrap address is given."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile


@contextlib.contextmanager
def broker(bootstrap: str | None, *extra: str):
    if bootstrap:
        yield bootstrap
        return
    with tempfile.TemporaryDirectory(prefix="mk-bench-") as data:
        proc = subprocess.Popen([sys.executable, "-m", "minikafka.cli.main", "serve", "--port", "0",
                                 "--data-dir", data, "--log-level", "WARNING", *extra],
                                stdout=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline()
            if "listening on" not in line:
                raise SystemExit(f"broker did not start: {line!r}")
            yield line.split("listening on ")[1].split()[0]
        finally:
            proc.terminate()
            proc.wait(10)


