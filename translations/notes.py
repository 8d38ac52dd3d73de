"""Speaker notes apart from the learner's notebooks: one instructor source per lesson.

A lesson's notes live in ``instructor/notes/<lesson>.md``, one block per note, each under a
heading that gives the note's own id and the id of the lesson cell it follows::

    ## Note 748fd4be, after cell 2657bb04

    **Speaker notes.** Say: ... Ask the room: ... Watch out: ... Time: 5 min.

The learner's notebook holds no notes. Two things put them back, after the cell each names:

- the **instructor edition** of each lesson, ``instructor/<lesson>.ipynb`` (and
  ``instructor/<lang>/<lesson>.ipynb``), written by ``python -m translations.build`` like
  ``notebooks/es/`` and checked by ``check``: the lesson with its notes as markdown cells
  marked ``slideshow.slide_type: notes``, to open in JupyterLab next to the deck;
- the deck build (``slides/build.py``), so a note goes with the slide of the section its cell
  is in.

A note is translated like a cell: ``translations/<lang>/instructor/notes/<lesson>.po`` has one
entry per note, the note's id as its context (``python -m translations.build update`` adds new
notes and marks changed ones fuzzy, as for notebooks).

Notes written inline in a notebook (a markdown cell marked ``notes``, as the lessons had them)
are moved here by::

    python -m translations.notes migrate    # then: python -m translations.build

which takes every notes cell out of ``notebooks/*.ipynb``, anchors it to the nearest cell
before it that is not a note, merges it into the lesson's notes (an inline note replaces the
note of the same id; a notebook from before the move, carrying notes the source has, brings the
lesson's whole set, so a note it lacks was deleted: see ``merged``), and moves its translations
out of the notebook's catalogs into the notes' catalogs. Running it again changes nothing.
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import nbformat
from babel.messages.catalog import Catalog

from . import catalogs

INSTRUCTOR = catalogs.REPO / "instructor"
NOTES = INSTRUCTOR / "notes"
LESSONS = catalogs.REPO / "notebooks"
KIND = "speaker note"
_MARK = re.compile(r"^## Note (\S+), after cell (\S+)$", re.M)
HEADER = """# Speaker notes: notebooks/{lesson}.ipynb

<!-- Kept out of the learner's notebook. Each note is a heading
"## Note <its id>, after cell <the id of a cell of the lesson>", then its text.
`python -m translations.build` puts each note back after its cell in the instructor
edition (instructor/{lesson}.ipynb); the deck shows it with that cell's section.
The Spanish is in translations/es/instructor/notes/{lesson}.po. -->
"""


@dataclass(frozen=True)
class Note:
    id: str  # the note's own id: its translation's context, its cell's id in the instructor edition
    after: str  # the id of the lesson cell it follows
    text: str


def is_note(cell) -> bool:
    return cell.cell_type == "markdown" and cell.get("metadata", {}).get("slideshow", {}).get("slide_type") == "notes"


# -- the notes source ----------------------------------------------------------------------------------
def source_of(lesson: str) -> Path:
    """``instructor/notes/02-topics-partitions-offsets.md`` for lesson ``02-topics-partitions-offsets``."""
    return NOTES / f"{lesson}.md"


def parse(text: str) -> list[Note]:
    """The notes of a source, in order (what comes before the first note is its header)."""
    marks = list(_MARK.finditer(text))
    return [Note(m.group(1), m.group(2), text[m.end():marks[n + 1].start() if n + 1 < len(marks) else None].strip())
            for n, m in enumerate(marks)]


def written(lesson: str, notes: list[Note]) -> str:
    """The source of a lesson's notes, as ``parse`` reads it back."""
    blocks = [HEADER.format(lesson=lesson)] + [f"## Note {n.id}, after cell {n.after}\n\n{n.text}\n" for n in notes]
    return "\n".join(blocks)


def read(lesson: str, lang: str = "en") -> list[Note]:
    """A lesson's notes in ``lang`` (its catalog's translations; English where there is none)."""
    path = source_of(lesson)
    notes = parse(path.read_text()) if path.exists() else []
    if lang == "en" or not notes:
        return notes
    said = {m.context: m.string for m in catalogs.load(catalog_of(lang, lesson)) if m.id and m.string} \
        if catalog_of(lang, lesson).exists() else {}
    return [replace(n, text=said.get(n.id, n.text)) for n in notes]


# -- putting them back -----------------------------------------------------------------------------------
def note_cell(note: Note):
    return nbformat.v4.new_markdown_cell(note.text, id=note.id, metadata={"slideshow": {"slide_type": "notes"}})


