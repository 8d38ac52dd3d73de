"""The course runs: every notebook and lab, executed the way CI and learners run them.

- Committed notebooks carry no outputs and no execution counts, and follow the course
  conventions (first code cell imports the helper, second is the papermill parameters).
- Every notebook and every lab solution passes nbval in lax mode (cells must run without
  error; outputs are compared only in cells tagged ``nbval-check-output``).
- Every notebook and lab solution runs again through papermill with other parameters, to
  its end (exit 0: errors shown on purpose are caught by ``course.expect_error``), without
  librdkafka's log lines in the cells' output, and against a cluster outside the kernel:
  tests/course/test_any_cluster.py (one run proves both, where two cost CI a run of everything).
- The notebooks that show errors on purpose run under `jupyter nbconvert --execute` with exit 0
  (each error one line); the deck build (tests/slides) runs every lesson with papermill, which
  drives the same engine (nbclient), and fails on an error that escapes a cell;
  tests/course/test_jupyterlab.py runs every notebook and lab solution with Run All. Every
  notebook thus runs four or five times; CI's 90 minutes on 2 cores have no room for more.
- Every lab starter, untouched, fails in its check cell with ``CheckFailed``: the check
  really checks something.

Each notebook runs in a fresh kernel of this environment, with its own embedded minikafka.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# labs/02-partitioner/lab02-partitioner.ipynb and lab02-partitioner-solution.ipynb: a tab names its lab
SOLUTIONS = sorted((ROOT / "labs").glob("*/lab*-solution.ipynb"))
STARTERS = sorted(p for p in (ROOT / "labs").glob("*/lab*.ipynb") if not p.stem.endswith("-solution"))
WORKED = sorted((ROOT / "notebooks" / "solutions").glob("*.ipynb"))  # exercises' worked solutions
RUNNABLE = NOTEBOOKS + SOLUTIONS
RUN_TIMEOUT = 300  # seconds for one notebook, kernel start included; the course aims at < 60
# A notebook that starts Spark (a JVM, Python workers, a process per streaming source) takes
# minutes on a 2-core CI machine running two other tests: notebook 11 needed 320 s there.
SPARK_RUN_TIMEOUT = 600


def name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def run_timeout(path: Path) -> int:
    """Seconds one run of ``path`` may take: more for a notebook that starts Spark."""
    return SPARK_RUN_TIMEOUT if re.search(r"\bpyspark\b|kafka_course\.spark", path.read_text()) else RUN_TIMEOUT


def timed(paths: list[Path]) -> list:
    """``paths`` as parameters whose pytest timeout leaves room for the run's own timeout."""
    return [pytest.param(path, id=name(path), marks=pytest.mark.timeout(run_timeout(path) + 60)) for path in paths]


