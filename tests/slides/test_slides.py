"""The instructor decks: one per notebook, diagrams from the code, and they open offline.

The build runs once per module (``python -m slides.build --no-install``, as an instructor
would run it: every notebook executed, its outputs and plots in the deck). Each deck is
then opened in headless Chromium, driven over the DevTools protocol (``slides/browser.py``),
and walked slide by slide, vertical ones too: every request must be a local file, nothing
may fail, no slide may be taller than the 1280x720 frame, no text or code may be under
18 px, and every section must carry speaker notes.

Nothing here installs anything: without reveal.js in slides/node_modules (``npm ci`` in
slides/) or without Chromium (Debian package ``chromium``) the tests that need them skip.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest

from slides import browser, build, deck, diagrams, figures, lines
from tests.course.english import SPANISH_CLUSTER_STARTED

# The first test to ask for the decks pays for executing every lesson in every language (English,
# Spanish and Brazilian Portuguese, three side by side: about 14 minutes for two languages in the
# full suite, so about 21 for three): more than the suite's per-test default. One build serves every
# xdist worker of the run (see `built`).
pytestmark = pytest.mark.timeout(3000)

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = build.default_notebooks()  # the lessons, 08b included, and their translations (es, pt-BR)
HAVE_REVEAL = (build.REVEAL / "dist" / "reveal.js").exists()
CHROMIUM = browser.find_chromium()
needs_reveal = pytest.mark.skipif(not HAVE_REVEAL, reason="reveal.js is not installed: run `npm ci` in slides/")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium: install the Debian package `chromium`")
# What a browser fetches by itself (plain <a href> links to the web are fine: nothing loads them).
REMOTE = re.compile(r"""<(?:script|img|iframe|source|video|audio|embed)\b[^>]*\bsrc\s*=\s*["']?(?:https?:)?//"""
                    r"""|<link\b[^>]*\bhref\s*=\s*["']?(?:https?:)?//"""
                    r"""|url\(\s*["']?(?:https?:)?//|@import\s+(?:url\()?["']?(?:https?:)?//""", re.IGNORECASE)


