"""Figures in the decks: as wide as the slide allows, their axis text readable at the back of a room.

The notebooks draw figures for a laptop screen: 5 to 11 inches wide, 10 pt text at 100 dpi, about
14 px. A deck shows a figure as wide as a 1280x720 slide allows (``shown_size``: the whole width,
unless that makes it taller than ``MOST_HEIGHT``), so its text must be drawn larger for the room.
When the deck build runs a notebook (``slides/build.py``), its kernel starts with
``startup_file()``, which makes IPython draw every matplotlib figure with ``png_for_a_slide``: the
figure is drawn on a canvas smaller in inches by the factor that brings its smallest axis text
(tick labels, axis labels) to ``TEXT_PX`` on the slide, at the dpi that makes the PNG exactly as
wide as the slide shows it (a figure narrower than ``WIDEST`` is drawn wider first; a drawing
without axes keeps its proportions). The notebook's own code, and the figures a learner sees, are unchanged.
"""

from __future__ import annotations

import struct

SLIDE_WIDTH = 1280  # px, the deck's width (slides/templates/deck.html.j2)
MOST_HEIGHT = 620  # px: a figure and the line above it fit a 720-px slide
WIDEST = 1.9  # a narrower figure is drawn wider for a deck (width / height), to fill the slide's width
TEXT_PX = 22  # axis text on the slide, in px: at least 20, read from the back of a room
LINE_PX = 24  # one code line on the slide (slides/deck.py counts heights in code lines)


def shown_size(width: float, height: float) -> tuple[int, int]:
    """The size (px) a deck shows a figure of this shape at: the slide's width, or less when that
    would be taller than ``MOST_HEIGHT``."""
    wide = min(SLIDE_WIDTH, MOST_HEIGHT * width / height)
    return round(wide), round(wide * height / width)


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height of a PNG, from its header."""
    return struct.unpack(">II", png[16:24])


def png_for_a_slide(fig) -> str:
    """The figure as a base64 PNG for a deck (see the module docstring); the figure is left as it was.

    Drawn twice: the first drawing gives the shape the PNG really has (``bbox_inches="tight"`` trims
    the margins), hence the width the slide shows it at; the second is drawn for that width."""
    import base64

    from IPython.core.pylabtools import print_figure
    fig.canvas.draw()  # the tick labels exist only once the figure is drawn
    axis_text = [t for ax in fig.axes for t in (*ax.get_xticklabels(), *ax.get_yticklabels(),
                                                ax.xaxis.label, ax.yaxis.label)
                 if t.get_visible() and t.get_text()]
    smallest = min((t.get_fontsize() for t in axis_text), default=10.0)  # in points
    inches = fig.get_size_inches().copy()
    drawn = inches.copy()
    drawn[0] = max(drawn[0], WIDEST * drawn[1])  # a tall figure gets wider, to fill the slide's width
    png = ""
    try:
        shown = shown_size(*drawn)[0]
        for _attempt in range(2):
            # a drawing without axes (a state machine) keeps its own proportions of text to shapes
            shrink = min(3.0, max(0.5, TEXT_PX * 72 * drawn[0] / (smallest * shown))) if axis_text else 1.0
            fig.set_size_inches(drawn / shrink)
            png = print_figure(fig, "png", base64=True, bbox_inches="tight", dpi=shrink * shown / drawn[0])
            width, height = png_size(base64.b64decode(png))
            shown = round(shown * shown_size(width, height)[0] / width)
        return png
    finally:
        fig.set_size_inches(inches)


def use_in_this_kernel() -> None:
    """Make IPython draw figures with ``png_for_a_slide``, also after matplotlib's inline backend
    registers its own drawing (it does when pyplot is first imported): checked before every cell."""
    from IPython import get_ipython
    shell = get_ipython()
    if shell is None:
        return

    def ours() -> None:
        import matplotlib
        if "inline" in str(matplotlib.rcParams._get("backend")):
            # matplotlib loads its backend with the first figure, and the inline backend then registers
            # its own drawing: load it now, so that the first figure is drawn for a slide too
            import matplotlib_inline.backend_inline  # noqa: F401
        from matplotlib.figure import Figure
        formatter = shell.display_formatter.formatters["image/png"]
        if formatter.for_type(Figure) is not png_for_a_slide:  # for_type(t) alone answers the current one
            formatter.for_type(Figure, png_for_a_slide)

    ours()
    shell.events.register("pre_run_cell", lambda *args: ours())


def startup_file(repo: str) -> str:
    """An IPython startup file (``$IPYTHONDIR/profile_default/startup/``) that does it in a new kernel."""
    return ("def _slides_figures():\n"
            "    import sys\n"
            f"    sys.path.insert(0, {repo!r})\n"
            "    from slides.figures import use_in_this_kernel\n"
            "    use_in_this_kernel()\n"
            "    sys.path.remove(" f"{repo!r})\n"
            "_slides_figures()\n"
            "del _slides_figures\n")