def code_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory):
    """Make the kernel name ``python3`` mean this interpreter, whatever else is installed."""
    share = tmp_path_factory.mktemp("jupyter")
    spec_dir = share / "kernels" / "python3"
    spec_dir.mkdir(parents=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (course)", "language": "python"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = str(share) + (os.pathsep + old if old else "")
    yield
    if old is None:
        os.environ.pop("JUPYTER_PATH", None)
    else:
        os.environ["JUPYTER_PATH"] = old


def test_every_lab_has_a_starter_and_a_solution():
    labs = sorted(p for p in (ROOT / "labs").iterdir() if p.is_dir())
    assert labs, "no labs found"
    for lab in labs:
        starter = lab / f"lab{lab.name}.ipynb"  # the file name, a tab's title, says which lab
        assert starter.exists() and starter.with_name(f"lab{lab.name}-solution.ipynb").exists(), lab


def test_every_notebook_is_stored_as_the_clean_filter_writes_it():
    """No outputs, and the full language_info a kernel writes (``{"name": "python"}`` alone made
    JupyterLab mark every notebook modified as it opened): kafka_course.stored_notebooks, which
    git runs on every notebook once ``./course setup`` has configured it."""
    from kafka_course.stored_notebooks import LANGUAGE_INFO, layout, stored
    every = sorted((ROOT / "notebooks").rglob("*.ipynb")) + sorted((ROOT / "labs").rglob("*.ipynb"))
    assert len(every) > 100  # English and Spanish: lessons, worked solutions, lab notebooks
    differ = []
    for path in every:
        text = path.read_text()
        if nbformat.writes(nbformat.from_dict(stored(json.loads(text)))) + "\n" != text:
            differ.append(name(path))
        elif layout(stored(json.loads(text))) != text:  # the filter writes JSON itself, as nbformat does
            differ.append(f"{name(path)} (the filter's own layout)")
        assert json.loads(text)["metadata"]["language_info"] == LANGUAGE_INFO, name(path)
    assert differ == [], f"not in their stored form: {differ}"


def test_git_compares_notebooks_without_their_outputs(tmp_path):
    """With the filter `./course setup` configures, a notebook run and saved is no local change
    once `git add -u` has looked at it (so the guide's update, add, stash, pull, goes through),
    and code a learner changed still is one."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitattributes").write_text((ROOT / ".gitattributes").read_text())
    nb = tmp_path / "n.ipynb"
    nb.write_text((ROOT / "notebooks" / "01-messaging-patterns.ipynb").read_text())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(["git", "config", "filter.course-notebook.clean",
                    f"{sys.executable} -S {ROOT / 'kafka_course' / 'stored_notebooks.py'}"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "course"], cwd=tmp_path, check=True, env=env)
    ran = json.loads(nb.read_text())
    code = next(c for c in ran["cells"] if c["cell_type"] == "code")
    code["outputs"], code["execution_count"] = [{"output_type": "stream", "name": "stdout", "text": "hi\n"}], 1
    ran["metadata"]["language_info"]["version"] = "3.12.9"  # the learner's own Python
    nb.write_text(json.dumps(ran, indent=2))

    def status() -> str:  # after the guide's first step (git tells a changed size from a change only then)
        subprocess.run(["git", "add", "-u", "--", "*.ipynb"], cwd=tmp_path, env=env, check=True)
        return subprocess.run(["git", "status", "--porcelain"], cwd=tmp_path, env=env, capture_output=True,
                              text=True).stdout
    assert subprocess.run(["git", "diff", "--quiet"], cwd=tmp_path, env=env).returncode == 0
    assert status() == "", "outputs alone are a change"
    code["source"] = "print('mine')"
    nb.write_text(json.dumps(ran, indent=2))
    assert status().strip() == "M  n.ipynb", "the learner's code is a change, for git stash"


def test_jupyterlab_gets_each_notebook_with_this_python():
    import platform

    from kafka_course.jupyter_contents import with_this_python
    from kafka_course.stored_notebooks import LANGUAGE_INFO
    nb = {"metadata": {"language_info": {**LANGUAGE_INFO, "version": "3.0.0"}}}
    assert with_this_python(nb)["metadata"]["language_info"] == {**LANGUAGE_INFO, "version": platform.python_version()}


@pytest.mark.parametrize("path", RUNNABLE + STARTERS + WORKED, ids=name)
def test_stored_without_outputs(path):
    """Outputs are never committed: a notebook with outputs or execution counts fails."""
    nb = nbformat.read(path, as_version=4)
    dirty = [i for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert not dirty, f"{name(path)} carries outputs or execution counts in cells {dirty}; clear them before committing"


@pytest.mark.parametrize("path", RUNNABLE + STARTERS + WORKED, ids=name)
def test_follows_the_course_conventions(path):
    """First code cell imports the course helper; the second is papermill's parameters cell."""
    cells = code_cells(nbformat.read(path, as_version=4))
    assert "import kafka_course as course" in cells[0].source
    assert "parameters" in cells[1].metadata.get("tags", []), "the second code cell must be tagged 'parameters'"
    assert "BOOTSTRAP = None" in cells[1].source
    tagged = [c.source[:60] for c in cells if "raises-exception" in c.metadata.get("tags", [])]
    assert not tagged, (f"{name(path)} lets an error escape on purpose in {tagged}; wrap the call in "
                        "`with course.expect_error():` so papermill and Run All go on")


def once_more_if_spark_was_late(path: Path, run, executed: Path | None = None):
    """``run()``, once more when only Spark's fixed 10-s wait for a Python worker failed it (slides.build)."""
    from slides.build import once_more_if_spark_was_late as again
    return again(run, executed, name(path))


def run_nbval(path: Path) -> subprocess.CompletedProcess:
    # nbval's pytest loads nbval and nothing else: the other plugins installed here (Faker's and
    # Hypothesis', about 1 s of CPU to import) have nothing to do in a notebook's run, 84 times a suite.
    args = [sys.executable, "-m", "pytest", "-p", "nbval.plugin", "--nbval-lax", "--nbval-current-env",
            "-p", "no:cacheprovider", "--nbval-cell-timeout=120", "-q", "--rootdir", str(path.parent), str(path)]
    return once_more_if_spark_was_late(path, lambda: subprocess.run(
        args, cwd=path.parent, capture_output=True, text=True, timeout=run_timeout(path),
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}))


