"""Build the course in other languages from the English notebooks and gettext catalogs.

The English notebooks and labs are the source. For each language there is one catalog
(a ``.po`` file) per translated notebook, mirroring its path::

    translations/es/notebooks/00-setup-and-tour.po            -> notebooks/es/00-setup-and-tour-es.ipynb
    translations/es/labs/02-partitioner/lab02-partitioner.po  -> labs/02-partitioner/es/lab02-partitioner-es.ipynb

A translation's file name is the English one with the language added, so a JupyterLab tab tells
the two editions apart. A translator writes links with the English file names, as the folder of
the translation would hold them (``solutions/03-producers.ipynb``,
``../../labs/11-streaming-aggregation/es/lab11-streaming-aggregation.ipynb``); the build points
each link at a notebook of the same language to its translated name.

An entry is one cell: its nbformat cell id is the entry's context (``msgctxt``), its English
source the ``msgid``, its translation the ``msgstr``. Every markdown cell has an entry (speaker
notes, kept apart, have catalogs of their own: see below); a code cell has one when it holds
something a learner reads, a comment or a sentence in a string, and its translation is the
whole cell with those translated. Other code cells are copied as they are. A translated code cell
must be the English code token for token once comments and the words of strings are set aside
(``catalogs.code_difference``; the fields an f-string or ``str.format`` fills count as code), so the
English notebook's run vouches for the code of every translation.

A language is named as the web names it, ``es`` or ``pt-BR``: that name is the folder of its
catalogs (``translations/pt-BR/``), of its notebooks (``notebooks/pt-BR/``, ``labs/<lab>/pt-BR/``,
``docs/pt-BR/``, ``instructor/pt-BR/``), the suffix of their files (``00-setup-and-tour-pt-BR.ipynb``,
``README.pt-BR.md``) and its package catalog (``kafka_course/locales/pt-BR.po``). Every folder of
``translations/`` so named is a language; build and check go over the catalogs it has, so a language
being written is checked as far as it goes (the package's sentences are needed from its first notebook,
the decks' words once it has lessons). A link to a notebook of the language that is not translated yet
leads to the English one until it is.

    python -m translations.build add es notebooks/01-messaging-patterns.ipynb   # start a catalog
    python -m translations.build update   # add new cells to the catalogs, mark changed ones fuzzy
    python -m translations.build          # write the translated notebooks
    python -m translations.build check    # what is missing, stale or out of date (exit 1 if anything)
    python -m translations.build check es notebooks/01-messaging-patterns.ipynb   # build/check: only these

A cell whose English changed after it was translated is *stale*: ``update`` keeps the old
translation marked fuzzy, with the English it was made from, until a translator updates
it and removes the flag. The build refuses catalogs with missing or fuzzy entries, and the
tests fail on them, so a translated notebook never silently drifts from its source.
Adding a language is a new folder of catalogs (and ``kafka_course/locales/<lang>.po``).

Markdown documents go through the same steps (``translations/docs.py``: one entry per block):
the instructor guide and the course part of the README::

    translations/es/docs/instructor-guide.po -> docs/es/instructor-guide.md
    translations/es/README.po                -> README.es.md
    python -m translations.build add es docs/instructor-guide.md   # build/check take documents too

the lessons' speaker notes (``translations/notes.py``: one entry per note, keyed by the note's id),
whose build writes the instructor editions, the lessons with their notes put back::

    translations/es/instructor/notes/02-topics-partitions-offsets.po -> instructor/es/02-topics-partitions-offsets.ipynb
    instructor/notes/02-topics-partitions-offsets.md (English: no catalog) -> instructor/02-...ipynb

and the few words the decks show that are not from a notebook ("(continued)", the index's
labels, the diagrams' captions) come from ``translations/<lang>/slides.po``, filled from every
``_("...")`` and ``N_("...")`` in ``slides/`` as the package's sentences are from ``kafka_course``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

from . import catalogs, docs, notes
from .catalogs import (Pair, entry_problems, languages, load, pairs, pairs_for, save, shown, translatable_cells,
                       translated, update_units)

def _other(unit):
    """The module that handles a unit that is not a notebook: a document, or a lesson's speaker notes."""
    return notes if isinstance(unit, notes.Notes) else docs


def update(pair: Pair) -> list[str]:
    """Bring the catalog in line with its source: new cells added, changed ones fuzzy, gone ones dropped."""
    if not isinstance(pair, Pair):
        return _other(pair).update(pair)
    _, cells = translatable_cells(pair.source)
    return update_units(pair.name, pair.lang, pair.catalog,
                        [(cell.id, f"{cell.cell_type} cell", cell.source) for cell in cells], "cell")