@pytest.fixture(scope="module")
def built(tmp_path_factory, worker_id) -> tuple[Path, dict]:
    """The decks, built once per test run: the first xdist worker to need them builds them
    under a lock in the run's shared temporary folder, and the others wait and reuse them
    (each worker building its own copy cost the suite about 16 minutes)."""
    import fcntl
    if not HAVE_REVEAL:
        pytest.skip("reveal.js is not installed: run `npm ci` in slides/")
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if worker_id != "master" else base  # .../pytest-N holds every worker's folder
    out = shared / "decks"
    with open(shared / "decks.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "manifest.json").exists():
            done = subprocess.run([sys.executable, "-m", "slides.build", "--out", str(out), "--no-install"],
                                  cwd=REPO, capture_output=True, text=True, timeout=2700)
            assert done.returncode == 0, done.stdout + done.stderr
            (shared / "decks-build-output.txt").write_text(done.stdout + done.stderr)
    return out, json.loads((out / "manifest.json").read_text())


@pytest.fixture(scope="module")
def chromium():
    if CHROMIUM is None:
        pytest.skip("no Chromium: install the Debian package `chromium`")
    with browser.Chromium(CHROMIUM) as instance:
        yield instance


# -- the build -------------------------------------------------------------------------------------
def test_every_notebook_has_a_deck_listed_in_the_index(built):
    out, manifest = built
    assert [d["notebook"] for d in manifest["decks"]] == [build.notebook_name(p) for p in NOTEBOOKS]
    index = (out / "index.html").read_text()
    for entry in manifest["decks"]:
        assert (out / entry["file"]).is_file()
        assert f'href="{entry["file"]}"' in index
        assert entry["slides"] >= 3, f"{entry['file']} has almost no slides"


def test_every_lesson_runs_to_its_end_in_the_deck_build(built):
    """The deck build runs every lesson, English and Spanish, with papermill (nbclient, the engine
    behind `jupyter nbconvert --execute`): no error may escape a cell (errors shown on purpose are caught)."""
    _, manifest = built
    assert manifest["executed"]
    failed = {d["notebook"]: d["errors"] for d in manifest["decks"] if d["errors"]}
    assert failed == {}, failed


def test_spanish_lessons_run_under_papermill_in_spanish(built):
    """The deck build's papermill run is the Spanish lessons' papermill run: to the end, in Spanish."""
    out, manifest = built
    spanish = [d for d in manifest["decks"] if d["lang"] == "es"]
    assert spanish and all(not d["errors"] for d in spanish)
    for entry in spanish:
        executed = nbformat.read(out / "executed" / entry["file"].replace(".html", ".ipynb"), as_version=4)
        printed = "".join(o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.outputs)
        assert any(s in printed for s in SPANISH_CLUSTER_STARTED), f"{entry['notebook']} did not speak Spanish"


def test_spanish_lessons_print_no_english_sentence(built):
    """What the Spanish lessons printed in the deck build's run (tests/course/english.py tells
    English prose from error names, data names, raw logs and Kafka's own tool output)."""
    from tests.course.english import unexpected_english
    out, manifest = built
    found = {}
    for entry in (d for d in manifest["decks"] if d["lang"] == "es"):
        executed = nbformat.read(out / "executed" / entry["file"].replace(".html", ".ipynb"), as_version=4)
        if english := unexpected_english(executed):
            found[entry["notebook"]] = english
    assert found == {}, found


def test_the_build_prints_no_client_log_line(built, tmp_path_factory, worker_id):
    """`./course slides` once printed librdkafka's FAIL lines: the live diagrams' producer saw broker 2 stop."""
    base = tmp_path_factory.getbasetemp()
    printed = ((base.parent if worker_id != "master" else base) / "decks-build-output.txt")
    if not printed.exists():
        pytest.skip("the decks were built by an earlier run")
    raw = [line for line in printed.read_text().splitlines() if lines.is_raw_log(line)]
    assert raw == [], "the deck build printed raw client or JVM log lines"


def test_decks_reference_only_local_files(built):
    out, _ = built
    pages = list(out.glob("*.html")) + list(out.rglob("*.css"))
    for page in pages:
        text = page.read_text(errors="replace")
        assert not REMOTE.search(text), f"{page.name} loads something from the network: {REMOTE.search(text)[0]}"
        for ref in re.findall(r'(?:src|href)="([^"#:]+)"', text):
            assert (page.parent / ref).exists(), f"{page.name} points at {ref}, which the build did not write"


def test_generated_diagrams_are_placed_and_valid_svg(built):
    out, manifest = built
    names = {d["name"] for d in manifest["diagrams"]}
    assert {"group-states", "transaction-states", "partitions", "replication", "consumer-groups"} <= names
    for d in manifest["diagrams"]:
        root = ET.parse(out / d["file"]).getroot()
        assert root.tag.endswith("svg")
    text = {d["name"]: (out / d["file"]).read_text() for d in manifest["diagrams"]}
    assert "broker 2 (stopped)" in text["replication"] and "leader" in text["replication"]
    assert "group dashboard" in text["consumer-groups"] and "group archive" in text["consumer-groups"]
    assert all(f"partition {p}" in text["partitions"] for p in range(3))
    placed = {name for entry in manifest["decks"] for name in entry["diagrams"]}
    wanted = {name for number, places in build.PLACES.items() for name, _ in places
              if any(p.name.startswith(number) for p in NOTEBOOKS)}
    assert placed == wanted


# -- diagrams come from the broker's own tables ----------------------------------------------------------
@pytest.mark.parametrize("module, initial, final", [
    ("minikafka.groups.states", "GroupState.EMPTY", "GroupState.DEAD"),
    ("minikafka.transactions.states", "TxnState.EMPTY", "TxnState.DEAD"),
])
def test_state_diagram_has_every_transition_of_the_table(module, initial, final):
    import importlib
    table = importlib.import_module(module)
    enum_name = initial.split(".")[0]
    states = getattr(table, enum_name)
    dot = diagrams.state_machine_dot(table.TRANSITIONS, states[initial.split(".")[1]], states[final.split(".")[1]])
    for src, event, dst in table.TRANSITIONS:
        edge = f'"{diagrams._state_name(src)}" -> "{diagrams._state_name(dst)}"'
        line = next(line for line in dot.splitlines() if line.strip().startswith(edge))
        assert event.replace("_", " ") in line, f"{event} is missing from the diagram of {module}"
    svg = diagrams.render_dot(dot) or diagrams.transition_table_svg(table.TRANSITIONS)
    assert all(diagrams._state_name(s) in svg for s, _, _ in table.TRANSITIONS)


# -- cells on slides -----------------------------------------------------------------------------------
def _nb(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


def _cell(kind, source, slide_type=None, tags=()):
    make = nbformat.v4.new_markdown_cell if kind == "md" else nbformat.v4.new_code_cell
    meta = {"slideshow": {"slide_type": slide_type}} if slide_type else {}
    if tags:
        meta["tags"] = list(tags)
    return make(source, metadata=meta)


def test_slide_metadata_places_cells():
    nb = _nb(_cell("md", "# Title", "slide"), _cell("md", "notes for me", "notes"),
             _cell("code", "BOOTSTRAP = None", "skip"), _cell("md", "## Part", "slide"),
             _cell("code", "x = 1", "-"), _cell("md", "more", "subslide"), _cell("md", "then", "fragment"))
    result = deck.build_deck(nb, "99-test")
    assert result.title == "Title"
    assert [len(c.slides) for c in result.columns] == [1, 2]
    assert result.columns[0].slides[0].notes and "BOOTSTRAP" not in str(result.columns)
    assert 'class="fragment"' in result.columns[1].slides[1].parts[-1]


def test_notebook_without_metadata_is_laid_out_by_headings_and_long_slides_continue():
    long_code = "\n".join(f"line_{i} = {i}" for i in range(deck.CODE_LINES - 2))
    nb = _nb(_cell("md", "# Title"), _cell("code", "BOOTSTRAP = None", tags=["parameters"]),
             _cell("md", "## One"), _cell("code", long_code), _cell("code", long_code), _cell("md", "### Two"))
    result = deck.build_deck(nb, "98-test")
    assert len(result.columns) == 2
    one = result.columns[1]
    assert len(one.slides) == 3  # "One" + its long cell continued below + the "Two" subslide
    assert "(continued)" in one.slides[1].parts[0]
    assert all("BOOTSTRAP" not in part for c in result.columns for s in c.slides for part in s.parts)


def test_a_heading_starts_a_slide_even_inside_a_cell_and_notes_go_with_their_section():
    """Deck 03 once put compression under "Acknowledgements": its heading sat mid-cell."""
    nb = _nb(_cell("md", "# Producers", "slide"), _cell("code", "import kafka_course as course"),
             _cell("md", "## Acknowledgements\n\nacks=all waits.\n\n## Compression\n\nzstd is a good default."),
             _cell("code", "p.flush()"), _cell("md", "Say: compress batches.", "notes"))
    result = deck.build_deck(nb, "97-test")
    assert [c.heading for c in result.columns] == ["Producers", "Acknowledgements", "Compression"]
    compression = result.columns[2]
    assert "flush" in "".join(compression.slides[0].parts) and compression.slides[0].notes
    assert "import kafka_course" not in str(result.columns)  # the helper import is plumbing
    assert result.sections_without_notes == ["Producers", "Acknowledgements"]


def test_nothing_is_shrunk_long_things_are_cut_or_moved_below():
    essay = "## Essay\n\n" + "\n\n".join(f"Paragraph {i}. " + "word " * 60 for i in range(12))
    fence = "## Fence\n\n```\n" + "\n".join(f"row {i}" for i in range(60)) + "\n```"
    code = nbformat.v4.new_code_cell("\n".join(f"x{i} = {i}" for i in range(15)))
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="\n".join(map(str, range(30))))]
    nb = _nb(_cell("md", essay), _cell("md", fence), _cell("md", "## Run"), code)
    result = deck.build_deck(nb, "96-test", with_outputs=True)
    essay_col, fence_col, run_col = result.columns
    assert len(essay_col.slides) >= 3 and all(s.lines <= deck.MAX_LINES for s in essay_col.slides)
    fence_html = "".join(p for s in fence_col.slides for p in s.parts)
    assert "row 0" in fence_html and "row 59" not in fence_html and "more lines in the notebook" in fence_html
    assert len(run_col.slides) == 2 and "its output" in run_col.slides[1].parts[-1]  # output on the slide below
    assert "more lines in the notebook" in run_col.slides[1].parts[-1]  # 30 output lines cut to 10