@pytest.mark.slow
@pytest.mark.parametrize("path", timed(RUNNABLE + WORKED))
def test_runs_under_nbval(path):
    started = time.monotonic()
    done = run_nbval(path)
    seconds = time.monotonic() - started
    print(f"{name(path)}: nbval {seconds:.1f} s")
    assert done.returncode == 0, f"nbval failed for {name(path)}:\n{done.stdout[-6000:]}\n{done.stderr[-2000:]}"


def parameters(path: Path) -> dict:
    cell = code_cells(nbformat.read(path, as_version=4))[1]
    values = {}
    for node in ast.parse(cell.source).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = ast.literal_eval(node.value)
    return values


# Sizes chosen by hand where the generic rule below would make a notebook slow or trivial.
OTHER_PARAMETERS = {
    "05-brokers-and-replication.ipynb": {"PARTITIONS": 2, "MESSAGES": 120},
    "06-storage-retention-compaction.ipynb": {"MESSAGES": 800, "ACCOUNTS": 3},
    "07-delivery-guarantees.ipynb": {"PARTITIONS": 2, "MESSAGES": 200, "CRASHES": 4},
    "08-transactions.ipynb": {"PARTITIONS": 2, "MESSAGES": 300, "KILLS": 2},
    "05-survive-a-broker-failure": {"PARTITIONS": 2},
    "06-event-sourcing": {"ACCOUNTS": 6, "EVENTS": 200},
    "07-at-least-once": {"PAYMENTS": 150, "CRASHES": 3},
    "08-exactly-once-pipeline": {"ORDERS": 150, "CRASHES": 4},
    "08b-lock-down": {"BOOTSTRAP": None},  # nothing to size: the shop is the shop; a second run starts it over
    "10-group-consumer-migration": {"PARTITIONS": 4, "SIGNUPS": 150, "CRASHES": 2},
    # Lab 13's sizes are the workloads'; its other run is the one without RabbitMQ and NATS (closed ports).
    "13-choose-a-broker": {"RABBITMQ_URL": "amqp://guest:guest@127.0.0.1:1/%2F", "NATS_URL": "nats://127.0.0.1:1"},
}


