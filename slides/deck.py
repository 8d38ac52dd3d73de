"""From a notebook to a deck: which cell goes on which slide, and how it looks there.

A notebook marks its slides with Jupyter's standard cell metadata,
``"slideshow": {"slide_type": ...}``, the same one JupyterLab's property inspector and
``jupyter nbconvert --to slides`` use:

* ``slide``: starts a new slide (a new column in reveal.js),
* ``subslide``: starts a new slide below the current one,
* ``fragment``: appears on the current slide with the next key press,
* ``-`` (or nothing): continues the current slide,
* ``skip``: not in the deck,
* ``notes``: speaker notes of the current slide (press ``S`` in the deck); the lessons keep
  theirs apart, in ``instructor/notes/``, and the build puts them back (``translations/notes.py``).

Whatever the marks say, a ``#`` or ``##`` heading starts a slide and ``###`` a subslide,
even in the middle of a markdown cell; the helper import and the ``parameters`` cell are
skipped. A slide that grows too tall continues on a subslide below, a markdown cell taller
than a slide is cut between paragraphs, and a long code cell is trimmed on its slide, so
nothing is shrunk and nothing falls off screen.

A translated notebook (``metadata.course.language``, written by ``python -m translations.build``)
makes a deck in its language: the few words a deck adds to the notebook's own ("(continued)",
"its output", "… 3 more lines in the notebook", the diagrams' captions, the page's labels) are
written in English inside ``_()`` (or ``N_()`` where they are only marked, to be translated where
they are shown) and looked up in ``translations/<lang>/slides.po``. A new language is a new
catalog; ``python -m translations.build update`` fills it with every such word.
"""

from __future__ import annotations

import base64
import html
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import nbformat
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from .figures import LINE_PX, png_size, shown_size
from .lines import wrap, wrap_html, without_raw_logs

# The slide is 1280x720 CSS px (reveal.js scales it to the screen). Heights are counted in
# code lines at the deck's code size (18.2 px font, 1.3 line height: about 24 px); what
# fits is checked for real by tests/slides, which measures every slide in Chromium.
MAX_LINES = 26  # a slide's height in code lines, margins and the heading's spacing taken off
CODE_LINES = 20  # a longer code cell is trimmed on its slide, with a line saying so
OUTPUT_LINES = 10  # longer outputs are cut, with a note saying so
TEXT_LINE = 1.45  # one line of 26 px text, in code lines
TEXT_CHARS = 80  # characters of text per line on the slide
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_ANCHOR = re.compile(r'<a class="anchor-link" href="#[^"]*">[^<]*</a>')
_HEADING = re.compile(r"^(#{1,3})\s+(.*)")
_IMG = re.compile(r'<img\s[^>]*?src="([^"]+)"[^>]*>')
_MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".svg": "image/svg+xml"}
REPO = Path(__file__).resolve().parents[1]
TRANSLATIONS = REPO / "translations"


# -- the deck's own words, in the notebook's language --------------------------------------------------
def N_(text: str) -> str:
    """Marks an English sentence for ``translations/<lang>/slides.po``; it is translated where it is shown."""
    return text


@cache
def words(lang: str = "en") -> Callable[[str], str]:
    """English -> ``lang`` for the words a deck shows that are not from its notebook
    (every translated, non-fuzzy entry of ``translations/<lang>/slides.po``; English otherwise)."""
    table: dict[str, str] = {}
    path = TRANSLATIONS / lang / "slides.po"
    if lang != "en" and path.exists():
        from babel.messages.pofile import read_po
        with path.open("rb") as f:
            table = {m.id: m.string for m in read_po(f) if m.id and m.string and not m.fuzzy}
    return lambda text: table.get(text, text)


def language(nb) -> str:
    """The notebook's language: ``metadata.course.language`` of a translation, else English."""
    return nb.metadata.get("course", {}).get("language", "en")


@dataclass
class Slide:
    """One screen: HTML parts in order, plus speaker notes."""
    parts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    lines: float = 0
    heading: str = ""


@dataclass
class Column:
    """A slide and the subslides below it (a vertical stack in reveal.js)."""
    slides: list[Slide] = field(default_factory=list)

    @property
    def heading(self) -> str:
        return next((s.heading for s in self.slides if s.heading), "")

    @property
    def has_notes(self) -> bool:
        return any(s.notes for s in self.slides)