def test_links_to_notebooks_become_paths_and_quizzes_become_one_question_per_slide():
    html = deck.render_markdown("Worked solutions: [solutions/00-x.ipynb](solutions/00-x.ipynb).")
    assert "<a " not in html and "<code>notebooks/solutions/00-x.ipynb</code>" in html
    quiz = nbformat.v4.new_code_cell("course.quiz([...])")
    page = ("<details><summary>All answers</summary>" + "".join(
        f"<div class='course-quiz'><p><b>{n}. Q{n}</b></p><ol type='a'><li>a</li><li>b</li></ol>"
        f"<details><summary>Answer</summary><p>b. why</p></details></div>" for n in (1, 2, 3)) + "</details>")
    quiz.outputs = [nbformat.v4.new_output("display_data", data={"text/html": page, "text/plain": "<HTML>"})]
    result = deck.build_deck(_nb(_cell("md", "## Check yourself"), quiz), "95-test", with_outputs=True)
    parts = [p for s in result.columns[0].slides for p in s.parts]
    assert sum("course-quiz" in p for p in parts) == 3 and not any("course.quiz" in p for p in parts)
    assert all("All answers" not in p for p in parts)  # questions visible, each answer folded


@pytest.fixture
def bank_99(monkeypatch):
    """A question bank for a notebook 99, as ``kafka_course/quizzes/nb99.py`` would hold it."""
    import types

    from kafka_course.quiz import Question
    bank = types.ModuleType("kafka_course.quizzes.nb99")
    bank.QUESTIONS = {
        "same-key": Question("Where does a second record with the same key go?",
                             ["anywhere", "to the same partition", "to partition 0"], answer=1, why="The key's hash."),
        "null-key": Question("Where does a record without a key go?",
                             ["to partition 0", "round robin, one record at a time", "a batch fills one partition"],
                             answer=2, why="The sticky partitioner."),
        "offsets": Question("Do offsets compare across partitions?", ["yes", "no"], answer=1,
                            why="Each log has its own."),
    }
    bank.RECAP = ("same-key", "null-key", "offsets")
    monkeypatch.setitem(sys.modules, "kafka_course.quizzes.nb99", bank)
    return bank