def other_parameters(path: Path) -> dict:
    """Different sizes than the defaults: one more partition, half the records."""
    chosen = OTHER_PARAMETERS.get(path.parent.name if path.parent.parent.name == "labs" else path.name)
    if chosen:
        return chosen
    changed = {}
    for key, value in parameters(path).items():
        if key == "PARTITIONS":
            changed[key] = value + 1
        elif isinstance(value, int) and key != "TIME_LIMIT":
            changed[key] = max(10, value // 2)
    return changed


@pytest.mark.slow
@pytest.mark.parametrize("path", timed(STARTERS))
def test_untouched_starter_fails_its_check(path, tmp_path, kernel_env):
    """A check that passes on the starter checks nothing; it must fail, and in the check cell."""
    import papermill
    from papermill.exceptions import PapermillExecutionError
    params = {"TIME_LIMIT": 5} if "TIME_LIMIT" in parameters(path) else {}
    with pytest.raises(PapermillExecutionError) as failure:
        papermill.execute_notebook(str(path), str(tmp_path / path.name), parameters=params, kernel_name="python3",
                                   cwd=str(path.parent), progress_bar=False, execution_timeout=120)
    assert failure.value.ename == "CheckFailed", f"the starter failed with {failure.value.ename}, not in its check"
    executed = nbformat.read(tmp_path / path.name, as_version=4)
    last = code_cells(executed)[-1]
    assert any(o.get("ename") == "CheckFailed" for o in last.outputs), "the failure must come from the last cell"


@pytest.mark.slow
def test_a_dead_bootstrap_address_stops_notebook_00_in_one_sentence(tmp_path, kernel_env, monkeypatch):
    """KAFKA_BOOTSTRAP_SERVERS pointing at nothing: the run stops at bootstrap() with one sentence
    naming the fix, not at a client's KafkaException(_TRANSPORT) with a 45-line traceback; a later
    helper says the same sentence."""
    import papermill
    from papermill.exceptions import PapermillExecutionError
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:1")  # the kernel inherits it
    path = ROOT / "notebooks" / "00-setup-and-tour.ipynb"
    with pytest.raises(PapermillExecutionError) as stopped:
        papermill.execute_notebook(str(path), str(tmp_path / path.name), kernel_name="python3", cwd=str(path.parent),
                                   progress_bar=False, execution_timeout=120)
    assert stopped.value.ename == "KafkaUnreachable", stopped.value.ename
    assert stopped.value.traceback == [f"\x1b[31mKafkaUnreachable\x1b[0m: {stopped.value.evalue}"], "one line"
    assert stopped.value.evalue.startswith("No Kafka broker answers at 127.0.0.1:1")
    assert "unset KAFKA_BOOTSTRAP_SERVERS" in stopped.value.evalue
    executed = nbformat.read(tmp_path / path.name, as_version=4)
    failed = [c for c in code_cells(executed) if any(o.get("output_type") == "error" for o in c.outputs)]
    assert len(failed) == 1 and "course.bootstrap(" in failed[0].source, "it stops at bootstrap(), not later"
    later = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import kafka_course as course"),
                                            nbformat.v4.new_code_cell("course.bootstrap()"),
                                            nbformat.v4.new_code_cell("course.new_topic('orders')")],
                                     metadata=executed.metadata)
    import nbclient
    nbclient.NotebookClient(later, kernel_name="python3", allow_errors=True, timeout=120).execute()
    errors = [o for c in later.cells[1:] for o in c.outputs if o.output_type == "error"]
    assert [e.ename for e in errors] == ["KafkaUnreachable"] * 2 and all(len(e.traceback) == 1 for e in errors)


# -- the learner's layer: objectives, a quiz, worked solutions ------------------------------------
def exercises(nb) -> int:
    cell = next((c for c in nb.cells if c.cell_type == "markdown" and "## Exercises" in c.source), None)
    assert cell is not None, "the notebook ends with a '## Exercises' section"
    return len(re.findall(r"^\d+\. ", cell.source.split("## Exercises", 1)[1], re.M))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_opens_with_objectives_prerequisites_and_a_measured_time(path):
    intro = nbformat.read(path, as_version=4).cells[0].source
    found = re.search(r"\*\*You will be able to\*\*(.*?)\*\*Before you start:\*\*", intro, re.S)
    assert found, f"{name(path)}: the first cell needs '**You will be able to**', then '**Before you start:**'"
    bullets = re.findall(r"^- \S", found.group(1), re.M)
    assert 3 <= len(bullets) <= 5, f"{name(path)}: {len(bullets)} objectives; give 3 to 5"
    assert re.search(r"\*\*Time:\*\* about \d+ minutes \(the cells run in about \d+ s", intro), (
        f"{name(path)}: say the time, and how long the cells take to run")


