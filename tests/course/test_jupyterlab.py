"""JupyterLab's "Run All", in a real browser: Debian's Chromium driven by Playwright.

A learner opens a notebook and presses Run All; every cell must finish, errors shown on
purpose must stay one line without stopping the run, the quiz must render as widgets, and
no "news" popup may cover the page. The notebooks are copied to a scratch directory first,
so nothing JupyterLab saves can land in the repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.course.test_notebooks import run_timeout

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Every notebook and every lab solution, as paths under the repository root.
NOTEBOOKS = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "notebooks").glob("*.ipynb"))
             + sorted((ROOT / "labs").glob("*/lab*-solution.ipynb"))]

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(CHROMIUM is None, reason="no Chromium: install the Debian package `chromium`")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on a copy of notebooks/ and labs/, with the course's settings (no news popup)."""
    work = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", work / "notebooks")
    shutil.copytree(ROOT / "labs", work / "labs")
    runtime, port = work / "runtime", free_port()
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime), "BROWSER": "true"}
    args = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.root_dir={work}", "--LabApp.expose_app_in_browser=True",
            f"--LabApp.workspaces_dir={work / 'workspaces'}",  # a fresh layout: no notebook left open
            "--ServerApp.contents_manager_class=kafka_course.jupyter_contents.CourseContentsManager"]  # as ./course
    if os.geteuid() == 0:
        args.append("--allow-root")
    log = (work / "lab.log").open("w")
    server = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline, info = time.monotonic() + 120, None
    while info is None and time.monotonic() < deadline:
        for f in runtime.glob("jpserver-*.json"):
            try:
                found = json.loads(f.read_text())
            except ValueError:
                continue
            if found.get("port") == port:
                info = found
        assert server.poll() is None, (work / "lab.log").read_text()[-2000:]
        time.sleep(0.2)
    assert info, "JupyterLab did not start"
    yield f"http://127.0.0.1:{port}", info["token"]
    server.terminate()
    server.wait(30)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield instance
        instance.close()


# The notebook's own view, through JupyterLab's API (window.jupyterapp): the model knows
# each cell's execution count and outputs whether or not the cell is scrolled into view.
_STATE = r"""() => {
    if (!window.jupyterapp) return null;  // the page is still loading JupyterLab
    const panel = window.jupyterapp.shell.currentWidget;
    if (!panel || !panel.content || !panel.sessionContext || !panel.sessionContext.session) return null;
    const code = panel.content.widgets.filter(c => c.model.type === 'code');
    const outputs = code.flatMap(c => c.model.outputs.toJSON());
    return {path: panel.context.path, kernel: panel.sessionContext.session.kernel?.status,
            cells: code.length, done: code.filter(c => c.model.executionCount).length,
            errors: outputs.filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue),
            stderr: outputs.filter(o => o.name === 'stderr').map(o => String(o.text)),
            widgets: outputs.filter(o => o.data && o.data['application/vnd.jupyter.widget-view+json']).length,
            // what each cell that asks questions (course.predict, course.quiz) shows: one set of widgets
            asked: code.filter(c => /^\s*course\.(predict|quiz)\(/.test(c.model.sharedModel.getSource()))
                       .map(c => c.model.outputs.toJSON().map(o =>
                            o.data && o.data['application/vnd.jupyter.widget-view+json'] ? 'widgets' : o.output_type))};
}"""


def questions_asked(path: Path) -> int:
    """The cells that show questions: each displays one set of widgets, and nothing else."""
    cells = json.loads(path.read_text())["cells"]
    return sum(1 for c in cells if c["cell_type"] == "code"
               and "".join(c["source"]).strip().startswith(("course.predict(", "course.quiz(")))


def sessions(base: str, token: str) -> list[dict]:
    """The server's sessions (one per open notebook with its kernel)."""
    import urllib.request
    request = urllib.request.Request(f"{base}/api/sessions", headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=30) as r:
        return json.loads(r.read())


