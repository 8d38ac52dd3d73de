"""Build the instructor decks: one reveal.js deck per notebook, and an index.

    python -m slides.build                  # run every notebook, then -> slides/build/NN-name.html
    python -m slides.build --no-execute     # code only, no outputs: seconds, no broker needed
    python -m slides.build notebooks/12-ecosystem.ipynb --out /tmp/decks
    python -m slides.build --executed slides/build   # lay out again what the last build ran: seconds

The decks come from the notebooks themselves (see ``slides/deck.py`` for the cell
metadata that places cells on slides), so slides and labs never drift apart; the speaker
notes come from the lessons' instructor source, ``instructor/notes/`` (``translations/notes.py``),
each with the section of the cell it follows. By default
every notebook first runs top to bottom against an embedded minikafka (papermill), and
its outputs, figures included, are embedded in the deck, so "the bars are the
partitions" has bars next to it (about 5 minutes for all of them). ``--no-execute``
builds code-only decks in seconds.

Decks open offline: reveal.js comes from ``slides/node_modules`` (``npm ci`` here installs
the version pinned in ``package-lock.json``; the build runs it when it is missing, unless
``--no-install``), every asset is copied next to the decks, images are embedded, and
no page loads anything from the network. Diagrams come from ``slides/diagrams.py``.

A translated notebook (``notebooks/es/...``) gives a deck in its language, its own words
included (``slides/deck.py``: ``translations/<lang>/slides.po``); the index lists each
language's decks under a heading of that language.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

if __name__ == "__main__" and not __package__:  # run as `python slides/build.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from slides.build import main
    sys.exit(main())

import nbformat
from jinja2 import Environment, FileSystemLoader, select_autoescape

from translations import notes as speaker_notes
from translations.catalogs import LANGUAGE

from . import deck as decks
from . import diagrams as drawings
from . import figures

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
NOTEBOOKS = REPO / "notebooks"
DEFAULT_OUT = HERE / "build"
REVEAL = HERE / "node_modules" / "reveal.js"
REVEAL_FILES = ["dist/reset.css", "dist/reveal.css", "dist/reveal.js", "dist/theme/white.css",
                "dist/theme/fonts/source-sans-pro", "plugin/notes/notes.js", "LICENSE"]

# Where generated diagrams go: notebook number -> (diagram, pattern for the slide heading to
# follow). A diagram goes below the first slide whose heading matches, else before the summary.
# The patterns know the Spanish and Portuguese headings too (notebooks/es, notebooks/pt-BR), so a
# translated deck places them alike.
PLACES: dict[str, list[tuple[str, str]]] = {
    "02": [("partitions", r"partition|partici|partiç")],
    "04": [("consumer-groups", r"group|members|grupo|miembros|membros"), ("group-states", r"rebalanc|group|grupo")],
    "05": [("replication", r"\bISR\b|in-sync|replica|leader|réplica|líder")],
    "08": [("transaction-states", r"transaction|fenc|coordinator|transacci|transaç|coordinador|coordenador")],
}


# -- reveal.js -------------------------------------------------------------------------------------
def ensure_reveal(install: bool = True) -> str:
    """The installed reveal.js version; runs ``npm ci`` in slides/ when it is missing."""
    if not (REVEAL / "dist" / "reveal.js").exists():
        if not install:
            raise SystemExit("reveal.js is not installed: run `npm ci` in slides/ "
                             "(or `python -m slides.build`, which runs it for you).")
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("reveal.js is not installed and npm was not found: install Node.js 18+, then run again.")
        print("installing reveal.js with npm ci (pinned in slides/package-lock.json)")
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=HERE, check=True)
    return json.loads((REVEAL / "package.json").read_text())["version"]


def copy_assets(out: Path) -> None:
    for name in REVEAL_FILES:
        src, dst = REVEAL / name, out / "reveal" / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)
    assets = out / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    for css in (HERE / "assets").glob("*.css"):
        shutil.copy2(css, assets / css.name)
    (assets / "pygments.css").write_text(decks.pygments_css())


# The speaker view is a page that reveal.js's notes plugin writes from inside notes.js. Its labels,
# found by the text around them in reveal.js 5; a deck in another language loads a copy
# (notes.<lang>.js) with them translated. A label reveal.js no longer writes is left as it is.
N_ = decks.N_
SPEAKER_VIEW = [
    ('<title>reveal.js - {}</title>', N_("Speaker View")),
    ('<span class=\\"overlay-element label\\">{}</span>', N_("Upcoming")),
    ('<h4 class=\\"label\\">{} <span', N_("Time")),
    (">{}<", N_("Click to Reset")),
    (">{}<", N_("Pacing – Time to finish current slide")),
    ('<h4 class=\\"label\\">{}</h4>', N_("Notes")),
    ("layoutLabel.innerHTML = '{}'", N_("Layout")),
    ("'default': '{}'", N_("Default")),
    ("'wide': '{}'", N_("Wide")),
    ("'tall': '{}'", N_("Tall")),
    ("'notes-only': '{}'", N_("Notes only")),
]


def speaker_view(script: str, lang: str) -> str:
    """reveal.js's notes plugin with the speaker view's labels in ``lang``."""
    _ = decks.words(lang)
    for around, label in SPEAKER_VIEW:
        said = html.escape(_(label), quote=False).replace("\\", "\\\\").replace("'", "\\'").replace('"', '\\"')
        script = script.replace(around.format(label), around.format(said))
    return script


def notes_plugin(out: Path, lang: str) -> str:
    """The notes plugin a deck in ``lang`` loads (another language's is written next to reveal.js's own)."""
    if lang == "en":
        return "reveal/plugin/notes/notes.js"
    name = f"reveal/plugin/notes/notes.{lang}.js"
    (out / name).write_text(speaker_view((REVEAL / "plugin/notes/notes.js").read_text(), lang))
    return name


# -- notebooks ---------------------------------------------------------------------------------------
def default_notebooks() -> list[Path]:
    """Every lesson, then the translated ones (notebooks/es/...): one deck each."""
    return sorted(NOTEBOOKS.glob("[0-9][0-9]*-*.ipynb")) + sorted(
        p for p in NOTEBOOKS.glob("*/[0-9][0-9]*-*.ipynb") if LANGUAGE.fullmatch(p.parent.name))


def notebook_name(path: Path) -> str:
    """``00-setup-and-tour.ipynb``, or ``es/00-setup-and-tour-es.ipynb`` for a translation."""
    path = path.resolve()
    return str(path.relative_to(NOTEBOOKS)) if path.is_relative_to(NOTEBOOKS) else path.name


def deck_name(path: Path) -> str:
    """The deck's file name: a translation's gets its language first (``es-00-setup-and-tour``;
    its notebook is ``es/00-setup-and-tour-es.ipynb``)."""
    name = notebook_name(path).removesuffix(".ipynb")
    lang, _, rest = name.partition("/")
    return f"{lang}-{rest.removesuffix('-' + lang)}" if rest else name


def once_more_if_spark_was_late(run, executed: Path | None = None, label: str = "the notebook"):
    """``run()`` (a finished subprocess), and once more if it failed only because Spark's Python
    worker missed Spark's fixed 10 s to connect back (``kafka_course.spark.session.WORKER_LATE``),
    said in the run's output or in the notebook it executed (a lab check reports Spark's error on
    a line of its cell's output)."""
    from kafka_course.spark.session import WORKER_LATE
    done = run()
    said = (done.stdout or "") + (done.stderr or "")
    if executed is not None and executed.exists():
        said += executed.read_text(errors="replace")
    if done.returncode != 0 and WORKER_LATE in said:
        print(f"  {label}: Spark's Python worker missed Spark's fixed 10 s to connect back (a busy machine); "
              "running it again")
        done = run()
    return done


