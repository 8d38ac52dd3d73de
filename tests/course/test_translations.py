"""The Spanish edition: built from the English notebooks and gettext catalogs, never edited by hand.

- Every catalog is complete and current: a cell without a translation, or whose English
  changed after it was translated (stale), fails; so do committed translated notebooks
  that differ from what ``python -m translations.build`` writes (drift).
- The package's own sentences (``kafka_course.i18n``) all have a translation with the same
  placeholders, and the course speaks the language of the folder a notebook runs in.
- The Spanish text follows the glossary (``translations/es/GLOSSARY.md``).
- Every Spanish notebook and lab solution runs under nbval and under papermill (the lessons'
  papermill run is the deck build's, checked in tests/slides; the lab solutions' and worked
  solutions' are here, and must speak Spanish). A Spanish lab starter fails its check, in Spanish.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from kafka_course import i18n
from tests.course.english import english_lines, unexpected_english
from tests.course.test_notebooks import run_timeout, timed
from translations import build, catalogs
from translations.notes import documents as notes_of

ROOT = Path(__file__).resolve().parents[2]
PAIRS = [pair for lang in build.languages() for pair in build.pairs(lang)]
STARTERS = [p.output for p in PAIRS  # labs/02-partitioner/es/lab02-partitioner-es.ipynb
            if p.source.parent.parent.name == "labs" and not p.source.stem.endswith("-solution")]
RUNNABLE = [p.output for p in PAIRS if p.output not in STARTERS]


def name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_there_is_a_spanish_edition():
    assert "es" in build.languages() and PAIRS
    assert (ROOT / "notebooks" / "es" / "00-setup-and-tour-es.ipynb").exists()


def test_every_translation_is_complete_current_and_built():
    found = build.check()
    assert found == [], "\n".join(found)


def _pair_with_source(pair: build.Pair, tmp_path: Path, change) -> build.Pair:
    nb = nbformat.read(pair.source, as_version=4)
    change(nb)
    source = tmp_path / pair.source.name
    nbformat.write(nb, source)
    return build.Pair(pair.lang, source, pair.catalog, tmp_path / "out.ipynb")


def test_a_changed_english_cell_makes_its_translation_stale(tmp_path, monkeypatch):
    pair = next(p for p in PAIRS if p.name == "notebooks/00-setup-and-tour.ipynb")
    monkeypatch.setattr(catalogs, "REPO", tmp_path.parent)  # names relative to somewhere that holds tmp_path

    def edit(nb):
        cell = next(c for c in nb.cells if c.cell_type == "markdown")
        cell.source += "\n\nOne more sentence."
    stale = build.problems(_pair_with_source(pair, tmp_path, edit))
    assert len(stale) == 1 and "stale" in stale[0]

    def add(nb):
        nb.cells.append(nbformat.v4.new_markdown_cell("A new paragraph.", id="newcell1"))
    missing = build.problems(_pair_with_source(pair, tmp_path, add))
    assert missing == [f"{tmp_path.name}/{pair.source.name}, markdown cell newcell1: no es translation"]


def test_update_keeps_an_old_translation_as_fuzzy_with_the_english_it_was_made_from(tmp_path, monkeypatch):
    pair = next(p for p in PAIRS if p.name == "notebooks/00-setup-and-tour.ipynb")
    catalog = tmp_path / "es" / "copy.po"
    catalog.parent.mkdir()
    shutil.copy(pair.catalog, catalog)
    monkeypatch.setattr(catalogs, "HERE", tmp_path)
    monkeypatch.setattr(catalogs, "REPO", tmp_path.parent)

    def edit(nb):
        next(c for c in nb.cells if c.id == "d8619c33").source += " (edited)"
    changed = _pair_with_source(pair, tmp_path, edit)
    changed = build.Pair("es", changed.source, catalog, changed.output)
    said = build.update(changed)
    assert said == [f"{tmp_path.name}/{pair.source.name}: cell d8619c33 changed since it was translated "
                    "(marked fuzzy)"]
    entry = next(m for m in build.load(catalog) if m.context == "d8619c33")
    assert entry.fuzzy and entry.string.startswith("Cada mensaje")
    english = next(c.source for c in nbformat.read(pair.source, as_version=4).cells if c.id == "d8619c33")
    assert catalogs.previous_ids(catalog) == {"d8619c33": english}, "the translator sees what the English was"
    build.update(changed)  # a second update keeps it
    assert catalogs.previous_ids(catalog) == {"d8619c33": english}
    assert any("fuzzy" in line for line in build.problems(changed))


def test_a_hand_edited_translated_notebook_is_drift(tmp_path, monkeypatch):
    """check() compares every committed translation with what the build writes."""
    pair = PAIRS[0]
    edited = tmp_path / pair.output.name
    edited.write_text(pair.output.read_text().replace("Kafka", "Kafká", 1))
    moved = build.Pair(pair.lang, pair.source, pair.catalog, edited)
    monkeypatch.setattr(build, "everything", lambda lang: [moved] if lang == pair.lang else [])
    found = build.check(pair.lang)
    assert found == [f"{edited} is not what the build writes: run "
                     "`python -m translations.build` and commit the result"]
    edited.write_text(build.rendered(moved))
    assert build.check(pair.lang) == []


def test_a_new_language_is_a_new_folder_of_catalogs_not_new_code(tmp_path, monkeypatch):
    """Portuguese, tried on a scratch copy: `add` writes the catalog, a translator fills it,
    `check` names what is missing until then, and `build` writes notebooks/pt/."""
    (tmp_path / "translations").mkdir()
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / "00-setup-and-tour.ipynb", tmp_path / "notebooks")
    monkeypatch.setattr(catalogs, "HERE", tmp_path / "translations")
    monkeypatch.setattr(catalogs, "REPO", tmp_path)
    monkeypatch.chdir(tmp_path)
    assert build.main(["add", "pt", "notebooks/00-setup-and-tour.ipynb"]) == 0
    assert build.languages() == ["pt"]
    pair, = build.pairs("pt")
    missing = build.check("pt", [pair])
    assert missing and all("no pt translation" in line for line in missing)
    catalog = build.load(pair.catalog)
    for entry in catalog:
        if entry.id:
            entry.string = "[pt] " + entry.id  # what a translator would write
    build.save(catalog, pair.catalog)
    assert build.check("pt", [pair]) != [], "built nothing yet: the notebook must be missing"
    assert build.build("pt", [pair]) == [tmp_path / "notebooks" / "pt" / "00-setup-and-tour-pt.ipynb"]
    assert build.check("pt", [pair]) == []
    built = nbformat.read(pair.output, as_version=4)
    assert built.metadata["course"]["language"] == "pt"
    assert any(c.source.startswith("[pt] ") for c in built.cells if c.cell_type == "markdown")


# -- the package's sentences -----------------------------------------------------------------------
def test_every_sentence_of_the_package_has_a_translation_with_the_same_placeholders():
    assert build.package_problems("es") == []
    assert len(build.package_messages()) > 50


def test_the_course_speaks_the_language_of_the_folder_or_of_course_lang(tmp_path, monkeypatch):
    from kafka_course.checks import Report
    monkeypatch.delenv("COURSE_LANG", raising=False)
    assert i18n.language() == "en"
    for folder in ("notebooks/es", "labs/02-partitioner/es", "notebooks/es/solutions"):
        (tmp_path / folder).mkdir(parents=True)
        monkeypatch.chdir(tmp_path / folder)
        assert i18n.language() == "es", folder
    assert i18n._("Ready for the course.") == "Listo para el curso."
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COURSE_LANG", "es_ES.UTF-8")
    report = Report("t")
    report.check(True, "ok", "")
    report.check(False, "", "wrong")
    assert report.summary() == "1 de 2 comprobaciones pasaron, 1 con fallo."
    monkeypatch.setenv("COURSE_LANG", "fr")  # no catalog: English
    assert i18n.language() == "en" and i18n._("Ready for the course.") == "Ready for the course."


def test_in_jupyterlab_the_notebooks_own_metadata_chooses_the_language(tmp_path, monkeypatch):
    """Jupyter's server names a kernel's notebook in JPY_SESSION_NAME: its metadata wins over the folder."""
    monkeypatch.delenv("COURSE_LANG", raising=False)
    monkeypatch.chdir(tmp_path)  # an English folder
    spanish = ROOT / "notebooks" / "es" / "00-setup-and-tour-es.ipynb"
    moved = tmp_path / "copied-out-of-es.ipynb"
    moved.write_text(spanish.read_text())
    monkeypatch.setenv("JPY_SESSION_NAME", str(moved))
    assert i18n.language() == "es"
    monkeypatch.setenv("JPY_SESSION_NAME", str(ROOT / "notebooks" / "00-setup-and-tour.ipynb"))
    assert i18n.language() == "en"  # the English source has no language in its metadata: the folder decides
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "gone.ipynb"))
    assert i18n.language() == "en"


# -- the glossary ------------------------------------------------------------------------------------
def avoided(lang: str) -> dict[str, str]:
    """Each variant the glossary says to avoid -> the term to use."""
    rows = [line.split("|")[1:-1] for line in (catalogs.HERE / lang / "GLOSSARY.md").read_text().splitlines()
            if line.startswith("| ") and not line.startswith("| English") and not line.startswith("|---")]
    return {bad.strip(): use.strip() for _, use, bads in rows for bad in bads.split(",") if bad.strip()}


def prose(text: str) -> str:
    """Text without code: fenced blocks and `inline code` are not prose."""
    return re.sub(r"`[^`]*`", " ", re.sub(r"```.*?```", " ", text, flags=re.S))


def test_the_spanish_text_follows_the_glossary():
    bad = avoided("es")
    assert "tópico" in bad and "desplazamiento" in bad
    found = []
    texts = [(pair.name, m.string) for pair in PAIRS for m in build.load(pair.catalog)
             if m.id and "markdown cell" in m.auto_comments]
    texts += [("kafka_course/locales/es.po", m.string) for m in build.load(build.package_catalog("es")) if m.id]
    texts += [(notes.name, m.string) for notes in notes_of("es") for m in build.load(notes.catalog) if m.id]
    for where, text in texts:
        for word, use in bad.items():
            if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", prose(text), re.IGNORECASE):
                found.append(f"{where}: {word!r} (the glossary says {use})")
    assert found == [], "\n".join(found)


# -- run, as the English ones are -------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("path", timed(RUNNABLE))
def test_spanish_notebooks_run_under_nbval(path):
    from tests.course.test_notebooks import run_nbval
    done = run_nbval(path)
    assert done.returncode == 0, f"nbval failed for {name(path)}:\n{done.stdout[-6000:]}"


def papermill(path: Path, out: Path):
    """Run ``path`` with papermill in its own folder (so it speaks that folder's language); its result and output."""
    from tests.course.test_notebooks import once_more_if_spark_was_late
    done = once_more_if_spark_was_late(path, lambda: subprocess.run(
        [sys.executable, "-m", "papermill", "--cwd", str(path.parent), str(path), str(out / path.name),
         "--no-progress-bar"], capture_output=True, text=True, timeout=run_timeout(path),
        env={**os.environ, "PYTHONPATH": str(ROOT)}), out / path.name)
    return done, nbformat.read(out / path.name, as_version=4)


@pytest.mark.slow
@pytest.mark.parametrize("path", timed([p for p in RUNNABLE if p.relative_to(ROOT).parts[0] == "labs"]))
def test_spanish_lab_solutions_run_under_papermill(path, tmp_path):
    done, executed = papermill(path, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = "".join(o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.outputs)
    assert "comprobaciones pasaron" in printed or "Todas pasaron" in printed, "the check spoke English"
    assert unexpected_english(executed) == []


@pytest.mark.slow
@pytest.mark.parametrize("path", timed([p for p in RUNNABLE if p.parent.name == "solutions"]))
def test_spanish_worked_solutions_run_under_papermill(path, tmp_path):
    done, executed = papermill(path, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = "".join(o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.outputs)
    assert "Arrancado un minikafka embebido" in printed, "the course spoke English (or started no broker)"
    assert unexpected_english(executed) == []


@pytest.mark.slow
@pytest.mark.parametrize("path", timed(STARTERS))
def test_an_untouched_spanish_starter_fails_its_check_in_spanish(path, tmp_path):
    done, executed = papermill(path, tmp_path)
    assert done.returncode != 0
    last = [c for c in executed.cells if c.cell_type == "code"][-1]
    errors = [o for o in last.outputs if o.get("output_type") == "error"]
    assert errors and errors[0]["ename"] == "CheckFailed"
    assert "comprobaciones pasaron" in errors[0]["evalue"], errors[0]["evalue"]


def test_the_english_detector_tells_prose_from_names_logs_and_code():
    assert english_lines("un consumidor lee: [b'written with acks=1']") != []
    assert english_lines("{'acks': '1', 'acknowledged but lost': 50}") != []
    assert english_lines("partition 0: leader 1, replicas [1], in sync [1]") != []
    assert english_lines("alice leaves the group") != []
    for spanish_or_names in ("partición 0: líder 1, réplicas [1], sincronizadas [1]",
                             "NOT_ENOUGH_REPLICAS: Messages are rejected since there are fewer in-sync replicas",
                             "el commit falló: _FENCED, Failed to end transaction: This instance has been fenced",
                             "minikafka WARNING: broker 1 did not shut down cleanly",
                             "salida 0; %0|1795777938.690|FATAL|rdkafka#consumer-1| [thrd:main]: Fatal error: Broker",
                             "at-most-once  0  0.0", "{'country': 'IT', 'at': 3}", "Sale(at=1, customer='a')",
                             "Completed updating config for topic payments.",
                             "def f():\n    # the records, then the offsets\n    return 1\n"):
        assert english_lines(spanish_or_names) == [], spanish_or_names


def test_helpers_print_spanish_in_spanish(monkeypatch):
    from kafka_course.handle import ClusterHandle, PartitionState
    monkeypatch.setenv("COURSE_LANG", "es")
    assert str(PartitionState(0, 1, (1, 2), (1,))) == "partición 0: líder 1, réplicas [1, 2], sincronizadas [1]"
    assert repr(ClusterHandle("127.0.0.1:1", None)) == "<clúster de Kafka externo en 127.0.0.1:1>"
    from kafka_course.members import EVENTS
    assert [i18n._(w) for w in EVENTS.values()] == ["revocadas", "asignadas", "salió"]


def test_every_tab_tells_the_language_and_the_lab():
    """JupyterLab titles a tab with the file name: a translation's names its language, a lab's names the lab."""
    for pair in PAIRS:
        assert pair.output.name == f"{pair.source.stem}-{pair.lang}.ipynb", name(pair.output)
        if pair.source.parent.parent.name == "labs":
            assert pair.source.stem.startswith(f"lab{pair.source.parent.name}"), name(pair.source)


def test_links_between_translated_notebooks_lead_somewhere():
    """A Spanish notebook links to its Spanish worked solutions, or to the English ones until they exist."""
    broken = []
    for pair in PAIRS:
        for cell in nbformat.read(pair.output, as_version=4).cells:
            if cell.cell_type != "markdown":
                continue
            for target in re.findall(r"\]\(([^)#\s]+\.ipynb)\)", cell.source):
                if "://" not in target and not (pair.output.parent / target).resolve().exists():
                    broken.append(f"{name(pair.output)}: {target}")
    assert broken == [], broken
