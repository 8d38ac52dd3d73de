"""From a notebook to a deck: which cell goes on which slide, and how it looks there.

A notebook marks its slides with Jupyter's standard cell metadata,
``"slideshow": {"slide_type": ...}``, the same one JupyterLab's property inspector and
``jupyter nbconvert --to slides`` use:

* ``slide``: starts a new slide (a new column in reveal.js),
* ``subslide``: starts a new slide below the current one,
* ``fragment``: appears on the current slide with the next key press,
* ``-`` (or nothing): continues the current slide,
* ``skip``: not in the deck,
* ``notes``: speaker notes of the current slide (press ``S`` in the deck).

A notebook with no slide metadata at all gets a layout from its headings: ``#`` and ``##``
start a slide, ``###`` a subslide, and the ``parameters`` cell is skipped. In both cases a
slide that grows too long continues on a new subslide below, so nothing falls off screen.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

MAX_LINES = 17  # what fits on a 1280x720 slide at the deck's font sizes
OUTPUT_LINES = 12  # longer outputs are cut, with a note saying so
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_ANCHOR = re.compile(r'<a class="anchor-link" href="#[^"]*">[^<]*</a>')
_HEADING = re.compile(r"^(#{1,3})\s+(.*)")
_IMG = re.compile(r'<img\s[^>]*?src="([^"]+)"[^>]*>')
_MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".svg": "image/svg+xml"}


@dataclass
class Slide:
    """One screen: HTML parts in order, plus speaker notes."""
    parts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    lines: int = 0
    heading: str = ""


@dataclass
class Column:
    """A slide and the subslides below it (a vertical stack in reveal.js)."""
    slides: list[Slide] = field(default_factory=list)

    @property
    def heading(self) -> str:
        return next((s.heading for s in self.slides if s.heading), "")


@dataclass
class Deck:
    name: str  # the notebook's file name without .ipynb
    title: str
    columns: list[Column]

    @property
    def total_slides(self) -> int:
        return sum(len(c.slides) for c in self.columns)

    @property
    def notes(self) -> int:
        return sum(1 for c in self.columns for s in c.slides if s.notes)


# -- which cell goes where --------------------------------------------------------------------
def slide_type(cell, explicit: bool) -> str:
    if explicit:
        return cell.metadata.get("slideshow", {}).get("slide_type", "-") or "-"
    if cell.cell_type == "raw" or "parameters" in cell.metadata.get("tags", []):
        return "skip"
    match = _HEADING.match(cell.source.lstrip()) if cell.cell_type == "markdown" else None
    if match:
        return "subslide" if len(match.group(1)) == 3 else "slide"
    return "-"


def build_deck(nb: nbformat.NotebookNode, name: str, with_outputs: bool = False, base: Path | None = None) -> Deck:
    """Lay the cells of ``nb`` out on slides (``base``: the notebook's folder, for its images)."""
    explicit = any("slideshow" in c.metadata for c in nb.cells)
    columns: list[Column] = []
    for cell in nb.cells:
        kind = slide_type(cell, explicit)
        if kind == "skip" or not cell.source.strip():
            continue
        if kind == "notes":
            _current(columns).notes.append(render_markdown(cell.source, base))
            continue
        body, lines = render_cell(cell, with_outputs, base)
        if kind == "slide" or not columns:
            columns.append(Column([Slide()]))
        elif kind == "subslide":
            columns[-1].slides.append(Slide(heading=_current(columns).heading))
        elif kind == "-" and _current(columns).lines + lines > MAX_LINES and _current(columns).parts:
            columns[-1].slides.append(_continued(columns[-1].heading))
        slide = _current(columns)
        slide.parts.append(f'<div class="fragment">{body}</div>' if kind == "fragment" else body)
        slide.lines += lines
        if cell.cell_type == "markdown" and not slide.heading:
            slide.heading = _first_heading(cell.source)
    title = next((c.heading for c in columns if c.heading), name)
    return Deck(name, title, columns)


def _continued(heading: str) -> Slide:
    """A subslide for what did not fit, saying what it continues."""
    label = f'<div class="continued">{html.escape(heading)} (continued)</div>' if heading else ""
    return Slide(parts=[label] if label else [], lines=1, heading=heading)


def _current(columns: list[Column]) -> Slide:
    if not columns:
        columns.append(Column([Slide()]))
    return columns[-1].slides[-1]


def _first_heading(source: str) -> str:
    for line in source.splitlines():
        match = _HEADING.match(line.strip())
        if match:
            return re.sub(r"[*_`]", "", match.group(2)).strip()
    return ""


# -- how a cell looks ---------------------------------------------------------------------------
def render_markdown(source: str, base: Path | None = None) -> str:
    return _IMG.sub(lambda m: _offline_image(m, base), _ANCHOR.sub("", markdown2html_mistune(source)))


def _offline_image(match: re.Match, base: Path | None) -> str:
    """Embed a local image; turn a remote one into a link, so that the deck fetches nothing."""
    src = html.unescape(match.group(1))
    if src.startswith("data:"):
        return match.group(0)
    if re.match(r"^[a-z]+://", src):
        return f'<a href="{html.escape(src)}">[image: {html.escape(src)}]</a>'
    path = (base or Path.cwd()) / src
    if not path.is_file() or path.suffix.lower() not in _MIME:
        return f"<em>[missing image: {html.escape(src)}]</em>"
    data = base64.b64encode(path.read_bytes()).decode()
    return match.group(0).replace(match.group(1), f"data:{_MIME[path.suffix.lower()]};base64,{data}")


def render_cell(cell, with_outputs: bool, base: Path | None = None) -> tuple[str, int]:
    """The cell's HTML and its height in text lines (to decide when a slide is full)."""
    if cell.cell_type == "markdown":
        lines = sum(1 + len(line) // 90 for line in cell.source.splitlines() if line.strip())
        return f'<div class="md">{render_markdown(cell.source, base)}</div>', lines
    code = highlight(cell.source, PythonLexer(), HtmlFormatter(cssclass="highlight"))
    parts, lines = [f'<div class="code">{code}</div>'], cell.source.count("\n") + 1
    if with_outputs:
        for output in cell.get("outputs", []):
            rendered, height = render_output(output)
            parts.append(rendered)
            lines += height
    return "\n".join(parts), lines


def render_output(output) -> tuple[str, int]:
    kind = output.output_type
    if kind == "stream":
        return _pre(output.text, "output" if output.name == "stdout" else "output stderr")
    if kind == "error":
        return _pre(f"{output.ename}: {output.evalue}", "output error")
    data = output.get("data", {})
    if "image/png" in data:
        png = data["image/png"].replace("\n", "")
        base64.b64decode(png, validate=True)  # embedded, never fetched: decks stay offline
        return f'<img class="output-image" src="data:image/png;base64,{png}" alt="figure">', 8
    if "image/svg+xml" in data:
        return f'<div class="output-image">{data["image/svg+xml"]}</div>', 8
    if "text/html" in data and "<script" not in data["text/html"]:
        return f'<div class="output-html">{data["text/html"]}</div>', data["text/html"].count("<tr") + 1
    if "text/plain" in data:
        return _pre(data["text/plain"], "output")
    return "", 0


def _pre(text: str, css: str) -> tuple[str, int]:
    lines = _ANSI.sub("", text).rstrip("\n").splitlines()
    if len(lines) > OUTPUT_LINES:
        lines = lines[:OUTPUT_LINES] + [f"… ({len(lines) - OUTPUT_LINES} more lines in the notebook)"]
    return f'<pre class="{css}">{html.escape(chr(10).join(lines))}</pre>', len(lines)


def read_notebook(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def pygments_css() -> str:
    return HtmlFormatter(style="default").get_style_defs(".highlight")