def escaped_errors(nb) -> list[str]:
    """The errors that escaped a cell (an error shown on purpose is caught, not one of these)."""
    return [f"cell {n}: {o.get('ename')}: {o.get('evalue', '')[:200]}"
            for n, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for o in cell.get("outputs", []) if o.get("output_type") == "error"]


def execute(path: Path):
    """Run the notebook in a fresh kernel with papermill, as a learner or CI would (papermill
    drives nbclient, the engine of ``jupyter nbconvert --execute``). Papermill stops at an error
    that escapes a cell; its note about it is dropped, the error stays in its cell's output and
    the manifest lists it. Each run is its own process: papermill changes the working directory
    of the whole process to start a kernel in the notebook's folder, so two runs in threads could
    start a kernel in the other's folder (where the course speaks another language)."""
    import os
    import tempfile
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / path.name
        # the kernel draws its figures for a slide (slides/figures.py), from an IPython startup file
        startup = Path(tmp) / "ipython" / "profile_default" / "startup"
        startup.mkdir(parents=True)
        (startup / "00-slides-figures.py").write_text(figures.startup_file(str(REPO)))
        done = once_more_if_spark_was_late(lambda: subprocess.run(
            [sys.executable, "-m", "papermill", "--cwd", str(path.parent), str(path), str(out), "-k", "python3",
             "--no-progress-bar", "--execution-timeout", "300"], capture_output=True, text=True,
            env={**os.environ, "IPYTHONDIR": str(startup.parents[1])}),
            out, notebook_name(path))
        if not out.exists():  # papermill could not even start (no kernel, unreadable notebook)
            raise RuntimeError(f"papermill could not run {notebook_name(path)}:\n{done.stderr[-2000:]}")
        nb = nbformat.read(out, as_version=4)
    nb.cells = [c for c in nb.cells if "papermill-error-cell-tag" not in c.metadata.get("tags", [])]
    print(f"  executed {notebook_name(path)} in {time.monotonic() - started:.0f} s")
    return nb


