"""Just enough SVG to draw boxes, labels and connectors for the slide diagrams."""

from __future__ import annotations

from html import escape

FONT = "Source Sans Pro, Helvetica, Arial, sans-serif"
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
INK, MUTED, LIGHT = "#222222", "#777777", "#dce9f5"


class Canvas:
    def __init__(self, width: int, height: int):
        self.width, self.height = width, height
        self.items: list[str] = []

    def rect(self, x, y, w, h, fill="white", stroke=INK, dashed=False, radius=6, width=1.5, opacity=1.0):
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        self.items.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="{radius}" fill="{fill}" '
                          f'stroke="{stroke}" stroke-width="{width}" opacity="{opacity}"{dash}/>')

    def text(self, x, y, text, size=14, colour=INK, anchor="middle", weight="normal", opacity=1.0):
        self.items.append(f'<text x="{x}" y="{y}" font-family="{FONT}" font-size="{size}" fill="{colour}" '
                          f'text-anchor="{anchor}" font-weight="{weight}" opacity="{opacity}" '
                          f'dominant-baseline="middle">{escape(str(text))}</text>')

    def line(self, x1, y1, x2, y2, colour=INK, width=2, arrow=False, dashed=False):
        head = ' marker-end="url(#arrow)"' if arrow else ""
        dash = ' stroke-dasharray="5 4"' if dashed else ""
        self.items.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{colour}" '
                          f'stroke-width="{width}"{dash}{head}/>')

    def curve(self, x1, y1, x2, y2, colour=INK, width=2):
        mid = (x1 + x2) / 2
        self.items.append(f'<path d="M {x1} {y1} C {mid} {y1}, {mid} {y2}, {x2} {y2}" fill="none" '
                          f'stroke="{colour}" stroke-width="{width}" marker-end="url(#arrow)"/>')

    def render(self) -> str:
        defs = ('<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
                f'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="{MUTED}"/></marker></defs>')
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{self.height}" '
                f'viewBox="0 0 {self.width} {self.height}">{defs}\n' + "\n".join(self.items) + "\n</svg>\n")