def number(path: Path) -> str:
    """``02`` for notebooks/02-topics-partitions-offsets.ipynb, ``08b`` for 08b-...: its question bank's name."""
    return path.name.split("-")[0]


QUIZ = re.compile(r"""course\.quiz\(["'](\w+)["']\)""")
PREDICT = re.compile(r"""course\.predict\(["'](\w+)["'], *["']([\w-]+)["']\)""")


def predictions(nb) -> list[tuple[int, str, str]]:
    """(cell index, notebook, key) of every ``course.predict(...)`` cell."""
    return [(i, *PREDICT.fullmatch(c.source.strip()).groups()) for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and PREDICT.fullmatch(c.source.strip())]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_ends_with_a_short_recap_quiz_from_its_bank(path):
    """``course.quiz("NN")`` right before the summary; its bank's RECAP holds 3 to 5 questions."""
    from kafka_course.quiz import bank
    nb = nbformat.read(path, as_version=4)
    cells = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "course.quiz(" in c.source]
    assert len(cells) == 1, f"{name(path)}: one course.quiz cell, not {len(cells)}"
    source = nb.cells[cells[0]].source.strip()
    assert source == f'course.quiz("{number(path)}")', (
        f"{name(path)}: the quiz cell is exactly course.quiz(\"{number(path)}\"), its questions in the bank "
        f"kafka_course/quizzes/nb{number(path)}.py (found {source[:60]!r})")
    summary = next(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and "## Summary" in c.source)
    between = [c for c in nb.cells[cells[0] + 1:summary] if c.cell_type == "code"]
    assert cells[0] < summary and not between, "the recap is the last code cell before the summary"
    recap = bank(number(path)).RECAP
    assert 3 <= len(recap) <= 5, f"{name(path)}: the recap has {len(recap)} questions; give 3 to 5"
    questions = bank(number(path)).QUESTIONS
    assert set(recap) <= set(questions), f"RECAP names questions the bank lacks: {set(recap) - set(questions)}"
    for key, q in questions.items():  # Question() itself refuses an answer that is not an option
        assert len(q.options) >= 2 and q.why.strip(), f"question {key!r}: two options or more, and a why"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_every_prediction_asks_a_question_of_the_bank_right_before_a_code_cell(path):
    from kafka_course.quiz import bank
    nb = nbformat.read(path, as_version=4)
    asked = predictions(nb)
    odd = [c.source[:60] for c in nb.cells if c.cell_type == "code" and "course.predict(" in c.source
           and not PREDICT.fullmatch(c.source.strip())]
    assert not odd, f"{name(path)}: a prediction cell is exactly course.predict(\"NN\", \"key\"): {odd}"
    assert 2 <= len(asked) <= 5, f"{name(path)}: {len(asked)} questions to predict; ask 2 to 5"
    questions = bank(number(path)).QUESTIONS
    for i, notebook, key in asked:
        assert notebook == number(path), f"{name(path)} asks notebook {notebook}'s question {key!r}"
        assert key in questions, f"{name(path)}: no question {key!r} in kafka_course/quizzes/nb{notebook}.py"
        after = nb.cells[i + 1] if i + 1 < len(nb.cells) else None
        assert after is not None and after.cell_type == "code" and not PREDICT.fullmatch(after.source.strip()), (
            f"{name(path)}: the cell right after course.predict(\"{notebook}\", \"{key}\") must be the code cell "
            "that answers it")


TRANSLATED_LESSONS = sorted(p for lang in ("es", "pt-BR") for p in (ROOT / "notebooks" / lang).glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS + TRANSLATED_LESSONS + WORKED, ids=name)
def test_no_notebook_shows_a_quiz_answer(path):
    """The answers stay in the banks, out of the learner's view."""
    shown = [c.id for c in nbformat.read(path, as_version=4).cells if re.search(r"\banswer=\d", c.source)]
    assert not shown, f"{name(path)}: cells {shown} hold answer=...; move the questions to the notebook's bank"