def diagram_slide(diagram: drawings.Diagram, lang: str = "en") -> decks.Slide:
    title, caption = diagram.said(decks.words(lang))
    figure = (f'<h3>{title}</h3><figure class="diagram"><img src="diagrams/{diagram.name}.svg" '
              f'alt="{title}"><figcaption>{caption}</figcaption></figure>')
    return decks.Slide(parts=[figure], lines=decks.MAX_LINES, heading=title)


def place_diagrams(deck: decks.Deck, available: dict[str, drawings.Diagram]) -> list[str]:
    """Add the diagrams PLACES gives this notebook; return the names placed."""
    placed = []
    for name, pattern in PLACES.get(deck.name.split("-")[0], []):
        if name not in available:
            continue
        # The first column is the notebook's title: a diagram belongs with the section about it.
        column = next((c for c in deck.columns[1:] if re.search(pattern, c.heading, re.IGNORECASE)), None)
        if column is None:
            column = decks.Column([])
            at = next((i for i, c in enumerate(deck.columns) if re.match(r"summary|resumen", c.heading, re.I)),
                      len(deck.columns))
            deck.columns.insert(at, column)
        column.slides.append(diagram_slide(available[name], deck.lang))
        placed.append(name)
    return placed


def templates() -> Environment:
    """The page templates (``slides/templates``): a deck and the index."""
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(["html"]))
    env.filters["join"] = lambda items, sep="": env.filters["safe"](sep.join(items))
    return env


# -- the whole build -----------------------------------------------------------------------------------
def stated_seconds(path: Path) -> int:
    """How long the notebook says its cells run (its first cell: "the cells run in about 75 s",
    "las celdas tardan unos 75 s"); 0 when it does not say."""
    cells = decks.read_notebook(path).cells
    found = re.search(r"\b(\d+) s\b", cells[0].source) if cells else None
    return int(found.group(1)) if found else 0


def execute_all(paths: list[Path], jobs: int) -> dict[Path, object]:
    """Run the notebooks, ``jobs`` at a time: most of a notebook's time is spent waiting
    (rebalances, timeouts, a broker coming back), so kernels side by side finish sooner.
    The longest start first, so the build does not end on one long notebook with the other
    kernels done (in file order, the Portuguese 04 and 11 came last of 45)."""
    from concurrent.futures import ThreadPoolExecutor
    longest_first = sorted(paths, key=stated_seconds, reverse=True)  # stable: file order among equals
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        executed = dict(zip(longest_first, pool.map(execute, longest_first)))
    return {path: executed[path] for path in paths}


