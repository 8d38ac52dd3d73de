"""The README's shell blocks run exactly as written.

Every ```bash block of the README is either run here, from a scratch directory that
holds the repository's ``.venv`` and ``config`` (so data directories land there), or named
in ``NOT_RUN_HERE`` with the test that covers it instead. A new block that is neither fails.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCKS = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)

NOT_RUN_HERE = {
    "./course ": "opening JupyterLab is tests/course/test_course_script.py; `./course test` is CI itself",
    "docker compose up": "no Docker engine here; tests/compose validates docker-compose.yml with Compose v2",
    "./course slides": "tests/slides builds every deck, plain and executed, and opens it in Chromium",
    ".venv/bin/minikafka link serve": "its second line needs the control port the first prints: "
                                      "tests/netfault/test_proxy.py::test_the_command_line_changes_a_running_network",
    ".venv/bin/minikafka node status": "it acts on a cluster another terminal runs (serve --controllers N --links): "
                                       "tests/processes/test_node_and_link_commands.py",
}
PORTS = (9092, 9093, 9094, 19092)


def block_starting(text: str) -> str:
    found = [b for b in BLOCKS if b.lstrip().startswith(text)]
    assert len(found) == 1, f"expected one README block starting with {text!r}, found {len(found)}"
    return found[0]


def commands(block: str) -> list[str]:
    """The block's commands, continuation lines joined, comments kept (bash ignores them)."""
    return [c for c in block.replace("\\\n", " ").splitlines() if c.strip() and not c.lstrip().startswith("#")]


@pytest.fixture
def scratch(tmp_path):
    """A folder to run README blocks in, holding the README's fixed ports for the test: two of these
    tests at once (pytest-xdist workers) would both find 9092 free and then collide on it."""
    import fcntl
    import tempfile
    with open(Path(tempfile.gettempdir()) / "kafka-hands-on-readme-ports.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield from _scratch(tmp_path)


def _scratch(tmp_path):
    for name in (".venv", "config"):
        (tmp_path / name).symlink_to(ROOT / name)
    busy = []
    for port in PORTS:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                busy.append(port)
    if busy:
        pytest.skip(f"the README's commands use ports {PORTS}; {busy} are taken on this machine")
    yield tmp_path
    # Run at the repository's root, as the README says, a block leaves these files behind:
    # each must be ignored by git, or a learner's tree is full of untracked files.
    written = sorted(p.name + ("/" if p.is_dir() else "") for p in tmp_path.iterdir()
                     if p.name not in (".venv", "config"))
    shown = [name for name in written if subprocess.run(["git", "check-ignore", "--no-index", "-q", name],
                                                        cwd=ROOT).returncode != 0]
    assert shown == [], f"the README's blocks write {shown} at the root and .gitignore does not list them"


def test_every_shell_block_is_run_or_accounted_for():
    runnable = {".venv/bin/minikafka serve  ", ".venv/bin/minikafka serve &",
                ".venv/bin/minikafka serve --brokers 3 --data"}
    for block in BLOCKS:
        first = block.lstrip()
        assert any(first.startswith(k) for k in NOT_RUN_HERE) or any(first.startswith(k) for k in runnable), (
            f"README block not run by any test:\n{block}")


def test_the_command_line_tools_block_runs_as_written(scratch):
    block = block_starting(".venv/bin/minikafka serve &")
    done = subprocess.run(["bash", "-e", "-c", block], cwd=scratch, capture_output=True, text=True, timeout=180)
    out = done.stdout + done.stderr  # like Kafka's tools, some counts go to stderr
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Created topic orders." in out and "PartitionCount: 3" in out
    assert "alice\thi" in out and "bob\thello" in out and "Processed a total of 2 messages" in out
    assert re.search(r"my-group\s+orders\s+\d\s+\d\s+\d\s+0", out), out  # the group's committed offsets, lag 0
    assert "Sent 5 records to fakeusers" in out
    assert "key: alice payload: hi" in out or "key: bob payload: hello" in out  # dump-log of partition 0
    assert "Traceback" not in done.stderr


def test_the_operations_block_runs_as_written(scratch):
    block = block_starting(".venv/bin/minikafka serve --brokers 3 --data")
    done = subprocess.run(["bash", "-e", "-c", block], cwd=scratch, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "Successfully started partition reassignments for orders-0,orders-1,orders-2" in out
    assert "Querying brokers for log directories information" in out and '"logDir":' in out
    assert "LeaderId:" in out and "CurrentVoters:" in out
    moved = [p["replicas"] for p in json.loads((scratch / "plan.json").read_text())["partitions"]]
    assert all(set(r) <= {2, 3} for r in moved)
    assert not list((scratch / ".ops-a" / "broker-1").glob("orders-*"))  # broker 1's replicas were deleted
    assert "Traceback" not in done.stderr


def test_each_serve_line_starts_a_broker_as_written(scratch):
    for line in commands(block_starting(".venv/bin/minikafka serve  ")):
        proc = subprocess.Popen(["bash", "-c", line], cwd=scratch, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)
        try:
            seen, deadline = [], time.monotonic() + 60
            while time.monotonic() < deadline:
                text = proc.stdout.readline()
                if not text:
                    break
                seen.append(text)
                if "listening on" in text:
                    break
            assert seen and "listening on" in seen[-1], f"{line}\n{''.join(seen)}"
            if "--brokers 3" in line and "--links" not in line:  # with links, clients dial the proxies
                assert "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094" in seen[-1]
            if "19092" in line:
                assert "127.0.0.1:19092 (in memory)" in seen[-1]
        finally:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(30)
        assert proc.returncode in (0, 130), f"{line} ended with {proc.returncode} after Ctrl-C"
