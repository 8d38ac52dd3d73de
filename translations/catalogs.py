"""What every part of the translation build shares: where the catalogs and the repository are, which
cells of a notebook a translator sees and how a catalog builds the notebook back, and reading, writing and
checking a catalog's entries.

``build`` (notebooks, the package's and the decks' sentences, and the command), ``docs`` (Markdown
documents) and ``notes`` (speaker notes) import this module; it imports none of them.
"""

from __future__ import annotations

import copy
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

import nbformat
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po

HERE = Path(__file__).resolve().parent


REPO = HERE.parent


@dataclass(frozen=True)
class Pair:
    """One translated notebook: its English source, its catalog and the notebook the build writes."""

    lang: str
    source: Path
    catalog: Path
    output: Path

    @property
    def name(self) -> str:
        return str(self.source.relative_to(REPO))


def shown(path: Path) -> str:
    """A path as messages show it: relative to the repository when it is inside it."""
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


# A language is named as the web names it (BCP 47): ``es``, or a language and a region, ``pt-BR``.
# The same name is the folder of its catalogs, of its notebooks and the suffix of their file names.
LANGUAGE = re.compile(r"[a-z]{2}(?:-[A-Z]{2})?")


def languages() -> list[str]:
    """Every folder of ``translations/`` named after a language: each is a language of the course."""
    return sorted(p.name for p in HERE.iterdir() if p.is_dir() and LANGUAGE.fullmatch(p.name))


def new_catalog(lang: str) -> Catalog:
    """An empty catalog for ``lang`` (Babel writes a locale with an underscore: ``pt_BR`` in the header)."""
    return Catalog(locale=lang.replace("-", "_"), project="Kafka Hands-On", fuzzy=False)


def pairs(lang: str) -> list[Pair]:
    """Every notebook catalog of ``lang`` (``notebooks/``, ``labs/``), with the English notebook it
    translates and the file it builds. The documents' catalogs are ``translations.docs``'s."""
    return pairs_for(lang, sorted(p for folder in ("notebooks", "labs") for p in (HERE / lang / folder).rglob("*.po")))


def pairs_for(lang: str, catalogs: list[Path]) -> list[Pair]:
    root = HERE / lang
    found = []
    for catalog in catalogs:
        relative = catalog.relative_to(root).with_suffix(".ipynb")
        source = REPO / relative
        if relative.parts[0] == "notebooks":  # notebooks/x.ipynb -> notebooks/es/x-es.ipynb (solutions/ too)
            folder = REPO / "notebooks" / lang / Path(*relative.parts[1:-1])
        else:  # labs/02-partitioner/lab02-partitioner.ipynb -> labs/02-partitioner/es/lab02-partitioner-es.ipynb
            folder = source.parent / lang
        found.append(Pair(lang, source, catalog, folder / translated_name(source, lang)))
    return found


def translated_name(source: Path, lang: str) -> str:
    """``03-producers.ipynb`` -> ``03-producers-es.ipynb``: the tab of a translation names its language."""
    return f"{source.stem}-{lang}{source.suffix}"


_LINK = re.compile(r"\[([^\[\]]*)\]\(([^()\s#]+\.ipynb)(?=[#)])")


def point_links(text: str, folder: Path, lang: str, translations: dict[Path, Path] | None = None) -> str:
    """Links in a translation written in ``folder`` that name a translated notebook by its English
    file name (in the translation's folder) point at the translation instead, and a link's text
    that shows that path shows the translation's."""
    import os
    if translations is None:
        translations = translated_notebooks(lang)

    def swap(link: re.Match) -> str:
        text, written = link[1], link[2]
        target = Path(os.path.normpath(folder / written))
        if target in translations:
            path = os.path.relpath(translations[target], folder)
        elif target in translations.values() or (english := english_of(target, lang)) is None:
            return link[0]
        else:  # a notebook not translated yet: its English source, until it is
            path = os.path.relpath(english, folder)
        shown_as = text.replace(written, path) if written in text else text.replace(Path(written).name, Path(path).name)
        return f"[{shown_as}]({path}"  # a link that shows its file name shows the translation's
    return _LINK.sub(swap, text)