@dataclass
class Deck:
    name: str  # the notebook's file name without .ipynb
    title: str
    columns: list[Column]
    lang: str = "en"  # the notebook's language, which the deck's own words follow

    @property
    def total_slides(self) -> int:
        return sum(len(c.slides) for c in self.columns)

    @property
    def notes(self) -> int:
        return sum(1 for c in self.columns for s in c.slides if s.notes)

    @property
    def sections_without_notes(self) -> list[str]:
        return [c.heading or f"section {i}" for i, c in enumerate(self.columns) if not c.has_notes]


# -- which cell goes where --------------------------------------------------------------------
def slide_type(cell) -> str:
    """The cell's own mark, or what the course's conventions imply: the helper import and
    the parameters cell are plumbing and stay out of the deck."""
    marked = cell.metadata.get("slideshow", {}).get("slide_type")
    if marked and marked != "-":
        return marked
    if cell.cell_type == "raw" or "parameters" in cell.metadata.get("tags", []):
        return "skip"
    if cell.cell_type == "code" and cell.source.strip() == "import kafka_course as course":
        return "skip"
    return "-"


def markdown_blocks(source: str, lang: str = "en") -> list[str]:
    """A markdown cell cut before every heading (so a heading always starts a slide) and,
    when a piece is taller than a slide, between paragraphs (never inside a code fence)."""
    pieces: list[list[str]] = [[]]
    fenced = False
    for line in _trim_fences(source, lang).splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and _HEADING.match(line) and any(x.strip() for x in pieces[-1]):
            pieces.append([])
        pieces[-1].append(line)
    blocks = []
    for piece in ("\n".join(p).strip() for p in pieces):
        if piece:
            blocks.extend(_paragraphs(piece) if markdown_height(piece) > MAX_LINES - 2 else [piece])
    return blocks


def _trim_fences(source: str, lang: str = "en") -> str:
    """A fenced code block longer than ``CODE_LINES`` keeps its beginning on the slide."""
    _ = words(lang)
    out: list[str] = []
    fence: list[str] | None = None
    for line in source.splitlines():
        if line.lstrip().startswith("```"):
            if fence is None:
                fence = []
                out.append(line)
                continue
            if len(fence) > CODE_LINES:
                fence = [*fence[:CODE_LINES - 1],
                         _("… {count} more lines in the notebook").format(count=len(fence) - CODE_LINES + 1)]
            out.extend(fence)
            fence = None
        if fence is not None:
            fence.extend(wrap(line))
        else:
            out.append(line)
    return "\n".join(out + (fence or []))


def _paragraphs(text: str) -> list[str]:
    """Cut between paragraphs into parts that each fit on a slide."""
    out, current, fenced = [], [], False
    for para in re.split(r"\n\s*\n", text):
        fenced ^= para.count("```") % 2 == 1
        if current and not fenced and markdown_height("\n\n".join([*current, para])) > MAX_LINES - 3:
            out.append("\n\n".join(current))
            current = []
        current.append(para)
    if current:
        out.append("\n\n".join(current))
    return out