# -- the course package's own sentences (kafka_course.i18n) --------------------------------------------
PACKAGE = catalogs.REPO / "kafka_course"


def package_messages() -> list[str]:
    """Every literal passed to ``_()`` or ``N_()`` in the course package, in order of first use."""
    import ast
    found: dict[str, None] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "N_")
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                found.setdefault(node.args[0].value)
    from kafka_course.labs.partitioner import TAIL_HINT  # keys passed to _() through a table
    for hint in TAIL_HINT.values():
        found.setdefault(hint)
    return list(found)


def package_catalog(lang: str) -> Path:
    return PACKAGE / "locales" / f"{lang}.po"


def update_package(lang: str) -> list[str]:
    return update_sentences(lang, package_catalog(lang), package_messages())


def package_problems(lang: str) -> list[str]:
    """A language with a translated notebook needs every sentence the package prints (a language
    still being written, with no notebook catalog yet, needs only what its catalog has to be right)."""
    if not package_catalog(lang).exists() and not pairs(lang):
        return []
    return sentence_problems(lang, package_catalog(lang), package_messages())


# -- the decks' own words (slides/: "(continued)", the index's labels, the diagrams' captions) -----------
SLIDES = catalogs.REPO / "slides"


def slides_messages() -> list[str]:
    """Every literal passed to ``_()`` or ``N_()`` in slides/*.py and its templates (in a stable order)."""
    import ast
    found: dict[str, None] = {}
    for path in sorted(SLIDES.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "N_")
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                found.setdefault(node.args[0].value)
    for path in sorted((SLIDES / "templates").glob("*.j2")):
        for text in re.findall(r'\b_\("((?:[^"\\]|\\.)*)"\)', path.read_text()):
            found.setdefault(text.replace('\\"', '"'))
    return list(found)


def slides_catalog(lang: str) -> Path:
    return catalogs.HERE / lang / "slides.po"


def slides_problems(lang: str) -> list[str]:
    """A language with decks (notebooks/<lang>/) needs every word of the decks."""
    if not slides_catalog(lang).exists() and not any((catalogs.REPO / "notebooks" / lang).glob("*.ipynb")):
        return []
    return sentence_problems(lang, slides_catalog(lang), slides_messages())


def update_slides(lang: str) -> list[str]:
    if not slides_catalog(lang).exists() and not any((catalogs.REPO / "notebooks" / lang).glob("*.ipynb")):
        return []
    return update_sentences(lang, slides_catalog(lang), slides_messages())


# -- catalogs of sentences keyed by their English (the package's, the decks') -------------------------
def update_sentences(lang: str, path: Path, messages: list[str]) -> list[str]:
    """New sentences added with an empty translation, the others kept, the unused dropped."""
    old = {m.id: m for m in load(path) if m.id} if path.exists() else {}
    fresh = catalogs.new_catalog(lang)
    for text in messages:
        before = old.get(text)
        fresh.add(text, before.string if before else "", flags=before.flags if before else ())
    save(fresh, path)
    gone = sorted(set(old) - set(messages))
    return [f"{path.relative_to(catalogs.REPO)}: {len(gone)} sentence(s) no longer used, dropped"] if gone else []


def sentence_problems(lang: str, path: Path, messages: list[str]) -> list[str]:
    """Missing, fuzzy or unused sentences, and translations with other placeholders."""
    if not path.exists():
        return [f"{path.relative_to(catalogs.REPO)} is missing: run `python -m translations.build update`"]
    entries = {m.id: m for m in load(path) if m.id}
    found = []
    for text in messages:
        entry = entries.get(text)
        if entry is None or not entry.string:
            found.append(f"{path.relative_to(catalogs.REPO)}: no {lang} translation of {text!r}")
        elif entry.fuzzy:
            found.append(f"{path.relative_to(catalogs.REPO)}: {text!r} is marked fuzzy")
        elif sorted(re.findall(r"{[^{}]*}", text)) != sorted(re.findall(r"{[^{}]*}", entry.string)):
            found.append(f"{path.relative_to(catalogs.REPO)}: the translation of {text!r} has other placeholders")
    unused = sorted(set(entries) - set(messages))
    found += [f"{path.relative_to(catalogs.REPO)}: {t!r} is no longer used" for t in unused]
    return found


def problems(pair: Pair) -> list[str]:
    """What keeps this catalog from building the translated notebook (or document) as its source is now."""
    if not isinstance(pair, Pair):
        return _other(pair).problems(pair)
    if not pair.source.exists():
        return [f"{pair.catalog.relative_to(catalogs.REPO)} translates {pair.name}, which does not exist"]
    _, cells = translatable_cells(pair.source)
    found = entry_problems(pair.name, pair.lang, pair.catalog,
                           [(cell.id, f"{cell.cell_type} cell", cell.source) for cell in cells], "cell")
    return found + code_problems(pair, cells)


