"""Lines of code and output as a slide shows them: no raw log line, none wider than the slide.

A slide is 1280 px wide and sets code and outputs in an 18.2 px monospace font, so a line holds
``WIDTH`` characters (``slides/assets/deck.css`` gives code and outputs the same box). A longer
line is wrapped, at a space where one falls in the second half of the line, else at the width,
and each continuation starts with ``MARK`` under the line's own indentation: the room sees one
line continued, not two lines, and nothing runs off the right edge.

Lines a learner does not need on a projector are left out of a deck (the notebook keeps them):
librdkafka's own log lines (``%3|1732467600.123|FAIL|rdkafka#producer-1| ...``), which a client
made without a ``logger`` writes to the kernel's stderr (``kafka_course/client_logs.py``), and the
JVM's, log4j's and Spark's start-up and log lines, which Spark's JVM writes there.
"""

from __future__ import annotations

import html
import itertools
import re

WIDTH = 104  # characters of an 18.2 px monospace line in a 1280 px slide's code or output box
MARK = "↪ "  # starts a continuation line
RAW_LOG = re.compile("|".join([
    r"^%\d\|\d+(?:\.\d+)?\|[A-Z0-9_]+\|",  # librdkafka: %level|time|FACILITY|client| ...
    r"^WARNING: ",  # the JVM's own warnings (incubator modules, restricted or deprecated methods)
    r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL) ",  # log4j's default layout
    r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d\S* (?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL) ",  # ISO-dated log lines
    r"^(?:log4j|SLF4J)\b",
    r"^Using Spark's default log4j profile",
    r"^Setting default log level to ",
    r"^To adjust logging level use sc\.setLogLevel",
    r"NativeCodeLoader|Unable to load native-hadoop library",
    r"^Using incubator modules",
]))
_TAG = re.compile(r"<[^>]*>|&#?\w+;|[^<&]")


def is_raw_log(line: str) -> bool:
    """Is this a client's or the JVM's own log line (never something the lesson prints)?"""
    return bool(RAW_LOG.search(line.strip()))


def without_raw_logs(text: str) -> str:
    """``text`` without its raw log lines."""
    return "\n".join(line for line in text.split("\n") if not is_raw_log(line))


def _indent(text: str, width: int) -> str:
    """The indentation continuation lines keep (none when it would leave too little room)."""
    indent = len(text) - len(text.lstrip(" "))
    return " " * indent if indent <= width // 2 else ""


def cuts(text: str, width: int = WIDTH) -> list[int]:
    """Where to cut ``text`` so that every piece, its continuation mark and indentation included,
    fits in ``width`` characters."""
    at, room, found = 0, width, []
    while len(text) - at > room:
        space = text.rfind(" ", at + room // 2, at + room)
        at = space + 1 if space > at else at + room
        found.append(at)
        room = width - len(_indent(text, width)) - len(MARK)
    return found


def wrap(text: str, width: int = WIDTH) -> list[str]:
    """A line of plain text as the lines a slide shows."""
    indent, edges = _indent(text, width), [0, *cuts(text, width), len(text)]
    pieces = [text[a:b] for a, b in itertools.pairwise(edges)]
    return pieces[:1] + [indent + MARK + piece for piece in pieces[1:]]


def wrap_html(line: str, width: int = WIDTH) -> str:
    """A line of HTML (escaped text and ``<span>``s, as Pygments writes a line of code) wrapped to
    ``width`` visible characters: at each cut, open spans are closed, a new line starts with the
    indentation and ``MARK``, and the spans open again."""
    tokens = _TAG.findall(line)
    visible = "".join(html.unescape(t) for t in tokens if not t.startswith("<"))
    places = cuts(visible, width)
    if not places:
        return line
    mark = f'<span class="wrap-mark">{_indent(visible, width)}{MARK}</span>'
    out: list[str] = []
    spans: list[str] = []
    seen = 0
    for token in tokens:
        if token.startswith("<"):
            if token.startswith("<span"):
                spans.append(token)
            elif token == "</span>" and spans:
                spans.pop()
        else:
            if places and seen == places[0]:
                places.pop(0)
                out.append("</span>" * len(spans) + "\n" + mark + "".join(spans))
            seen += 1
        out.append(token)
    return "".join(out)
