"""`./course` opens JupyterLab on the repository root, as root too, with extra options
passed through and no "get news?" popup."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> dict:
    """GET a JSON answer; the server writes its runtime file a moment before it listens, so a
    refused connection is tried again for a while (CI met that gap once)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return json.loads(r.read())
        except urllib.error.URLError as e:
            if not isinstance(e.reason, ConnectionRefusedError) or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def server_info(runtime: Path, port: int, proc: subprocess.Popen, log: Path) -> dict:
    """The server's runtime file (jpserver-PID.json) holds its port and token."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for f in runtime.glob("jpserver-*.json"):
            try:
                info = json.loads(f.read_text())
            except ValueError:
                continue  # being written
            if info.get("port") == port:
                return info
        assert proc.poll() is None, "JupyterLab exited:\n" + log.read_text()[-2000:]
        time.sleep(0.2)
    raise AssertionError("JupyterLab did not start in 120 s:\n" + log.read_text()[-2000:])


def test_course_opens_jupyterlab_on_the_repository_root_with_options_passed_through(tmp_path):
    port = free_port()
    runtime, log = tmp_path / "runtime", tmp_path / "jupyter.log"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime), "BROWSER": "true"}
    with log.open("w") as out:
        proc = subprocess.Popen([str(ROOT / "course"), "open", "--no-browser", f"--port={port}"], cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        info = server_info(runtime, port, proc, log)
        base, token = f"http://127.0.0.1:{port}", info["token"]
        assert Path(info["root_dir"]).resolve() == ROOT
        names = {c["name"] for c in get(f"{base}/api/contents?token={token}")["content"]}
        assert {"notebooks", "labs", "README.md"} <= names
        settings = get(f"{base}/lab/api/settings/@jupyterlab/apputils-extension:notification?token={token}")
        defaults = {k: v.get("default") for k, v in settings["schema"]["properties"].items()}
        assert defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False
    finally:
        proc.terminate()
        proc.wait(30)


def test_a_selection_that_matches_nothing_says_so_and_still_fails():
    """`./course test -k typo` must not look like a pass: one sentence, and exit code 5 for CI."""
    import sys
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "tests/test_code_checks.py", "-k", "nothing_matches_this"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 5, done.stdout[-2000:]
    assert "No test ran: nothing matched the selection" in done.stdout
    assert "warning" not in done.stdout.lower(), "the dependencies' warnings are filtered"