def put_back(nb, notes: list[Note]):
    """A copy of ``nb`` with each note as a notes cell after the cell it names (in the notes' order)."""
    out = copy.deepcopy(nb)
    ids = {c.get("id") for c in out.cells}
    lost = [f"note {n.id} follows cell {n.after}" for n in notes if n.after not in ids]
    if lost:
        raise ValueError("these notes follow cells the notebook no longer has: " + "; ".join(lost))
    following: dict[str, list[Note]] = {}
    for note in notes:
        following.setdefault(note.after, []).append(note)
    cells = []
    for cell in out.cells:
        cells.append(cell)
        cells += [note_cell(n) for n in following.get(cell.get("id"), [])]
    out.cells = cells
    return out


def with_notes(nb, path: Path):
    """``nb`` (the notebook at ``path`` or its executed copy) with its lesson's notes, in its language."""
    lang = nb.metadata.get("course", {}).get("language", "en")
    lesson = path.stem if lang == "en" else path.stem.removesuffix(f"-{lang}")  # 03-producers-es: 03-producers
    return put_back(nb, read(lesson, lang))


def take_out(nb) -> tuple[object, list[Note]]:
    """A copy of ``nb`` without notes cells, and the notes, each anchored to the nearest cell before
    it that is not a note (the first cell, if a note opens the notebook)."""
    out = copy.deepcopy(nb)
    kept, notes = [], []
    for cell in out.cells:
        if is_note(cell):
            after = kept[-1].id if kept else None
            notes.append(Note(cell.id, after, cell.source.strip()))
        else:
            kept.append(cell)
    first = kept[0].id if kept else ""
    out.cells = kept
    return out, [n if n.after else replace(n, after=first) for n in notes]


def merged(old: list[Note], inline: list[Note], nb) -> list[Note]:
    """The notes already in the source with the inline ones, in the order of the cells they follow
    (notes after the same cell keep their order). An inline note replaces the note of its id.

    A notebook whose inline notes include one the source already has is a copy from before the move
    (a branch that edited the lesson with its notes inline): it carries the lesson's whole set, so a
    source note it lacks was deleted there and is dropped. Notes that are all new (written inline
    after the move) are added to the source's."""
    fresh = {n.id: n for n in inline}
    whole_set = any(n.id in fresh for n in old)
    notes = [fresh.pop(n.id, n) for n in old if n.id in fresh or not whole_set] + [n for n in inline if n.id in fresh]
    place = {c.id: i for i, c in enumerate(nb.cells)}
    return sorted(notes, key=lambda n: place.get(n.after, len(place)))


# -- translations: one catalog per notes source, the instructor editions as what it builds -------------
def catalog_of(lang: str, lesson: str) -> Path:
    return catalogs.HERE / lang / "instructor" / "notes" / f"{lesson}.po"


def edition_of(lang: str, lesson: str) -> Path:
    return INSTRUCTOR / f"{lesson}.ipynb" if lang == "en" else INSTRUCTOR / lang / f"{lesson}.ipynb"


@dataclass(frozen=True)
class Notes:
    """One lesson's notes in one language: the English source, the catalog (none for English),
    and the instructor edition the build writes."""

    lang: str
    lesson: str

    @property
    def source(self) -> Path:
        return source_of(self.lesson)

    @property
    def catalog(self) -> Path:
        return catalog_of(self.lang, self.lesson)

    @property
    def output(self) -> Path:
        return edition_of(self.lang, self.lesson)

    @property
    def name(self) -> str:
        return catalogs.shown(self.source)

    def units(self) -> list[tuple[str, str, str]]:
        return [(n.id, KIND, n.text) for n in read(self.lesson)]


def lessons() -> list[str]:
    """Every lesson with a notes source."""
    return sorted(p.stem for p in NOTES.glob("*.md"))


def documents(lang: str) -> list[Notes]:
    """The notes of ``lang`` to check and build: every source for English; for another language,
    every catalog whose lesson is translated too (an instructor edition is the translated lesson)."""
    if lang == "en":
        return [Notes("en", lesson) for lesson in lessons()]
    return [n for n in _catalogued(lang) if lesson_catalog(lang, n.lesson).exists()]


def _catalogued(lang: str) -> list[Notes]:
    return [Notes(lang, p.stem) for p in sorted((catalogs.HERE / lang / "instructor" / "notes").glob("*.po"))]


def lesson_catalog(lang: str, lesson: str) -> Path:
    return catalogs.HERE / lang / "notebooks" / f"{lesson}.po"


def waiting(lang: str) -> list[str]:
    """Notes translated before their lesson: no edition yet, but their catalog must be complete and current."""
    if lang == "en":
        return []
    return [line for n in _catalogued(lang) if not lesson_catalog(lang, n.lesson).exists() for line in problems(n)]