def english_of(target: Path, lang: str) -> Path | None:
    """The English notebook a path in ``lang``'s folders stands for (``notebooks/pt-BR/03-producers-pt-BR.ipynb``
    or ``.../pt-BR/03-producers.ipynb`` -> ``notebooks/03-producers.ipynb``), if there is one."""
    if not target.is_relative_to(REPO) or lang not in target.relative_to(REPO).parts:
        return None
    parts = [p for p in target.relative_to(REPO).parts if p != lang]
    english = REPO.joinpath(*parts[:-1], Path(parts[-1]).stem.removesuffix(f"-{lang}") + ".ipynb")
    return english if english.exists() else None


def translated_notebooks(lang: str) -> dict[Path, Path]:
    """The translation's folder with the English file name -> the translation, for every notebook of ``lang``."""
    return {p.output.parent / p.source.name: p.output for p in pairs(lang)}


# -- a translated code cell runs what the English runs ----------------------------------------------------
def code_tokens(source: str) -> list[tuple[str, str]] | None:
    """What a code cell runs, as (token type, text): comments and line breaks inside brackets left
    out, and a string (or strings written next to each other) reduced to its sorted placeholders,
    as its words are the translator's. ``None`` when it is not Python (a shell line, a magic)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    out: list[tuple[str, str]] = []
    for token in tokens:
        kind = tokenize.tok_name[token.type]
        if token.type in (tokenize.COMMENT, tokenize.NL):
            continue
        if token.type == tokenize.STRING:
            held = _fields(token.string)
            if out and out[-1][0] == "STRING":  # "two " "parts" are one string
                held += out.pop()[1].split("\0")
            out.append(("STRING", "\0".join(sorted(p for p in held if p))))
        elif token.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            out.append((kind, ""))
        else:
            out.append((kind, token.string))
    return out


_FIELD = re.compile(r"{\w*(?:[!:][^{}]*)?}")  # a str.format field: {}, {count}, {0:>5}


def _fields(literal: str) -> list[str]:
    """The fields of a string literal that code fills: an f-string's expressions (their own strings
    reduced in turn), a plain string's ``str.format`` fields; braces around words are words."""
    prefix = literal[:len(literal) - len(literal.lstrip("rRbBuUfF"))]
    if "f" not in prefix.lower():
        return _FIELD.findall(literal)
    return ["{" + " ".join(text or kind for kind, text in code_tokens(field[1:-1]) or [("?", field)]
                           if kind not in ("NEWLINE", "ENDMARKER")) + "}" for field in _PLACEHOLDER.findall(literal)]


def code_difference(english: str, translation: str) -> str:
    """How a translated code cell's code differs from the English one's ("" when it runs the same code:
    only comments and the words of strings changed)."""
    theirs, ours = code_tokens(english), code_tokens(translation)
    if theirs is None or ours is None:
        return "" if theirs == ours and english == translation else "it is not Python: the code cannot be compared"
    for i, (a, b) in enumerate(zip(theirs, ours)):
        if a != b:
            return f"token {i}: the English has {a[0]} {a[1]!r}, the translation {b[0]} {b[1]!r}"
    if len(theirs) != len(ours):
        return f"the English has {len(theirs)} tokens, the translation {len(ours)}"
    return ""


# -- which cells a translator sees ------------------------------------------------------------------
# Once f-string placeholders are taken out, two words with a space between them (numbers and
# punctuation allowed around it), or a label such as "brokers:": words for a person, not a key,
# a topic name or a format.
_WORDS = re.compile(r"[A-Za-z]{2,}[^A-Za-z]*\s[^A-Za-z]*[A-Za-z]{2,}"  # two words
                    r"|^[rbuRBUfF]*\W*[A-Za-z][A-Za-z -]*[A-Za-z]:\s*\W*$")  # a label


_PLACEHOLDER = re.compile(r"{[^{}]*}")


def needs_translation(cell) -> bool:
    """Markdown always; code when it holds a comment or a string with words in it."""
    if cell.cell_type == "markdown":
        return True
    if cell.cell_type != "code":
        return False
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(cell.source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return True  # not plain Python (a magic): let the translator decide
    for token in tokens:
        if token.type == tokenize.COMMENT:
            return True
        if token.type in (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)) and _WORDS.search(
                _PLACEHOLDER.sub(" ", token.string)):
            return True
    return False


def translatable_cells(path: Path):
    """A notebook, and those of its cells a translator sees."""
    nb = nbformat.read(path, as_version=4)
    return nb, [c for c in nb.cells if needs_translation(c)]


# -- catalogs -------------------------------------------------------------------------------------
def load(path: Path) -> Catalog:
    """A catalog as Babel reads it (its language comes from its own header)."""
    with path.open("rb") as f:
        return read_po(f)