def markdown_height(text: str) -> float:
    """Estimated height of rendered markdown, in code lines."""
    height, fenced = 0.0, False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            height += 0.5
        elif fenced:
            height += 1
        elif not stripped:
            height += 0.5  # paragraph spacing
        elif _HEADING.match(stripped):
            height += 2.2
        elif stripped.startswith("|"):
            height += 1.1 if not set(stripped) <= set("|-: ") else 0
        else:
            height += TEXT_LINE * (1 + len(re.sub(r"\]\([^)]*\)|[*_`]", "", stripped)) // TEXT_CHARS)
    return height


def build_deck(nb: nbformat.NotebookNode, name: str, with_outputs: bool = False, base: Path | None = None) -> Deck:
    """Lay the cells of ``nb`` out on slides (``base``: the notebook's folder, for its images).

    ``#`` and ``##`` headings start a slide and ``###`` a subslide, wherever they sit in a
    cell; notes go with the first slide of their section (what the presenter sees as the
    section opens); a slide that grows too tall continues on a subslide below. A question to
    predict (``course.predict``) gets a subslide of its own, and the cell that answers it the next.
    """
    columns: list[Column] = []
    lang = language(nb)
    answered_below = False  # after a prediction, the cell that answers it starts the slide below
    for cell in nb.cells:
        kind = slide_type(cell)
        if kind == "skip" or not cell.source.strip():
            continue
        if kind == "notes":
            _section(columns).notes.append(render_markdown(cell.source, base, lang))
            continue
        if (answered_below or is_prediction(cell)) and kind in ("-", "fragment") and columns:
            kind = "subslide"  # the question alone on its slide; the answer below, after the vote
        answered_below = is_prediction(cell)
        if cell.cell_type == "markdown":
            pieces = [(block, *render_block(block, base, lang)) for block in markdown_blocks(cell.source, lang)]
        else:
            pieces = [("", body, lines) for body, lines in code_pieces(cell, with_outputs, lang)]
        for n, (source, body, lines) in enumerate(pieces):
            heading = _HEADING.match(source.lstrip())
            place = kind if n == 0 else "-"
            if heading and place in ("-", "fragment"):
                place = "subslide" if len(heading.group(1)) == 3 and columns else "slide"
            _place(columns, place, body, lines, lang)
            slide = _current(columns)
            if heading and not slide.heading:
                slide.heading = re.sub(r"[*_`]", "", heading.group(2)).strip()
    title = next((c.heading for c in columns if c.heading), name)
    return Deck(name, title, columns, lang)


def _place(columns: list[Column], kind: str, body: str, lines: float, lang: str = "en") -> None:
    if kind == "slide" or not columns:
        columns.append(Column([Slide()]))
    elif kind == "subslide":
        columns[-1].slides.append(Slide(heading=_current(columns).heading))
    elif _current(columns).lines + lines > MAX_LINES and _current(columns).parts:
        columns[-1].slides.append(_continued(columns[-1].heading, lang))
    slide = _current(columns)
    slide.parts.append(f'<div class="fragment">{body}</div>' if kind == "fragment" else body)
    slide.lines += lines


def _section(columns: list[Column]) -> Slide:
    """The first slide of the current section: where its speaker notes belong."""
    if not columns:
        columns.append(Column([Slide()]))
    return columns[-1].slides[0]


def _continued(heading: str, lang: str = "en") -> Slide:
    """A subslide for what did not fit, saying what it continues."""
    _ = words(lang)
    label = (f'<div class="continued">{_("{heading} (continued)").format(heading=html.escape(heading))}</div>'
             if heading else "")
    return Slide(parts=[label] if label else [], lines=1, heading=heading)


def _current(columns: list[Column]) -> Slide:
    if not columns:
        columns.append(Column([Slide()]))
    return columns[-1].slides[-1]


# -- how a cell looks ---------------------------------------------------------------------------
_NOTEBOOK_LINK = re.compile(r'<a href="(?![a-z]+:|/|#)([^"]+\.ipynb)"[^>]*>(.*?)</a>', re.S)


def render_markdown(source: str, base: Path | None = None, lang: str = "en") -> str:
    """Markdown as HTML for a deck; a link to another notebook becomes its path from the
    repository (the deck is not next to the notebooks, and a projector audience cannot click anyway)."""
    page = _IMG.sub(lambda m: _offline_image(m, base, lang), _ANCHOR.sub("", markdown2html_mistune(source)))
    return _NOTEBOOK_LINK.sub(lambda m: f"<code>{_repository_path(html.unescape(m.group(1)), base)}</code>", page)


def _repository_path(target: str, base: Path | None) -> str:
    """``solutions/00-x.ipynb`` -> ``notebooks/solutions/00-x.ipynb``; from notebooks/es, ``notebooks/es/...``."""
    if base is not None:
        where = Path(os.path.normpath(base.resolve() / target))
        if where.is_relative_to(REPO):
            return str(where.relative_to(REPO))
    return f"notebooks/{target}"


def _offline_image(match: re.Match, base: Path | None, lang: str = "en") -> str:
    """Embed a local image; turn a remote one into a link, so that the deck fetches nothing."""
    _ = words(lang)
    src = html.unescape(match.group(1))
    if src.startswith("data:"):
        return match.group(0)
    if re.match(r"^[a-z]+://", src):
        return f'<a href="{html.escape(src)}">{_("[image: {source}]").format(source=html.escape(src))}</a>'
    path = (base or Path.cwd()) / src
    if not path.is_file() or path.suffix.lower() not in _MIME:
        return f"<em>{_('[missing image: {source}]').format(source=html.escape(src))}</em>"
    data = base64.b64encode(path.read_bytes()).decode()
    return match.group(0).replace(match.group(1), f"data:{_MIME[path.suffix.lower()]};base64,{data}")


_QUIZ = re.compile(r"<div class='course-quiz'>.*?</details></div>", re.S)
_ASKS = re.compile(r"""course\.(predict|quiz)\(\s*["'](\w+)["']\s*(?:,\s*["']([\w-]+)["']\s*)?\)""")


def is_prediction(cell) -> bool:
    """``course.predict("02", "same-key")``: a question the room answers before the next cell runs."""
    found = _ASKS.fullmatch(cell.source.strip()) if cell.cell_type == "code" else None
    return bool(found) and found.group(1) == "predict"


def asked_pieces(cell, lang: str = "en") -> list[tuple[str, float]] | None:
    """``course.predict(nb, key)`` and ``course.quiz(nb)`` in a deck: the questions from the notebook's
    bank (``kafka_course/quizzes/``) in the deck's language, one piece each, no code, the answer folded
    (a click on "Answer" opens it, after the room has voted). ``None`` for any other cell."""
    found = _ASKS.fullmatch(cell.source.strip()) if cell.cell_type == "code" else None
    if not found:
        return None
    import importlib

    from kafka_course import i18n
    quiz = importlib.import_module("kafka_course.quiz")  # the package's name ``quiz`` is the function
    kind, notebook, key = found.groups()
    i18n.set_language(lang if lang in i18n.LANGUAGES else "en")
    try:
        keys = [key] if kind == "predict" else list(quiz.bank(notebook).RECAP)
        numbers = [quiz.RIGHT_BEFORE] if kind == "predict" else [str(n) for n in range(1, len(keys) + 1)]
        asked = [(n, quiz.question(notebook, k)) for n, k in zip(numbers, keys)]
        return [(f'<div class="output-html quiz">{quiz.static_html([q], [n])}</div>', 3 + 1.5 * len(q.options))
                for n, q in asked]
    finally:
        i18n.set_language(None)


def quiz_pieces(cell) -> list[tuple[str, float]]:
    """A quiz cell in a deck: no code, one question per piece, its answer folded (a click
    on "Answer" opens it, after the room has voted)."""
    pieces = []
    for output in cell.get("outputs", []):
        page = output.get("data", {}).get("text/html", "")
        for question in _QUIZ.findall(page if isinstance(page, str) else "".join(page)):
            options = question.count("<li>")
            pieces.append((f'<div class="output-html quiz">{question}</div>', 3 + 1.5 * options))
    return pieces


def code_pieces(cell, with_outputs: bool, lang: str = "en") -> list[tuple[str, float]]:
    """A code cell, then its outputs when they would not fit under it on one slide (they
    go on the slide below, as a cell's output does on a tall screen)."""
    asked = asked_pieces(cell, lang)
    if asked is not None:
        return asked
    if with_outputs and cell.source.lstrip().startswith("course.quiz(") and quiz_pieces(cell):
        return quiz_pieces(cell)  # the questions written in the cell (before the banks): from its output
    _ = words(lang)
    body, lines = render_cell(cell, False, lang=lang)
    if not with_outputs:
        return [(body, lines)]
    outputs = [render_output(o, lang) for o in cell.get("outputs", [])]
    outputs = [(html_, h) for html_, h in outputs if html_]
    if lines + sum(h for _, h in outputs) <= MAX_LINES:
        return [("\n".join([body] + [h for h, _ in outputs]), lines + sum(h for _, h in outputs))]
    label = f'<div class="output-of">{_("its output")}</div>'
    return [(body, lines)] + [((label if n == 0 else "") + html_, h + (n == 0)) for n, (html_, h) in enumerate(outputs)]


def render_block(source: str, base: Path | None = None, lang: str = "en") -> tuple[str, float]:
    """A piece of markdown's HTML and its estimated height in code lines."""
    return f'<div class="md">{render_markdown(source, base, lang)}</div>', markdown_height(source)


def render_cell(cell, with_outputs: bool, base: Path | None = None, lang: str = "en") -> tuple[str, float]:
    """The cell's HTML and its height in code lines (to decide when a slide is full).

    A code cell longer than ``CODE_LINES`` shows its beginning and says how much more the
    notebook holds: on a projector, a long cell is read in the notebook, not on a slide."""
    if cell.cell_type == "markdown":
        return render_block(cell.source, base, lang)
    code, count = _code(cell.source, lang)
    parts, lines = [f'<div class="code">{code}</div>'], count + 0.8
    if with_outputs:
        for output in cell.get("outputs", []):
            rendered, height = render_output(output, lang)
            parts.append(rendered)
            lines += height
    return "\n".join(parts), lines


def _code(source: str, lang: str = "en") -> tuple[str, int]:
    """Highlighted code and its number of lines on the slide: each line wrapped to the slide's
    width, at most ``CODE_LINES`` lines, the last of them saying how many more the notebook holds."""
    _ = words(lang)
    page = highlight(source.rstrip("\n"), PythonLexer(), HtmlFormatter(cssclass="highlight"))
    start, end = page.index("<pre>") + len("<pre>"), page.rindex("</pre>")
    lines = page[start:end].rstrip("\n").split("\n")  # Pygments closes its spans at the end of each line
    pieces = [(n, piece) for n, line in enumerate(lines) for piece in wrap_html(line).split("\n")]
    shown = [piece for _n, piece in pieces]
    if len(pieces) > CODE_LINES:
        whole = pieces[CODE_LINES - 1][0]  # the source lines before this one are shown whole
        more = _("… {count} more lines in the notebook").format(count=len(lines) - whole)
        shown = [piece for n, piece in pieces[:CODE_LINES - 1] if n < whole]
        shown.append(f'<span class="c1"># {html.escape(more)}</span>')
    return page[:start] + "\n".join(shown) + "\n" + page[end:], len(shown)


def render_output(output, lang: str = "en") -> tuple[str, float]:
    _ = words(lang)
    kind = output.output_type
    if kind == "stream":
        return _pre(output.text, "output" if output.name == "stdout" else "output stderr", lang)
    if kind == "error":
        return _pre(f"{output.ename}: {output.evalue}", "output error", lang)
    data = output.get("data", {})
    if "application/vnd.jupyter.widget-view+json" in data:
        return "", 0  # a live widget: nothing to show without a kernel (its text/plain is its repr)
    if "image/png" in data:
        png = data["image/png"].replace("\n", "")
        width, height = shown_size(*png_size(base64.b64decode(png, validate=True)))  # embedded: decks stay offline
        return (f'<img class="output-image" src="data:image/png;base64,{png}" alt="{_("figure")}" '
                f'style="width: {width}px">', height / LINE_PX + 0.5)
    if "image/svg+xml" in data:
        return f'<div class="output-image">{data["image/svg+xml"]}</div>', 12.5
    if "text/html" in data and "<script" not in data["text/html"]:
        rows = data["text/html"].count("<tr") + data["text/html"].count("<li") + data["text/html"].count("<p")
        return f'<div class="output-html">{data["text/html"]}</div>', 0.9 * rows + 1
    if "text/plain" in data:
        return _pre(data["text/plain"], "output", lang)
    return "", 0


def _pre(text: str, css: str, lang: str = "en") -> tuple[str, float]:
    """Text output as the slide shows it: without raw client or JVM log lines, each line wrapped
    to the slide's width (``slides/lines.py``), at most ``OUTPUT_LINES`` lines."""
    _ = words(lang)
    lines = without_raw_logs(_ANSI.sub("", text)).rstrip("\n").splitlines()
    if not any(line.strip() for line in lines):
        return "", 0
    shown: list[str] = []
    for n, line in enumerate(lines):
        pieces = wrap_html(html.escape(line, quote=False)).split("\n")
        if len(shown) + len(pieces) > OUTPUT_LINES:
            shown = shown or pieces[:OUTPUT_LINES]  # a single line longer than the box: its beginning
            shown.append(html.escape(_("… ({count} more lines in the notebook)").format(count=len(lines) - n)))
            break
        shown.extend(pieces)
    return f'<pre class="{css}">{chr(10).join(shown)}</pre>', len(shown) + 0.6


def read_notebook(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def pygments_css() -> str:
    return HtmlFormatter(style="default").get_style_defs(".highlight")
