"""Speaker notes live apart from the learner's notebooks (``translations/notes.py``).

- No learner notebook (lessons, their Spanish edition, worked solutions, labs) holds a notes cell.
- Every lesson has its notes source ``instructor/notes/<lesson>.md``; every note follows a cell the
  lesson still has; every ``##`` section of a lesson gets a note; every note says what to say,
  what to ask the room, what can go wrong and how long it takes.
- The instructor editions (``instructor/``, ``instructor/es/``) are the lessons with their notes
  put back, as the build writes them; the decks get the notes in the notebook's language.
- ``python -m translations.notes migrate`` moves inline notes cells (and their translations) into
  the notes sources, and running it again changes nothing.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from slides import deck
from translations import build, catalogs, notes

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LEARNERS = LESSONS + sorted((ROOT / "notebooks").glob("*/*.ipynb")) + sorted((ROOT / "labs").rglob("*.ipynb"))
PARTS = ("Say:", "Ask the room:", "Watch out:", "Time:")


def name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_no_learner_notebook_holds_speaker_notes():
    holding = {name(p): [c.id for c in nbformat.read(p, as_version=4).cells if notes.is_note(c)] for p in LEARNERS}
    holding = {k: v for k, v in holding.items() if v}
    assert not holding, (f"speaker notes cells in learner notebooks (notebook: cell ids): {holding}; move them with "
                         "`python -m translations.notes migrate`, then `python -m translations.build`")


def test_every_lesson_has_its_notes_and_every_notes_source_its_lesson():
    assert sorted(p.stem for p in LESSONS) == notes.lessons()


@pytest.mark.parametrize("path", LESSONS, ids=name)
def test_every_note_follows_a_cell_the_lesson_still_has(path):
    ids = {c.id for c in nbformat.read(path, as_version=4).cells}
    lost = [(n.id, n.after) for n in notes.read(path.stem) if n.after not in ids]
    assert not lost, f"{name(notes.source_of(path.stem))}: notes following cells {name(path)} no longer has " \
                     f"(note, cell): {lost}"


@pytest.mark.parametrize("path", LESSONS, ids=name)
def test_every_section_has_speaker_notes(path):
    nb = notes.put_back(nbformat.read(path, as_version=4), notes.read(path.stem))
    built = deck.build_deck(nb, path.stem)
    assert built.sections_without_notes == [], f"{name(path)}: sections without speaker notes"


@pytest.mark.parametrize("path", LESSONS, ids=name)
def test_every_note_says_what_to_say_what_to_ask_what_can_go_wrong_and_how_long(path):
    thin = [(n.id, [p for p in PARTS if p not in n.text]) for n in notes.read(path.stem)
            if not n.text.startswith("**Speaker notes.**") or not all(p in n.text for p in PARTS)]
    assert not thin, f"{name(notes.source_of(path.stem))}: notes missing parts (note id, missing): {thin}"


def test_the_instructor_editions_are_the_lessons_with_their_notes_as_built():
    for edition in build.editions() + [n for lang in build.languages() for n in notes.documents(lang)]:
        assert edition.output.exists(), f"{name(edition.output)} is missing: run `python -m translations.build`"
        assert edition.output.read_text() == build.rendered(edition), (
            f"{name(edition.output)} is not what the build writes: run `python -m translations.build`")
    lesson = LESSONS[2]
    edition = nbformat.read(notes.edition_of("en", lesson.stem), as_version=4)
    plain = [c.id for c in edition.cells if not notes.is_note(c)]
    assert plain == [c.id for c in nbformat.read(lesson, as_version=4).cells]
    assert [c.id for c in edition.cells if notes.is_note(c)] == [n.id for n in notes.read(lesson.stem)]


def test_a_spanish_deck_gets_spanish_notes():
    spanish = ROOT / "notebooks" / "es" / catalogs.translated_name(LESSONS[2], "es")
    nb = notes.with_notes(nbformat.read(spanish, as_version=4), spanish)
    said = [c.source for c in nb.cells if notes.is_note(c)]
    assert said and all(s.startswith("**Notas para el ponente.**") for s in said)
    assert all(s.slides[0].notes for s in deck.build_deck(nb, spanish.stem).columns)


def test_a_note_after_a_cell_that_is_gone_is_named():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T", id="title")])
    with pytest.raises(ValueError, match="note n1 follows cell gone"):
        notes.put_back(nb, [notes.Note("n1", "gone", "**Speaker notes.** Say: x.")])


def _lesson(tmp_path: Path, *cells) -> Path:
    path = tmp_path / "notebooks" / "99-test.ipynb"
    path.parent.mkdir(exist_ok=True)
    path.write_text(nbformat.writes(nbformat.v4.new_notebook(cells=list(cells))) + "\n")
    return path


def _note(text: str, cell_id: str):
    return nbformat.v4.new_markdown_cell(text, id=cell_id, metadata={"slideshow": {"slide_type": "notes"}})


def test_migrate_moves_notes_and_translations_out_and_a_second_run_changes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(catalogs, "REPO", tmp_path)
    monkeypatch.setattr(catalogs, "HERE", tmp_path / "translations")
    monkeypatch.setattr(notes, "NOTES", tmp_path / "instructor" / "notes")
    monkeypatch.setattr(notes, "LESSONS", tmp_path / "notebooks")
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    path = _lesson(tmp_path, md("# Title", id="title"), _note("Say: one.", "n1"), md("## Part", id="part"),
                   code("x = 1", id="code"), _note("Say: two.", "n2"), _note("Say: three.", "n3"))
    catalog = tmp_path / "translations" / "es" / "notebooks" / "99-test.po"
    (tmp_path / "translations" / "es").mkdir(parents=True)
    build.update(build.Pair("es", path, catalog, tmp_path / "out.ipynb"))
    entries = build.load(catalog)
    for m in entries:
        m.string = {"# Title": "# Título", "## Part": "## Parte", "Say: one.": "Di: uno."}.get(m.id, "")
    build.save(entries, catalog)

    notes.migrate([path])
    assert [c.id for c in nbformat.read(path, as_version=4).cells] == ["title", "part", "code"]
    moved = notes.read("99-test")
    assert [(n.id, n.after, n.text) for n in moved] == [
        ("n1", "title", "Say: one."), ("n2", "code", "Say: two."), ("n3", "code", "Say: three.")]
    assert {m.context for m in build.load(catalog) if m.id} == {"title", "part"}
    first = notes.read("99-test", "es")[0]
    assert (first.id, first.text) == ("n1", "Di: uno.")

    files = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert notes.migrate([path]) == []
    assert files == {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}

    # A branch from before the move brings the lesson's whole set inline: n2 edited, n3 deleted, n4 new.
    _lesson(tmp_path, md("# Title", id="title"), _note("Say: one.", "n1"), md("## Part", id="part"),
            _note("Say: two, edited.", "n2"), code("x = 1", id="code"), md("## New", id="new"),
            _note("Say: four.", "n4"))
    said = notes.migrate([path])
    assert [(n.id, n.after, n.text) for n in notes.read("99-test")] == [
        ("n1", "title", "Say: one."), ("n2", "part", "Say: two, edited."), ("n4", "new", "Say: four.")]
    assert any("note n3 dropped" in line for line in said)
    assert not any(notes.is_note(c) for c in nbformat.read(path, as_version=4).cells)
    assert {m.context for m in build.load(notes.catalog_of("es", "99-test")) if m.id} == {"n1", "n2", "n4"}

    # A note written inline after the move is added to the others.
    _lesson(tmp_path, md("# Title", id="title"), _note("Say: zero.", "n0"), md("## Part", id="part"),
            code("x = 1", id="code"), md("## New", id="new"))
    notes.migrate([path])
    assert [n.id for n in notes.read("99-test")] == ["n1", "n0", "n2", "n4"]


def test_notes_translated_before_their_lesson_are_checked_and_wait_for_it(tmp_path, monkeypatch):
    """A language being written may have a lesson's notes before the lesson: no instructor edition
    yet (it is the translated lesson), but `check` holds the notes' catalog to the same rules."""
    monkeypatch.setattr(catalogs, "HERE", tmp_path)
    lesson = LESSONS[2].stem
    waiting = notes.Notes("pt-BR", lesson)
    notes.update(waiting)  # a catalog of empty entries, as `add` starts one
    assert notes.documents("pt-BR") == [], "no edition to build without the lesson's catalog"
    said = notes.waiting("pt-BR")
    assert said and all("no pt-BR translation" in line for line in said)
    entries = build.load(waiting.catalog)
    for m in entries:
        m.string = m.id.replace("**Speaker notes.**", "**Notas do apresentador.**")
    build.save(entries, waiting.catalog)
    assert notes.waiting("pt-BR") == []
    build.update(build.pairs_for("pt-BR", [notes.lesson_catalog("pt-BR", lesson)])[0])
    assert notes.documents("pt-BR") == [waiting] and notes.waiting("pt-BR") == []