def build(notebooks: list[Path], out: Path, *, run: bool = False, live: bool = True,
          install: bool = True, jobs: int = 3, executed_in: Path | None = None) -> dict:
    """Write the decks, the diagrams, the index and ``manifest.json`` into ``out``
    (``executed_in``: take the executed notebooks an earlier build kept there instead of running them)."""
    version = ensure_reveal(install)
    out.mkdir(parents=True, exist_ok=True)
    copy_assets(out)
    try:
        diagrams = drawings.all_diagrams(live=live)
    except Exception as e:  # noqa: BLE001 - a diagram must never cost the instructor the decks
        print(f"warning: live diagrams failed ({type(e).__name__}: {e}); building with the state machines only")
        diagrams = drawings.state_machines()
    drawings.write(diagrams, out / "diagrams")
    available = {d.name: d for d in diagrams}
    env = templates()
    manifest = {"reveal": version, "executed": run, "decks": [], "diagrams": []}
    if executed_in is not None:
        executed, run = reuse(notebooks, executed_in), True
    else:
        executed = execute_all(notebooks, jobs) if run else {}
    for path in notebooks:
        nb = executed.get(path) or decks.read_notebook(path)
        if path in executed:  # kept: what the deck shows, and what the tests read of the run
            (out / "executed").mkdir(exist_ok=True)
            nbformat.write(nb, out / "executed" / f"{deck_name(path)}.ipynb")
        nb = speaker_notes.with_notes(nb, path)  # instructor/notes/<lesson>.md, in the notebook's language
        deck = decks.build_deck(nb, path.stem, with_outputs=run, base=path.parent)
        placed = place_diagrams(deck, available)
        (out / f"{deck_name(path)}.html").write_text(env.get_template("deck.html.j2").render(
            deck=deck, source=notebook_name(path), _=decks.words(deck.lang), notes=notes_plugin(out, deck.lang)))
        manifest["decks"].append({"notebook": notebook_name(path), "file": f"{deck_name(path)}.html",
                                  "title": deck.title, "lang": deck.lang,
                                  "columns": len(deck.columns), "slides": deck.total_slides,
                                  "notes": deck.notes, "diagrams": placed,
                                  "errors": escaped_errors(nb) if run else []})
        print(f"  {deck_name(path)}.html: {deck.total_slides} slides, {deck.notes} with notes"
              + (f", diagrams {', '.join(placed)}" if placed else ""))
    for d in diagrams:
        used_in = [x["notebook"].split("/")[-1].split("-")[0] for x in manifest["decks"] if d.name in x["diagrams"]]
        manifest["diagrams"].append({"name": d.name, "file": f"diagrams/{d.name}.svg", "title": d.title,
                                     "caption": d.said()[1], "decks": used_in})
    (out / "index.html").write_text(env.get_template("index.html.j2").render(
        languages=by_language(manifest["decks"]), diagrams=manifest["diagrams"], executed=run,
        reveal_version=version))
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return manifest


def reuse(notebooks: list[Path], folder: Path) -> dict[Path, object]:
    """The notebooks an earlier build executed and kept in ``folder/executed``: to change how the
    decks look without running every lesson again."""
    kept = {path: folder / "executed" / f"{deck_name(path)}.ipynb" for path in notebooks}
    missing = [str(k) for k in kept.values() if not k.exists()]
    if missing:
        raise SystemExit(f"no executed notebook kept for: {', '.join(missing)}")
    return {path: nbformat.read(k, as_version=4) for path, k in kept.items()}


def by_language(entries: list[dict]) -> list[dict]:
    """The index's groups: English decks first, then each language's, with that language's words."""
    langs = sorted({e["lang"] for e in entries}, key=lambda lang: (lang != "en", lang))
    return [{"lang": lang, "_": decks.words(lang), "decks": [e for e in entries if e["lang"] == lang]}
            for lang in langs]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m slides.build", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/*.ipynb")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"default: {DEFAULT_OUT.relative_to(REPO)}")
    parser.add_argument("--no-execute", dest="execute", action="store_false",
                        help="do not run the notebooks: code without outputs, in seconds")
    parser.add_argument("--execute", action="store_true", default=True, help=argparse.SUPPRESS)  # the default
    parser.add_argument("--no-live-diagrams", action="store_true", help="skip the diagrams drawn from a live cluster")
    parser.add_argument("--no-install", action="store_true", help="fail instead of running npm ci")
    parser.add_argument("--jobs", type=int, default=3, help="notebooks executed side by side (default 3)")
    parser.add_argument("--executed", type=Path, metavar="DIR",
                        help="do not run the notebooks: lay out those an earlier build executed into DIR")
    args = parser.parse_args(argv)
    notebooks = [p.resolve() for p in args.notebooks] or default_notebooks()
    if not notebooks:
        raise SystemExit(f"no notebooks found in {NOTEBOOKS}")
    manifest = build(notebooks, args.out.resolve(), run=args.execute, live=not args.no_live_diagrams,
                     install=not args.no_install, jobs=args.jobs,
                     executed_in=args.executed.resolve() if args.executed else None)
    print(f"{len(manifest['decks'])} decks in {args.out / 'index.html'} (open it in a browser; works offline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