def code_problems(pair: Pair, cells) -> list[str]:
    """Translated code cells that run other code than the English: only comments and the words of
    strings are the translator's, so the English notebook's run vouches for the translation's code."""
    said = {m.context: m.string for m in load(pair.catalog) if m.id and isinstance(m.string, str)}
    found = []
    for cell in cells:
        translation = said.get(cell.id)
        if cell.cell_type == "code" and translation and (differ := catalogs.code_difference(cell.source, translation)):
            found.append(f"{pair.name}, code cell {cell.id}: the translation's code is not the English code "
                         f"({differ}); translate only comments and the words of strings")
    return found


def rendered(pair: Pair) -> str:
    if not isinstance(pair, Pair):
        return _other(pair).rendered(pair)
    return nbformat.writes(translated(pair)) + "\n"


def everything(lang: str) -> list:
    """Every notebook, document and lesson's notes ``lang`` has a catalog for (the notes build the
    instructor editions: ``translations.notes``)."""
    return pairs(lang) + docs.documents(lang) + notes.documents(lang)


def editions() -> list:
    """What English needs no catalog for but the build writes: the English instructor editions."""
    return notes.documents("en")


def _units(lang: str | None, only: list | None) -> list:
    """What build and check go through: ``only``, or every catalog of the language(s) and, for all
    languages, the English instructor editions too."""
    if only is not None:
        return list(only)
    return [u for each in (languages() if lang is None else [lang]) for u in everything(each)] + (
        editions() if lang is None else [])


def build(lang: str | None = None, only: list[Pair] | None = None) -> list[Path]:
    """Write each translated notebook or document whose text differs from the build's; the paths written."""
    written = []
    for pair in _units(lang, only):
        found = problems(pair)
        if found:
            raise SystemExit(f"Cannot build {pair.output.relative_to(catalogs.REPO)}:\n  " + "\n  ".join(found))
        text = rendered(pair)
        if pair.output.exists() and pair.output.read_text() == text:
            continue  # left untouched: an unchanged file keeps its time, so git does not clean it again
        pair.output.parent.mkdir(parents=True, exist_ok=True)
        pair.output.write_text(text)
        written.append(pair.output)
    return written


def check(lang: str | None = None, only: list[Pair] | None = None) -> list[str]:
    """Every problem: missing or stale entries, and committed notebooks that differ from the build.

    With ``only``, just those notebooks or documents (the package's and the decks' sentences are left out).
    """
    found = []
    if only is None:
        for each in languages() if lang is None else [lang]:
            found += package_problems(each) + slides_problems(each) + notes.waiting(each)
    for pair in _units(lang, only):
        trouble = problems(pair)
        found += trouble
        if not trouble and (not pair.output.exists() or pair.output.read_text() != rendered(pair)):
            found.append(f"{shown(pair.output)} is not what the build writes: run "
                         "`python -m translations.build` and commit the result")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m translations.build", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", nargs="?", default="build", choices=["build", "update", "check", "add"])
    parser.add_argument("what", nargs="*", help="a language, then English notebooks or documents "
                        "(docs/instructor-guide.md, README.md): with add, the ones to translate; with build or "
                        "check, only these (default: every catalog)")
    parser.add_argument("--lang", help="one language (default: every folder of translations/)")
    args = parser.parse_args(argv)
    only = None
    if args.what:
        if len(args.what) < 2:
            parser.error(f"{args.action} takes a language and one or more English notebooks, "
                         "e.g. es notebooks/01-messaging-patterns.ipynb")
        args.lang, *sources = args.what
        only = []
        for source in sources:
            relative = (Path.cwd() / source).resolve().relative_to(catalogs.REPO)
            if relative.suffix == ".md":
                only.append(docs.document(args.lang, str(relative)))
            else:
                only += pairs_for(args.lang, [catalogs.HERE / args.lang / relative.with_suffix(".po")])
    if args.action == "add":
        if only is None:
            parser.error("add takes a language and one or more notebooks: add es notebooks/01-messaging-patterns.ipynb")
        for pair in only:
            for line in update(pair):
                print(line)
        return 0
    if args.action == "update":
        for lang in languages() if args.lang is None else [args.lang]:
            if only is None:
                for line in update_package(lang) + update_slides(lang):
                    print(line)
            for pair in everything(lang) if only is None else only:
                for line in update(pair):
                    print(line)
        return 0
    if args.action == "check":
        found = check(args.lang, only)
        print("\n".join(found) if found else "Every translation is complete, current and built.")
        return 1 if found else 0
    for path in build(args.lang, only):
        print(f"wrote {path.relative_to(catalogs.REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