def update(notes: Notes) -> list[str]:
    return catalogs.update_units(notes.name, notes.lang, notes.catalog, notes.units(), "note")


def problems(notes: Notes) -> list[str]:
    """Notes that follow no cell of their lesson, and missing, stale or fuzzy translations."""
    if not notes.source.exists():
        return [f"{catalogs.shown(notes.catalog)} translates {notes.name}, which does not exist"]
    lesson = LESSONS / f"{notes.lesson}.ipynb"
    if not lesson.exists():
        return [f"{notes.name} holds the notes of {catalogs.shown(lesson)}, which does not exist"]
    ids = {c.id for c in nbformat.read(lesson, as_version=4).cells}
    found = [f"{notes.name}: note {n.id} follows cell {n.after}, which {catalogs.shown(lesson)} no longer has"
             for n in read(notes.lesson) if n.after not in ids]
    if notes.lang != "en":
        found += catalogs.entry_problems(notes.name, notes.lang, notes.catalog, notes.units(), "note")
    return found


def rendered(notes: Notes) -> str:
    """The instructor edition: the lesson (translated, for another language) with its notes put back."""
    lesson = LESSONS / f"{notes.lesson}.ipynb"
    if notes.lang == "en":
        nb = nbformat.read(lesson, as_version=4)
    else:
        nb = catalogs.translated(catalogs.pairs_for(notes.lang, [lesson_catalog(notes.lang, lesson.stem)])[0])
    out = put_back(nb, read(notes.lesson, notes.lang))
    out.metadata["course"] = {**out.metadata.get("course", {}), "language": notes.lang, "edition": "instructor",
                              "source": catalogs.shown(lesson),
                              "generated": f"by python -m translations.build from {catalogs.shown(lesson)} and "
                                           f"{notes.name}; edit those, not this file"}
    return nbformat.writes(out) + "\n"


# -- the move out of the notebooks --------------------------------------------------------------------------
def migrate(paths: list[Path] | None = None) -> list[str]:
    """Move every notes cell of the lessons into the notes sources, and their translations into
    the notes' catalogs. Idempotent: a lesson without notes cells is left as it is."""
    said = []
    for path in paths or sorted(LESSONS.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        plain, inline = take_out(nb)
        if not inline:
            continue
        lesson = path.stem
        source = source_of(lesson)
        old = parse(source.read_text()) if source.exists() else []
        notes = merged(old, inline, plain)
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(written(lesson, notes))
        path.write_text(nbformat.writes(plain) + "\n")
        said.append(f"{catalogs.shown(path)}: {len(inline)} notes cell(s) moved to {catalogs.shown(source)}")
        kept = {n.id for n in notes}
        said += [f"{catalogs.shown(source)}: note {n.id} dropped (the notebook's own set of notes no longer has it)"
                 for n in old if n.id not in kept]
        for lang in catalogs.languages():
            said += _move_translations(lang, lesson, {n.id for n in inline})
            said += update(Notes(lang, lesson))
    return said


def _move_translations(lang: str, lesson: str, ids: set[str]) -> list[str]:
    """The entries of ``ids`` leave the lesson's catalog for its notes' catalog (flags, fuzzy and
    the English they were made from kept)."""
    cells = lesson_catalog(lang, lesson)
    if not cells.exists():
        return []
    target = catalog_of(lang, lesson)
    moving = [m for m in catalogs.load(cells) if m.id and m.context in ids]
    if not moving:
        return []
    kept = catalogs.new_catalog(lang)
    _copy(cells, kept, lambda m: m.context not in ids)
    notes = catalogs.new_catalog(lang)
    if target.exists():
        _copy(target, notes, lambda m: m.context not in ids)
    _copy(cells, notes, lambda m: m.context in ids, comment=KIND)
    catalogs.save(kept, cells)
    catalogs.save(notes, target)
    return [f"{catalogs.shown(cells)}: {len(moving)} translation(s) moved to {catalogs.shown(target)}"]


def _copy(path: Path, into: Catalog, keep, comment: str | None = None) -> None:
    earlier = catalogs.previous_ids(path)
    for m in catalogs.load(path):
        if m.id and keep(m):
            into.add(m.id, m.string, context=m.context, flags=m.flags,
                     previous_id=earlier.get(m.context) if m.fuzzy else None,
                     auto_comments=[comment] if comment else m.auto_comments)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m translations.notes", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["migrate"])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/*.ipynb")
    args = parser.parse_args(argv)
    said = migrate([p.resolve() for p in args.notebooks] or None)
    print("\n".join(said) if said else "No notes cells in the lessons: nothing to move.")
    if said:
        print("Now run `python -m translations.build` to write the Spanish notebooks and the instructor editions.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
