"""`./course` opens JupyterLab on the repository root, as root too, with extra options
passed through and no "get news?" popup; run again, it points at the JupyterLab already open;
it installs system packages only for the commands that need them, and a test selection that
matches nothing says so."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

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


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """``./course open`` on a free port, with its own runtime folder (where Jupyter lists its servers)."""
    tmp_path = tmp_path_factory.mktemp("course")
    port = free_port()
    runtime, log = tmp_path / "runtime", tmp_path / "jupyter.log"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime), "BROWSER": "true"}
    with log.open("w") as out:
        proc = subprocess.Popen([str(ROOT / "course"), "open", "--no-browser", f"--port={port}"], cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        yield server_info(runtime, port, proc, log), env
    finally:
        proc.terminate()
        proc.wait(30)


def test_course_opens_jupyterlab_on_the_repository_root_with_options_passed_through(lab):
    info, _ = lab
    base, token = f"http://127.0.0.1:{info['port']}", info["token"]
    assert Path(info["root_dir"]).resolve() == ROOT
    names = {c["name"] for c in get(f"{base}/api/contents?token={token}")["content"]}
    assert {"notebooks", "labs", "README.md"} <= names
    settings = get(f"{base}/lab/api/settings/@jupyterlab/apputils-extension:notification?token={token}")
    defaults = {k: v.get("default") for k, v in settings["schema"]["properties"].items()}
    assert defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False


def as_root_with_apt(tmp_path: Path) -> tuple[dict, Path]:
    """An environment where ``id -u`` says 0 and apt-get and npm only write down how they were
    called (in the file returned), on a PATH without kcat, chromium and dot."""
    import shutil
    fake, calls = tmp_path / "bin", tmp_path / "calls"
    fake.mkdir()
    for tool in ("bash", "dirname", "sha1sum", "cut", "mkdir", "cat", "rm", "touch", "ls", "mktemp", "tar", "du"):
        if shutil.which(tool):
            (fake / tool).symlink_to(shutil.which(tool))
    scripts = {"id": 'echo 0', "apt-get": f'echo "apt-get $*" >> {calls}', "npm": f'echo "npm $*" >> {calls}'}
    for name, body in scripts.items():
        (fake / name).write_text(f"#!/bin/sh\n{body}\n")
        (fake / name).chmod(0o755)
    return {**os.environ, "PATH": str(fake)}, calls


def test_a_second_course_points_at_the_jupyterlab_already_open_and_installs_nothing(lab, tmp_path):
    info, env = lab
    root_env, calls = as_root_with_apt(tmp_path)
    again = subprocess.run(["bash", str(ROOT / "course")], cwd=ROOT, env={**root_env, **{
        k: env[k] for k in ("JUPYTER_RUNTIME_DIR", "BROWSER")}}, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"JupyterLab is already open for this course: http://127.0.0.1:{info['port']}/lab?token={info['token']}" \
        in again.stdout
    assert len(list(Path(env["JUPYTER_RUNTIME_DIR"]).glob("jpserver-*.json"))) == 1, "a second server started"
    assert not calls.exists(), f"./course installed system packages: {calls.read_text()}"


def test_system_packages_only_for_the_commands_that_need_them(tmp_path):
    """`./course slides` needs Graphviz: as root, without a person at the terminal, it installs it
    (CI); COURSE_INSTALL_TOOLS=no declines for them."""
    root_env, calls = as_root_with_apt(tmp_path)
    slides = subprocess.run(["bash", str(ROOT / "course"), "slides", "--help"], cwd=ROOT, env=root_env,
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert slides.returncode == 0, slides.stdout + slides.stderr
    installed = calls.read_text().splitlines()
    assert "apt-get install -y -qq graphviz" in installed and not any("chromium" in c for c in installed), installed
    calls.unlink()
    declined = subprocess.run(["bash", str(ROOT / "course"), "slides", "--help"], cwd=ROOT, stdin=subprocess.DEVNULL,
                              env={**root_env, "COURSE_INSTALL_TOOLS": "no"}, capture_output=True, text=True,
                              timeout=300)
    assert declined.returncode == 0 and "not installing graphviz" in declined.stdout, declined.stdout
    assert "apt-get" not in (calls.read_text() if calls.exists() else "")


def test_a_selection_that_matches_nothing_says_so_and_still_fails():
    """`./course test -k typo` must not look like a pass: one sentence, and exit code 5 for CI."""
    import sys
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "tests/test_code_checks.py", "-k", "nothing_matches_this"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 5, done.stdout[-2000:]
    assert "No test ran: nothing matched the selection" in done.stdout
    assert "warning" not in done.stdout.lower(), "the dependencies' warnings are filtered"