def test_a_prediction_is_a_question_slide_and_the_cell_that_answers_it_the_slide_below(bank_99):
    answer = nbformat.v4.new_code_cell("send_twice()")
    answer.outputs = [nbformat.v4.new_output("stream", name="stdout", text="partition 2, partition 2")]
    nb = _nb(_cell("md", "## Keys"), _cell("code", "x = 1"), _cell("code", 'course.predict("99", "same-key")'),
             answer, _cell("md", "## Check yourself"), _cell("code", 'course.quiz("99")'))
    result = deck.build_deck(nb, "94-test", with_outputs=True)
    keys, recap = result.columns
    assert len(keys.slides) == 3, "the question alone on a slide, then the cell that answers it"
    question, answered = keys.slides[1].parts, keys.slides[2].parts
    assert len(question) == 1 and "course-quiz" in question[0] and "same partition" in question[0]
    assert question[0].index("<details>") < question[0].index("hash")  # the answer is folded
    assert "course.predict" not in question[0] and "send_twice" in answered[0] and "partition 2" in answered[0]
    parts = [p for s in recap.slides for p in s.parts]
    assert sum("course-quiz" in p for p in parts) == 3 and not any("course.quiz" in p for p in parts)


def test_a_spanish_deck_asks_the_banks_questions_in_spanish(bank_99, monkeypatch):
    from kafka_course import i18n
    monkeypatch.setitem(i18n.catalog("es"), "Do offsets compare across partitions?",
                        "¿Se comparan los offsets entre particiones?")
    nb = _nb(_cell("md", "## Offsets"), _cell("code", 'course.predict("99", "offsets")'), _cell("code", "x = 1"))
    nb.metadata["course"] = {"language": "es"}
    result = deck.build_deck(nb, "93-test")
    assert "¿Se comparan los offsets" in result.columns[0].slides[1].parts[0]
    assert i18n.language() == "en", "the deck leaves the course's language as it was"


def test_long_lines_wrap_with_a_mark_and_raw_logs_stay_off_the_slide():
    """Deck 00 cut its advertised-listeners diagnosis mid-word; deck 08 showed librdkafka's fencing log."""
    long = "✘ advertised listeners: broker 1 advertises kafka:9092, " + "which this machine cannot resolve " * 5
    assert all(len(piece) <= lines.WIDTH for piece in lines.wrap(long))
    assert "".join(p.removeprefix(lines.MARK) for p in lines.wrap(long)) == long
    assert all(p.startswith(lines.MARK) for p in lines.wrap(long)[1:])
    assert lines.wrap("    " + "x" * 300)[1].startswith("    " + lines.MARK)  # under the line's indentation
    code = nbformat.v4.new_code_cell("producer = Producer({" + ", ".join(f'"k{i}": {i}' for i in range(40)) + "})\n"
                                     + "\n".join(f"x{i} = {i}" for i in range(deck.CODE_LINES)))
    code.outputs = [nbformat.v4.new_output("stream", name="stderr", text=(
        "%1|1795773038.131|TXNERR|rdkafka#producer-21| [thrd:main]: Fatal transaction error\n"
        "%0|1795773038.131|FATAL|rdkafka#producer-21| [thrd:main]: Fatal error\n"
        "WARNING: Using incubator modules: jdk.incubator.vector\n"
        "26/11/27 09:56:47 WARN NativeCodeLoader: Unable to load native-hadoop library\n")),
        nbformat.v4.new_output("stream", name="stdout", text="fenced: " + "y" * 250)]
    result = deck.build_deck(_nb(_cell("md", "## Fencing"), code), "94-test", with_outputs=True)
    page = "".join(p for s in result.columns[0].slides for p in s.parts)
    assert "TXNERR" not in page and "FATAL" not in page and "incubator" not in page and "NativeCodeLoader" not in page
    assert "stderr" not in page  # nothing left of that output, not even an empty box
    assert page.count('class="wrap-mark"') >= 3  # the long code line and the long output line
    assert "more lines in the notebook" in page  # the wrapped cell is trimmed to CODE_LINES lines on the slide
    assert all(s.lines <= deck.MAX_LINES for s in result.columns[0].slides)