def shut_down_kernels(base: str, token: str) -> None:
    """Stop every kernel the server runs: a finished notebook's kernel (and its embedded
    brokers) would otherwise keep using the CPU the next notebooks need."""
    import urllib.request
    headers = {"Authorization": f"token {token}"}
    for session in sessions(base, token):
        request = urllib.request.Request(f"{base}/api/sessions/{session['id']}", headers=headers, method="DELETE")
        urllib.request.urlopen(request, timeout=30).close()


def test_a_notebook_opens_unmodified(lab, browser):
    """Opening and closing a notebook must not ask to save: its kernel's language_info is the file's."""
    base, token = lab
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        for notebook in ("notebooks/01-messaging-patterns.ipynb", "labs/02-partitioner/es/lab02-partitioner-es.ipynb"):
            workspace = re.sub(r"[^a-z0-9]+", "-", notebook.lower()).strip("-")
            page.goto(f"{base}/lab/workspaces/{workspace}/tree/{notebook}?token={token}")
            opened = f"s && s.path === '{notebook}' && s.kernel === 'idle'"
            page.wait_for_function(f"(() => {{ const s = ({_STATE})(); return {opened}; }})()", timeout=90_000)
            page.wait_for_timeout(2000)  # the kernel's info arrives just after it is idle
            dirty = page.evaluate("window.jupyterapp.shell.currentWidget.context.model.dirty")
            assert dirty is False, f"{notebook} is modified as soon as it opens"
    finally:
        page.close()
        shut_down_kernels(base, token)


@pytest.mark.parametrize("notebook", [pytest.param(n, id=n, marks=pytest.mark.timeout(run_timeout(ROOT / n) + 120))
                                      for n in NOTEBOOKS])
def test_run_all_in_jupyterlab_finishes_every_cell(lab, browser, notebook):
    base, token = lab
    try:
        _run_all(base, token, browser, notebook)
    finally:
        shut_down_kernels(base, token)


def _run_all(base: str, token: str, browser, notebook: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    # A workspace of its own: in the default one JupyterLab reopens every notebook opened before,
    # with a kernel each (27 notebooks started 378 kernels and loaded the machine for the others).
    workspace = re.sub(r"[^a-z0-9]+", "-", notebook.lower()).strip("-")
    page.goto(f"{base}/lab/workspaces/{workspace}/tree/{notebook}?token={token}")
    opened = f"s && s.path === '{notebook}' && s.kernel === 'idle'"
    page.wait_for_function(f"(() => {{ const s = ({_STATE})(); return {opened}; }})()", timeout=90_000)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    finished = "s && s.done === s.cells && s.kernel === 'idle'"
    page.wait_for_function(f"(() => {{ const s = ({_STATE})(); return {finished}; }})()",
                           timeout=run_timeout(ROOT / notebook) * 1000, polling=500)
    state = page.evaluate(f"({_STATE})()")
    assert state["errors"] == [], f"{notebook}: cells ended in an error: {state['errors']}"
    assert not [t for t in state["stderr"] if "%3|" in t or "Traceback" in t], state["stderr"][:3]
    if notebook.startswith("notebooks/"):  # labs end in a check, not a quiz
        # (the model, not the DOM: JupyterLab 4 renders only the cells in view of a long notebook)
        asked = questions_asked(ROOT / notebook)
        assert len(state["asked"]) == asked and state["widgets"] >= 1, "the questions did not render as widgets"
        assert all(shown == ["widgets"] for shown in state["asked"]), (
            f"each question cell shows its widgets once and nothing else: {state['asked']}")
    assert page.locator(".Toastify__toast").count() == 0, "a notification popup covers the notebook"
    running = [x["path"] for x in sessions(base, token)]
    assert running == [notebook], f"JupyterLab runs kernels for {running}, not only for {notebook}"
    page.close()
