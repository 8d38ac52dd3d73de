"""Markdown documents in other languages: the instructor guide and the course part of the README.

The same pipeline as the notebooks (``translations/build.py``): the English document is the
source, one catalog per document mirrors its path, and the translated document is built,
never edited::

    translations/es/docs/instructor-guide.po   docs/instructor-guide.md -> docs/es/instructor-guide.md
    translations/es/README.po                  README.md                -> README.es.md (course sections only)

An entry is one *block*: a heading, a paragraph, a list, a table, a quote. A fenced code block
has an entry only when it holds a comment with words (``./course  # first time: ...``); a block
of plain shell commands is copied as it is. The translation of a block is the whole block.

The context of an entry (``msgctxt``) is ``<slug>/<n>``: the slug of the heading the block
sits under (as GitHub makes anchors: ``## Two commands`` -> ``two-commands``; a repeated slug
gets ``-1``, ``-2``), and the block's place among the translated blocks of that section, the
heading itself being 0. Inserting or removing a paragraph only moves the contexts of the blocks
after it *in that section*, and ``update`` keeps their translations: it matches entries first by
their English (so a moved block, or a block under a renamed heading, keeps its translation
as it was), then a changed block takes the translation found at its context, or the most
similar English left over, marked fuzzy with the English it was made from. A hash of the text
would survive moves too but would lose the old translation of every edited block; the
position alone would turn every block after an insertion into a fuzzy one.

``check`` reports, as for notebooks: a block with no translation (missing), an entry whose
English is not the block's any more (stale: run ``update``), a fuzzy entry, an entry for a block
that is gone, and a committed translation that differs from what the build writes (drift).
Which documents exist, and which sections of the README a learner needs, is ``SPECS``; a
catalog in ``translations/<lang>/`` for one of them turns it on for that language.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path


from . import catalogs

GENERATED = ("<!-- Built by `python -m translations.build` from {source} and {catalog}: "
             "edit the catalog, not this file. -->")


@dataclass(frozen=True)
class Spec:
    """How one English document is translated."""

    output: str  # where the translation goes, ``{lang}`` filled in
    sections: tuple[str, ...] = ()  # the ``##`` sections translated (and what comes before them); () = all
    skip: tuple[str, ...] = ()  # patterns of blocks left out (the English README's notes to other languages)
    closing: str = ""  # an English paragraph ending the translation, translated in the catalog like the rest


SPECS: dict[str, Spec] = {
    "docs/instructor-guide.md": Spec(output="docs/{lang}/instructor-guide.md"),
    "README.md": Spec(
        output="README.{lang}.md",
        sections=("Two commands", "The course", "Real Apache Kafka (docker compose)",
                  "The course on any cluster", "Instructor slides"),
        # the notes to readers of another language: "> **En español.** ... [README.es.md](README.es.md)",
        # "> **Em português (Brasil).** ... `notebooks/pt-BR/`"
        skip=(r"\A>.*(?:\]\(README\.|`notebooks/)[a-z]{2}(?:-[A-Z]{2})?[./]",),
        closing=("The rest of the README is in English: [README.md](README.md) describes minikafka, the "
                 "broker the course runs on (what it implements, its command-line tools), its measured "
                 "speed and the layout of the repository."),
    ),
}


@dataclass(frozen=True)
class Document:
    """One translated document: its English source, its catalog and the file the build writes."""

    lang: str
    source: Path
    catalog: Path
    output: Path
    spec: Spec

    @property
    def name(self) -> str:
        return catalogs.shown(self.source)


@dataclass(frozen=True)
class Block:
    context: str
    kind: str  # heading, paragraph, list, table, quote, code block, html
    text: str
    translated: bool  # has an entry in the catalog (else copied as it is)


def document(lang: str, source: str) -> Document:
    """The document that translates ``source`` (a path relative to the repository) into ``lang``."""
    spec = SPECS.get(source)
    if spec is None:
        raise SystemExit(f"{source} is not a translated document; these are: {', '.join(SPECS)}")
    return Document(lang, catalogs.REPO / source, catalogs.HERE / lang / Path(source).with_suffix(".po"),
                    catalogs.REPO / spec.output.format(lang=lang), spec)


def documents(lang: str) -> list[Document]:
    """Every document of ``lang`` that has a catalog."""
    return [d for d in (document(lang, source) for source in SPECS) if d.catalog.exists()]


# -- blocks ---------------------------------------------------------------------------------------
_FENCE = re.compile(r"\s*(`{3,}|~{3,})")
_HEADING = re.compile(r"(#{1,6})\s+(.*)")
_COMMENT = re.compile(r"(?:^|\s)#(?!!)\s*(.*)")


def split(text: str) -> list[str]:
    """Markdown cut into blocks: blank lines separate them, a heading is a block of its own,
    and a fenced code block is one block, blank lines and all."""
    out: list[str] = []
    current: list[str] = []
    fence = None

    def flush():
        if current:
            out.append("\n".join(current))
            current.clear()

    for line in text.splitlines():
        if fence is not None:
            current.append(line)
            if re.fullmatch(rf"\s*{re.escape(fence[0])}{{{len(fence)},}}\s*", line):
                flush()
                fence = None
            continue
        opened = _FENCE.match(line)
        if opened:
            flush()
            current.append(line)
            fence = opened.group(1)
        elif not line.strip():
            flush()
        elif _HEADING.match(line):
            flush()
            out.append(line)
        else:
            current.append(line)
    flush()
    return out


def kind(block: str) -> str:
    if _HEADING.match(block):
        return "heading"
    if _FENCE.match(block):
        return "code block"
    if block.startswith("|"):
        return "table"
    if block.startswith(">"):
        return "quote"
    if block.startswith("<!--"):
        return "html"
    if re.match(r"\s*([-*+]|\d+\.)\s", block):
        return "list"
    return "paragraph"


def has_prose(code_block: str) -> bool:
    """A fenced block a reader needs in their language: one with a comment made of words."""
    for line in code_block.splitlines()[1:-1]:
        comment = _COMMENT.search(line)
        if comment and catalogs._WORDS.search(comment.group(1)):
            return True
    return False


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", _HEADING.match(heading).group(2)).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def blocks(text: str, spec: Spec) -> list[Block]:
    """The blocks of an English document that its translation holds, each with its context."""
    found: list[Block] = []
    seen: dict[str, int] = {}
    section, place, kept = "top", 0, True
    for block in split(text):
        what = kind(block)
        if what == "heading":
            base = slug(block)
            section = base if base not in seen else f"{base}-{seen[base]}"
            seen[base] = seen.get(base, 0) + 1
            place = 0
            level, title = _HEADING.match(block).groups()
            if len(level) == 2 and spec.sections:
                kept = title.strip() in spec.sections
        if not kept or any(re.search(p, block, re.S) for p in spec.skip):
            continue
        translated = what not in ("code block", "html") or (what == "code block" and has_prose(block))
        found.append(Block(f"{section}/{place}", what, block, translated))
        place += translated
    if spec.closing:
        found.append(Block("closing", "paragraph", spec.closing, True))
    return found


def entries(doc: Document) -> list[Block]:
    return [b for b in blocks(doc.source.read_text(), doc.spec) if b.translated]


# -- catalogs -------------------------------------------------------------------------------------
def update(doc: Document) -> list[str]:
    """Bring the catalog in line with the document: new blocks added, changed ones fuzzy (with the
    English they were translated from), moved ones kept, gone ones dropped."""
    units = entries(doc)
    old = [m for m in catalogs.load(doc.catalog) if m.id] if doc.catalog.exists() else []
    earlier = catalogs.previous_ids(doc.catalog)
    by_context = {m.context: m for m in old}
    claimed: set[str] = set()
    chosen: dict[str, tuple] = {}  # context -> (old entry, changed?)

    def take(unit: Block, entry, changed: bool) -> None:
        chosen[unit.context] = (entry, changed)
        claimed.add(entry.context)

    for unit in units:  # unchanged, in place
        entry = by_context.get(unit.context)
        if entry is not None and entry.id == unit.text:
            take(unit, entry, False)
    for unit in units:  # unchanged, moved (a block inserted before it, a renamed heading)
        if unit.context not in chosen:
            entry = next((m for m in old if m.id == unit.text and m.context not in claimed), None)
            if entry is not None:
                take(unit, entry, False)
    for unit in units:  # changed: its old translation, to be checked
        if unit.context in chosen:
            continue
        left = [m for m in old if m.context not in claimed and m.string]
        scored = [(difflib.SequenceMatcher(None, m.id, unit.text).ratio() + 0.2 * (m.context == unit.context), m)
                  for m in left]
        best = max(scored, key=lambda s: s[0], default=(0, None))
        if best[1] is not None and best[0] >= 0.5:
            take(unit, best[1], True)

    fresh = catalogs.new_catalog(doc.lang)
    said = []
    for unit in units:
        entry, changed = chosen.get(unit.context, (None, False))
        if entry is None:
            fresh.add(unit.text, "", context=unit.context, auto_comments=[unit.kind])
            said.append(f"{doc.name}: new {unit.kind} {unit.context}")
        elif changed:
            fresh.add(unit.text, entry.string, context=unit.context, flags=set(entry.flags) | {"fuzzy"},
                      previous_id=entry.id, auto_comments=[unit.kind])
            said.append(f"{doc.name}: {unit.kind} {unit.context} changed since it was translated (marked fuzzy)")
        else:
            fresh.add(entry.id, entry.string, context=unit.context, flags=entry.flags,
                      previous_id=earlier.get(entry.context) if entry.fuzzy else None, auto_comments=[unit.kind])
            if entry.context != unit.context:
                said.append(f"{doc.name}: {unit.kind} {entry.context} is now {unit.context}")
    said += [f"{doc.name}: {m.context} is gone from the source (dropped)" for m in old if m.context not in claimed]
    catalogs.save(fresh, doc.catalog)
    return said


def problems(doc: Document) -> list[str]:
    """What keeps this catalog from building the translated document as its source is now."""
    if not doc.source.exists():
        return [f"{catalogs.shown(doc.catalog)} translates {doc.name}, which does not exist"]
    return catalogs.entry_problems(doc.name, doc.lang, doc.catalog,
                                [(unit.context, unit.kind, unit.text) for unit in entries(doc)], "block")


def rendered(doc: Document) -> str:
    """The translated document: the catalog's blocks in the source's order, the rest as it is."""
    strings = {m.context: m.string for m in catalogs.load(doc.catalog) if m.id}
    parts = [GENERATED.format(source=doc.name, catalog=catalogs.shown(doc.catalog))]
    parts += [catalogs.point_links(strings[b.context], doc.output.parent, doc.lang) if b.translated else b.text
              for b in blocks(doc.source.read_text(), doc.spec)]
    return "\n\n".join(parts) + "\n"