def test_wrapped_code_keeps_its_highlighting():
    html_line = '<span class="n">x</span> <span class="o">=</span> <span class="s2">"' + "word " * 40 + '"</span>'
    wrapped = lines.wrap_html(html_line).split("\n")
    assert len(wrapped) == 3 and all(w.count("<span") == w.count("</span>") for w in wrapped)
    assert wrapped[1].startswith('<span class="wrap-mark">') and '<span class="s2">' in wrapped[1]


def test_figures_take_the_slide_width_unless_too_tall():
    assert figures.shown_size(900, 300) == (1280, 427)
    width, height = figures.shown_size(1120, 640)  # deck 08's state machine: as wide as 600 px of height allows
    assert height == figures.MOST_HEIGHT and width >= 0.8 * figures.SLIDE_WIDTH


def test_remote_images_become_links_so_decks_fetch_nothing():
    html = deck.render_markdown("![logo](https://example.com/logo.png)")
    assert "<img" not in html and "https://example.com/logo.png" in html


# -- in a real browser ---------------------------------------------------------------------------------------
@needs_reveal
@needs_chromium
@pytest.mark.parametrize("notebook", [build.notebook_name(p).removesuffix(".ipynb") for p in NOTEBOOKS])
def test_deck_opens_offline_in_chromium(built, chromium, notebook):
    out, manifest = built
    entry = next(d for d in manifest["decks"] if d["notebook"] == f"{notebook}.ipynb")
    report = browser.open_deck(chromium, out / entry["file"])
    shots = out / "screenshots"
    shots.mkdir(exist_ok=True)
    (shots / f"{notebook.replace('/', '-')}.png").write_bytes(report.screenshot)

    assert report.failed == [], f"failed requests: {report.failed}"
    assert [u for u in report.requests if not u.startswith(("file:", "data:"))] == []
    assert report.errors == [], f"errors in the page: {report.errors}"
    facts = report.facts
    assert facts.get("ready"), "reveal.js did not initialise"
    assert facts["slides"] == entry["slides"]
    assert facts["notes"] == entry["notes"]
    assert facts["remote"] == []
    assert all(image["ok"] for image in facts["images"]), facts["images"]
    assert report.screenshot.startswith(b"\x89PNG") and len(report.screenshot) > 5000
    walk = facts["walk"]
    assert walk["visited"] == entry["slides"], "the walk missed slides"
    assert walk["overflow"] == [], "these slides (column/row) are taller than the 1280x720 frame"
    assert walk["wide"] == [], "these slides (column/row) cut content at the right edge"
    assert walk["logs"] == [], "raw client or JVM log lines on these slides"
    assert walk["plots"] == [], "plots under 80% of the slide's width cannot be read at the back of a room"
    assert facts["overlaps"] == [], "the navigation arrows, the slide number and the index link overlap"
    assert walk["small"] == [], "text under 18 px cannot be read on a projector"
    assert facts["sections_without_notes"] == [], "these sections have no speaker notes"


@needs_reveal
@needs_chromium
def test_index_opens_offline_with_every_diagram(built, chromium):
    out, manifest = built
    facts = ("{links: document.querySelectorAll('table.decks a').length,"
             " images: Array.from(document.images).map(i => i.complete && i.naturalWidth > 0)}")
    report = chromium.open((out / "index.html").as_uri(), "document.readyState === 'complete'", facts)
    assert report.failed == [] and report.errors == []
    assert [u for u in report.requests if not u.startswith(("file:", "data:"))] == []
    assert report.facts["links"] == len(manifest["decks"])
    assert report.facts["images"] and all(report.facts["images"])


def test_decks_are_built_from_executed_notebooks(built):
    """Results and plots appear: the replication deck shows its ISR timeline figure."""
    out, manifest = built
    assert manifest["executed"] is True
    page = (out / "05-brokers-and-replication.html").read_text()
    assert '<pre class="output">' in page and "data:image/png;base64," in page