def save(catalog: Catalog, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    out = io.BytesIO()
    write_po(out, catalog, width=0, omit_header=False, sort_output=False, include_previous=True)
    text = out.getvalue()
    if path.exists():  # keep the header a catalog already has: a new date or Babel version is no change
        old_header, _, _ = path.read_bytes().partition(b"\n\n")
        _, _, entries = text.partition(b"\n\n")
        text = old_header + b"\n\n" + entries
    path.write_bytes(text)


def previous_ids(path: Path) -> dict[str, str]:
    """Context -> the English a fuzzy entry was translated from (its ``#| msgid``, which Babel writes,
    wrapped at spaces, but does not read back)."""
    import ast
    found: dict[str, str] = {}
    previous: list[str] = []
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.startswith("#| "):
            previous.append(line[3:])
        elif line.startswith('msgctxt "') and previous:
            text = " ".join(previous)
            if text.startswith("msgid "):
                found[ast.literal_eval(line[len("msgctxt "):])] = "".join(
                    ast.literal_eval(part) for part in re.findall(r'"(?:[^"\\]|\\.)*"', text[len("msgid "):]))
            previous = []
        elif not line.startswith("#"):
            previous = []
    return found


def update_units(name: str, lang: str, catalog: Path, units: list[tuple[str, str, str]],
                 noun: str = "entry") -> list[str]:
    """Bring ``catalog`` in line with the source's translatable units, each ``(context, what it is,
    its English)``: new ones added empty, changed ones fuzzy (with the English they were made from),
    gone ones dropped. Notebooks' cells and speaker notes (``translations.notes``) go through it."""
    old = load(catalog) if catalog.exists() else new_catalog(lang)
    by_context = {m.context: m for m in old if m.id}
    earlier = previous_ids(catalog)
    fresh = new_catalog(lang)
    said = []
    for context, kind, text in units:
        before = by_context.get(context)
        if before is None:
            fresh.add(text, "", context=context, auto_comments=[kind])
            said.append(f"{name}: new {kind} {context}")
        elif before.id != text:
            flags = set(before.flags) | {"fuzzy"}
            fresh.add(text, before.string, context=context, flags=flags, previous_id=before.id,
                      auto_comments=[kind])
            said.append(f"{name}: {noun} {context} changed since it was translated (marked fuzzy)")
        else:
            fresh.add(before.id, before.string, context=context, flags=before.flags,
                      previous_id=earlier.get(context) if before.fuzzy else None,
                      auto_comments=[kind])
    gone = set(by_context) - {context for context, _, _ in units}
    said += [f"{name}: {noun} {g} is gone from the source (dropped)" for g in sorted(gone)]
    save(fresh, catalog)
    return said


def entry_problems(name: str, lang: str, catalog: Path, units: list[tuple[str, str, str]], noun: str) -> list[str]:
    """Missing, stale, fuzzy and leftover entries of ``catalog`` for the source's translatable
    units, each ``(context, what it is, its English)``; ``noun`` names a leftover one."""
    by_context = {m.context: m for m in load(catalog) if m.id}
    found = []
    for context, kind, text in units:
        entry = by_context.get(context)
        where = f"{name}, {kind} {context}"
        if entry is None or not entry.string:
            found.append(f"{where}: no {lang} translation")
        elif entry.id != text:
            found.append(f"{where}: stale (the English changed after it was translated); run "
                         "`python -m translations.build update` and translate it again")
        elif entry.fuzzy:
            found.append(f"{where}: marked fuzzy; check the translation and remove the flag")
    extra = set(by_context) - {context for context, _, _ in units}
    found += [f"{name}: the catalog has {noun} {e}, which the source no longer has" for e in sorted(extra)]
    return found


def translated(pair: Pair):
    """The translated notebook, built from the source and the catalog."""
    nb, _ = translatable_cells(pair.source)
    entries = {m.context: m.string for m in load(pair.catalog) if m.id}
    out = copy.deepcopy(nb)
    translations = translated_notebooks(pair.lang)
    for cell in out.cells:
        if needs_translation(cell):
            cell.source = entries[cell.id]
            if cell.cell_type == "markdown":
                cell.source = point_links(cell.source, pair.output.parent, pair.lang, translations)
    out.metadata["course"] = {"language": pair.lang, "source": pair.name,
                              "generated": "by python -m translations.build; edit the catalog, not this file"}
    return out