DISCUSSION = re.compile(r"[*_ ]*\(discussion\)", re.I)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_every_exercise_has_a_cell_to_start_from(path):
    """Each numbered exercise not marked ``(discussion)`` has a code cell ``# Exercise N: ...`` after the list."""
    nb = nbformat.read(path, as_version=4)
    at = next(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and "## Exercises" in c.source)
    listed = re.findall(r"^(\d+)\. (.*)", nb.cells[at].source.split("## Exercises", 1)[1], re.M)
    needed = {int(n) for n, text in listed if not DISCUSSION.match(text)}
    found = [int(m.group(1)) for c in nb.cells[at + 1:] if c.cell_type == "code"
             for m in [re.match(r"# Exercise (\d+): \S", c.source)] if m]
    assert needed <= set(found), (f"{name(path)}: exercises {sorted(needed - set(found))} have no code cell starting "
                                  "'# Exercise N: <task>' after the list (mark an open question '(discussion)')")
    assert set(found) <= {int(n) for n, _ in listed}, f"{name(path)}: cells for exercises the list lacks: {found}"
    assert len(found) == len(set(found)), f"{name(path)}: two cells for one exercise: {found}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_every_exercise_has_a_worked_solution(path):
    nb = nbformat.read(path, as_version=4)
    count = exercises(nb)
    worked = ROOT / "notebooks" / "solutions" / path.name
    assert worked.exists(), f"{name(path)} has {count} exercises and no notebooks/solutions/{path.name}"
    solved = {int(n) for c in nbformat.read(worked, as_version=4).cells if c.cell_type == "markdown"
              for n in re.findall(r"^## Exercise (\d+)", c.source, re.M)}
    assert solved == set(range(1, count + 1)), f"exercises {sorted(set(range(1, count + 1)) - solved)} unsolved"
    exercises_cell = next(c.source for c in nb.cells if c.cell_type == "markdown" and "## Exercises" in c.source)
    assert f"solutions/{path.name}" in exercises_cell, "the exercises link to their solutions"


# Executed the way an instructor pre-renders outputs: nbconvert stops at the first error a
# cell raises, so exit 0 means every error shown on purpose was caught and printed in one
# line. The notebooks that show one are named here with the error they must show. The other
# notebooks and lab solutions run on the same engine (nbclient) under papermill, which stops
# at the first error too, and under nbval above, so running them a fourth time here would
# only cost CI minutes.
ERRORS_ON_PURPOSE = {"03-producers.ipynb": "MSG_SIZE_TOO_LARGE", "05-brokers-and-replication.ipynb":
                     "INVALID_REPLICATION_FACTOR", "08b-operations-and-security.ipynb":
                     "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
                     # a 409 from the registry, and a JSON record the JSON Schema serializer will not send
                     "12-ecosystem.ipynb": ("SchemaRegistryError", "SerializationError")}


@pytest.mark.slow
@pytest.mark.parametrize("path", timed([p for p in NOTEBOOKS if p.name in ERRORS_ON_PURPOSE]))
def test_runs_under_nbconvert_execute(path, tmp_path, kernel_env):
    done = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                           "--ExecutePreprocessor.timeout=120", "--output-dir", str(tmp_path), path.name],
                          cwd=path.parent, capture_output=True, text=True, timeout=run_timeout(path),
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    expected = ERRORS_ON_PURPOSE.get(path.name)
    if expected is None:
        return
    executed = nbformat.read(tmp_path / path.name, as_version=4)
    shown = [o.text for c in code_cells(executed) for o in c.outputs if o.get("name") == "stdout"]
    lines = [line for text in shown for line in text.splitlines()]
    for error in (expected,) if isinstance(expected, str) else expected:
        assert any(line.startswith(f"{error}: ") for line in lines), (
            f"the error shown on purpose is missing: expected one line '{error}: <the sentence>'")
    assert not [line for line in lines if line.startswith("Traceback")], "an error shown on purpose printed a traceback"
