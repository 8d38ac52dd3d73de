"""The translated instructor guide, the course part of the README and the decks' own words (Spanish;
Brazilian Portuguese as far as its catalogs go).

- Every document catalog is complete and current, and the committed Spanish documents are
  what ``python -m translations.build`` writes: a changed English block is stale, a new one is
  missing, a hand-edited Spanish document is drift (as for notebooks, ``test_translations.py``).
- ``update`` keeps the translations of blocks that only moved, and marks a changed one fuzzy
  with the English it was made from.
- Links in the translated documents lead to files, the translated ones where they exist.
- The translated text follows the language's glossary.
- A deck built from a Spanish notebook says its own words in Spanish (``translations/es/slides.po``).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest

from slides import build as slides_build
from slides import deck
from tests.course.test_translations import GLOSSARIES, glossary_slips
from translations import build, catalogs, docs

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [d for lang in build.languages() for d in docs.documents(lang)]


def by_source(source: str, lang: str = "es") -> docs.Document:
    return next(d for d in DOCUMENTS if d.lang == lang and d.name == source)


def test_the_guide_and_the_readme_have_a_spanish_edition():
    assert {(d.lang, d.name) for d in DOCUMENTS} >= {("es", "docs/instructor-guide.md"), ("es", "README.md")}
    assert (ROOT / "docs" / "es" / "instructor-guide.md").exists() and (ROOT / "README.es.md").exists()
    assert all(p.source.suffix == ".ipynb" for p in build.pairs("es")), "notebook pairs hold notebooks only"


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda d: f"{d.lang}-{d.name}")
def test_every_document_catalog_is_complete_current_and_built(doc):
    assert build.check(doc.lang, [doc]) == []


def test_every_word_of_the_decks_has_a_translation():
    assert len(build.slides_messages()) > 20
    for lang in build.languages():
        assert build.slides_problems(lang) == []


def test_the_readme_holds_only_the_course_part():
    readme = by_source("README.md")
    spanish = readme.output.read_text()
    headings = re.findall(r"^## (.*)", spanish, re.M)
    assert headings == ["Dos comandos", "El curso", "Apache Kafka real (docker compose)",
                        "El curso en cualquier clúster", "Presentaciones para el instructor"]
    assert "[README.md](README.md)" in spanish.strip().split("\n\n")[-1], "it ends pointing to the English README"
    assert not any("README.es.md" in b.text for b in docs.entries(readme)), "the note to Spanish readers stays out"
    commands = [b for b in docs.blocks(docs.document("es", "docs/instructor-guide.md").source.read_text(),
                                       docs.SPECS["docs/instructor-guide.md"]) if b.kind == "code block"]
    assert [b.translated for b in commands] == [True, False, False, True, False], (
        "a block of plain commands is copied as it is")


# -- stale, missing, moved, drift ---------------------------------------------------------------------
def _with_source(doc: docs.Document, tmp_path: Path, text: str, catalog: Path | None = None) -> docs.Document:
    source = tmp_path / Path(doc.name).name
    source.write_text(text)
    return docs.Document(doc.lang, source, catalog or doc.catalog, tmp_path / "out.md", doc.spec)


def test_a_changed_english_block_makes_its_translation_stale(tmp_path, monkeypatch):
    guide = by_source("docs/instructor-guide.md")
    monkeypatch.setattr(catalogs, "REPO", tmp_path.parent)  # names relative to somewhere that holds tmp_path
    english = guide.source.read_text()
    edited = english.replace("Two weeks before:", "Three weeks before:")
    stale = build.problems(_with_source(guide, tmp_path, edited))
    assert stale == [f"{tmp_path.name}/instructor-guide.md, paragraph "
                     "before-the-workshop-a-checklist-for-a-room-of-30-laptops/1: stale (the English changed "
                     "after it was translated); run `python -m translations.build update` and translate it again"]
    added = english + "\nA new paragraph at the end.\n"
    missing = build.problems(_with_source(guide, tmp_path, added))
    assert missing == [f"{tmp_path.name}/instructor-guide.md, paragraph "
                       "when-the-room-uses-the-docker-compose-cluster/5: no es translation"]


def test_update_keeps_moved_blocks_and_marks_changed_ones_fuzzy(tmp_path, monkeypatch):
    guide = by_source("docs/instructor-guide.md")
    catalog = tmp_path / "copy.po"
    shutil.copy(guide.catalog, catalog)
    monkeypatch.setattr(catalogs, "REPO", tmp_path.parent)
    english = guide.source.read_text()
    section = "## Agendas\n\n### One day: a developer's first day with Kafka\n\n"
    inserted = english.replace(section, section + "A paragraph inserted before the others.\n\n")
    changed = inserted.replace("with their worked solutions.\n", "with their worked solutions at hand.\n", 1)
    doc = _with_source(guide, tmp_path, changed, catalog)
    assert len(build.problems(doc)) > 2, "before update, every block after the new one is out of place"
    said = build.update(doc)
    where, day = f"{tmp_path.name}/instructor-guide.md", "one-day-a-developers-first-day-with-kafka"
    assert f"{where}: new paragraph {day}/1" in said
    assert f"{where}: table {day}/2 is now {day}/3" in said
    assert f"{where}: paragraph {day}/4 changed since it was translated (marked fuzzy)" in said
    assert build.problems(doc) == [
        f"{where}, paragraph {day}/1: no es translation",
        f"{where}, paragraph {day}/4: marked fuzzy; check the translation and remove the flag"]
    entry = next(m for m in build.load(catalog) if m.context == f"{day}/4")
    assert entry.fuzzy and entry.string.startswith("Los notebooks 03")
    old = next(m.id for m in build.load(guide.catalog) if m.context == f"{day}/3")
    assert catalogs.previous_ids(catalog) == {f"{day}/4": old}, "the translator sees the old English"
    build.update(doc)  # a second update keeps it
    assert catalogs.previous_ids(catalog) == {f"{day}/4": old}
    table = next(m for m in build.load(catalog) if m.context == f"{day}/3")
    assert table.string.startswith("| hora | parte |") and not table.fuzzy


def test_a_hand_edited_spanish_document_is_drift(tmp_path):
    guide = by_source("docs/instructor-guide.md")
    edited = tmp_path / "instructor-guide.md"
    edited.write_text(guide.output.read_text().replace("Guía del instructor", "Guía para el instructor", 1))
    moved = docs.Document(guide.lang, guide.source, guide.catalog, edited, guide.spec)
    assert build.check("es", [moved]) == [f"{edited} is not what the build writes: run "
                                           "`python -m translations.build` and commit the result"]
    edited.write_text(build.rendered(moved))
    assert build.check("es", [moved]) == []


def test_the_command_line_takes_documents():
    assert build.main(["check", "es", "docs/instructor-guide.md", "README.md"]) == 0


# -- what the translations say ---------------------------------------------------------------------------
def _translation_of(target: Path, lang: str) -> Path | None:
    """The ``lang`` counterpart of an English notebook or document, if there is one."""
    relative = target.relative_to(ROOT)
    if lang in relative.parts or any(catalogs.LANGUAGE.fullmatch(part) for part in relative.parts[1:-1]):
        return None  # already a translation
    translated_name = catalogs.translated_name(target, lang)
    if relative.suffix == ".ipynb" and relative.parts[0] == "notebooks":
        return ROOT / "notebooks" / lang / Path(*relative.parts[1:-1]) / translated_name
    if relative.suffix == ".ipynb" and relative.parts[0] == "labs":
        return target.parent / lang / translated_name
    if relative.parts[0] == "docs":
        return target.parent / lang / target.name
    return None


def test_the_translation_of_a_link_is_found_for_every_language():
    lab = ROOT / "labs" / "02-partitioner" / "lab02-partitioner.ipynb"
    assert _translation_of(lab, "pt-BR") == ROOT / "labs" / "02-partitioner" / "pt-BR" / "lab02-partitioner-pt-BR.ipynb"
    assert _translation_of(ROOT / "notebooks" / "solutions" / "03-producers.ipynb", "pt-BR") == (
        ROOT / "notebooks" / "pt-BR" / "solutions" / "03-producers-pt-BR.ipynb")
    assert _translation_of(ROOT / "docs" / "es" / "instructor-guide.md", "pt-BR") is None


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda d: f"{d.lang}-{d.name}")
def test_links_in_the_translated_documents_lead_to_files_in_their_language_where_they_exist(doc):
    text = doc.output.read_text()
    links = re.findall(r"\]\(([^)\s]+)\)", re.sub(r"```.*?```", "", text, flags=re.S))
    local = [t.split("#")[0] for t in links if not re.match(r"[a-z]+:", t) and not t.startswith("#")]
    assert local, "the documents link somewhere"
    broken, english = [], []
    for target in local:
        path = (doc.output.parent / target).resolve()
        if not path.exists():
            broken.append(target)
        elif (translation := _translation_of(path, doc.lang)) is not None and translation.exists():
            english.append(f"{target} (use {translation.relative_to(ROOT)})")
    assert broken == [] and english == [], {"broken": broken, "English where a translation exists": english}


@pytest.mark.parametrize("lang", GLOSSARIES)
def test_the_translated_documents_and_deck_words_follow_the_glossary(lang):
    texts = [(d.name, m.string) for d in DOCUMENTS if d.lang == lang for m in build.load(d.catalog) if m.id]
    if build.slides_catalog(lang).exists():
        texts += [(catalogs.shown(build.slides_catalog(lang)), m.string)
                  for m in build.load(build.slides_catalog(lang)) if m.id]
    found = glossary_slips(lang, texts)
    assert found == [], "\n".join(found)


# -- the decks' own words ----------------------------------------------------------------------------
def _spanish_notebook(*cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    nb.metadata["course"] = {"language": "es"}
    return nb


def test_a_spanish_deck_says_its_own_words_in_spanish():
    long_code = "\n".join(f"line_{i} = {i}" for i in range(deck.CODE_LINES + 5))
    code = nbformat.v4.new_code_cell(long_code)
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="\n".join(map(str, range(30))))]
    nb = _spanish_notebook(nbformat.v4.new_markdown_cell("# Título"), nbformat.v4.new_markdown_cell("## Uno"),
                           code, nbformat.v4.new_code_cell(long_code))
    result = deck.build_deck(nb, "es-99-test", with_outputs=True)
    page = "".join(p for c in result.columns for s in c.slides for p in s.parts)
    assert result.lang == "es"
    assert "Uno (continuación)" in page and "su salida" in page
    assert "6 líneas más en el notebook" in page and "(20 líneas más en el notebook)" in page
    assert not re.search(r"\(continued\)|its output|more lines", page)
    english = deck.build_deck(nbformat.v4.new_notebook(cells=nb.cells), "99-test", with_outputs=True)
    assert english.lang == "en"
    assert "(continued)" in "".join(p for c in english.columns for s in c.slides for p in s.parts)


def test_a_spanish_deck_page_and_the_index_speak_spanish():
    nb = _spanish_notebook(nbformat.v4.new_markdown_cell("# Título\n\nVer [las soluciones](solutions/01-x.ipynb)."))
    spanish = deck.build_deck(nb, "01-x", base=ROOT / "notebooks" / "es")
    assert "<code>notebooks/es/solutions/01-x.ipynb</code>" in spanish.columns[0].slides[0].parts[0]
    env = slides_build.templates()
    page = env.get_template("deck.html.j2").render(deck=spanish, source="es/01-x.ipynb", _=deck.words("es"))
    assert '<html lang="es">' in page and "☰ presentaciones" in page and 'href="index.html#es"' in page
    assert "notebooks/es/01-x.ipynb" in page
    entries = [{"notebook": "01-x.ipynb", "file": "01-x.html", "title": "One", "lang": "en", "slides": 3, "notes": 1},
               {"notebook": "es/01-x.ipynb", "file": "es-01-x.html", "title": "Uno", "lang": "es", "slides": 3,
                "notes": 1}]
    index = env.get_template("index.html.j2").render(languages=slides_build.by_language(entries), diagrams=[],
                                                     executed=False, reveal_version="5")
    assert index.count('<table class="decks"') == 2 and index.count('href="es-01-x.html"') == 1
    spanish_part = index[index.index('id="es"'):]
    assert "Presentaciones en español" in spanish_part and "notas para el ponente" in spanish_part
    assert "speaker notes" in index[:index.index('id="es"')], "the English decks keep English words"


def test_diagram_captions_follow_the_deck():
    diagram = slides_build.drawings.Diagram("x", "Transaction states", "All {rows} rows of {module}.TRANSITIONS, "
                                            "laid out by Graphviz.", "<svg/>", {"rows": 3, "module": "m"})
    assert diagram.said() == ("Transaction states", "All 3 rows of m.TRANSITIONS, laid out by Graphviz.")
    slide = slides_build.diagram_slide(diagram, "es")
    assert slide.heading == "Estados de una transacción" and "Las 3 filas de m.TRANSITIONS" in slide.parts[0]


@pytest.mark.skipif(not (slides_build.REVEAL / "plugin" / "notes" / "notes.js").exists(),
                    reason="reveal.js is not installed: run `npm ci` in slides/")
def test_the_speaker_view_of_a_spanish_deck_is_in_spanish():
    english = (slides_build.REVEAL / "plugin" / "notes" / "notes.js").read_text()
    spanish = slides_build.speaker_view(english, "es")
    _ = deck.words("es")
    for around, label in slides_build.SPEAKER_VIEW:
        assert around.format(label) in english, f"reveal.js no longer writes {label!r} as {around!r}"
        assert around.format(_(label)) in spanish and around.format(label) not in spanish, label
    assert slides_build.speaker_view(english, "en") == english
