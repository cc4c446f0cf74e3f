"""One look for every figure: a plotly template and the caption line of exported figures.

The template (registered with plotly as :data:`TEMPLATE_NAME`) sets a colour-blind-safe
palette — the eight colours of Okabe & Ito (2008), distinguishable under protanopia,
deuteranopia and tritanopia — a white background, one font family, and axis titles large
enough to read in print. It only supplies defaults: what a figure function sets explicitly
wins, so the functions of :mod:`core.figures` keep working unchanged.

:func:`apply_style` returns a copy of a figure with the template and a caption line under
the plot carrying what an exported figure needs to stand alone: the calibration notion, the
kernel bandwidths, the rows audited (split) and their number n.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import plotly.graph_objects as go
import plotly.io as pio

TEMPLATE_NAME = "calibration_atlas"
#: Okabe–Ito: blue, orange, bluish green, vermillion, reddish purple, sky blue, yellow, black.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
           "#000000")
FONT_FAMILY = "Inter, 'Helvetica Neue', Arial, 'DejaVu Sans', sans-serif"
TEXT_COLOR = "#1d2329"
GRID_COLOR = "#e3e7eb"
#: Height in pixels of the caption line under the plot.
CAPTION_SPACE = 34
#: Characters of one caption line: a longer caption breaks at its " · " separators (11-pixel
#: text under a plot 1,000 pixels wide, the exported size, holds about 130).
CAPTION_CHARS = 125
#: Height in pixels of each further caption line.
CAPTION_LINE = 15
#: Pixels under the plot area kept for tick labels and the x-axis title, above the caption.
AXIS_SPACE = 78


def make_template() -> go.layout.Template:
    """The Calibration Atlas template: palette, fonts, axes and a diverging/sequential scale.

    Returns
    -------
    plotly.graph_objects.layout.Template
        A template built on ``plotly_white``; register it with :func:`register_template`.
    """
    template = go.layout.Template(pio.templates["plotly_white"])
    axis = dict(
        title=dict(font=dict(size=14, color=TEXT_COLOR), standoff=8),
        tickfont=dict(size=12, color=TEXT_COLOR), gridcolor=GRID_COLOR,
        linecolor="#9aa5b1", showline=True, ticks="outside", tickcolor="#9aa5b1",
        zerolinecolor="#c5ccd3", automargin=True,
    )
    template.layout.update(
        colorway=list(PALETTE),
        font=dict(family=FONT_FAMILY, size=13, color=TEXT_COLOR),
        title=dict(font=dict(size=16), x=0, xanchor="left"),
        xaxis=axis, yaxis=axis,
        legend=dict(font=dict(size=12)),
        hoverlabel=dict(font=dict(family=FONT_FAMILY)),
        paper_bgcolor="white", plot_bgcolor="white",
        colorscale=dict(sequential="Viridis", diverging="RdBu_r"),
    )
    return template


def register_template() -> str:
    """Register the template with plotly under :data:`TEMPLATE_NAME` (idempotent).

    Returns
    -------
    str
        The template's name, usable as ``figure.update_layout(template=name)``.
    """
    if TEMPLATE_NAME not in pio.templates:
        pio.templates[TEMPLATE_NAME] = make_template()
    return TEMPLATE_NAME


register_template()


def format_bandwidth(value: float | None) -> str:
    """A bandwidth for a caption: three significant digits, ``∞`` for a constant kernel."""
    if value is None:
        return "median heuristic"
    return "∞" if math.isinf(value) else f"{value:.3g}"


def caption_text(*, notion: str | None = None,
                 bandwidths: Mapping[str, float | None] | None = None,
                 split: str | None = None, n: int | None = None,
                 extra: str | None = None) -> str:
    """The caption line: ``notion: positive · σ_p = 0.05, σ_x = 0.7 · rows: test · n = 5,000``.

    Parameters
    ----------
    notion : str, optional
        The calibration notion (``positive``, ``top-label``, ``classwise``, ``canonical``, …).
    bandwidths : mapping, optional
        Kernel bandwidths by symbol, e.g. ``{"σ_p": 0.05, "σ_x": 0.7}`` or ``{"γ": 0.2}``.
    split : str, optional
        Which rows were audited (``test``, ``calibration``, ``all rows``, …).
    n : int, optional
        How many rows.
    extra : str, optional
        Anything else the figure needs to be read (the dataset, the null, B, …).

    Returns
    -------
    str
        The parts that were given, joined by a middle dot (``" · "``).
    """
    parts = []
    if notion:
        parts.append(f"notion: {notion}")
    if bandwidths:
        parts.append(", ".join(f"{k} = {format_bandwidth(v)}" for k, v in bandwidths.items()))
    if split:
        parts.append(f"rows: {split}")
    if n is not None:
        parts.append(f"n = {n:,}")
    if extra:
        parts.append(extra)
    return " · ".join(parts)


def caption_lines(caption: str, width: int = CAPTION_CHARS) -> list[str]:
    """``caption`` broken at its `` · `` separators into lines of at most ``width``
    characters (a part longer than that gets a line of its own)."""
    lines, line = [], ""
    for part in caption.split(" · "):
        joined = f"{line} · {part}" if line else part
        if line and len(joined) > width:
            lines.append(line)
            line = part
        else:
            line = joined
    return [*lines, line]


def apply_style(figure: go.Figure, caption: str = "") -> go.Figure:
    """A copy of ``figure`` in the Calibration Atlas template, with ``caption`` under the plot.

    Parameters
    ----------
    figure : plotly.graph_objects.Figure
        Any figure; it is not modified.
    caption : str, optional
        The caption (see :func:`caption_text`), broken into lines of at most
        :data:`CAPTION_CHARS` characters (:func:`caption_lines`); empty: no caption, only the
        template.

    Returns
    -------
    plotly.graph_objects.Figure
        The styled copy. With a caption, the bottom margin keeps :data:`AXIS_SPACE` pixels
        for the x axis and :data:`CAPTION_SPACE` for the caption, and the figure's height
        grows by what was added, so the plot keeps its size.
    """
    styled = go.Figure(figure)
    styled.update_layout(template=pio.templates[register_template()])
    if not caption:
        return styled
    lines = caption_lines(caption)
    caption_space = CAPTION_SPACE + CAPTION_LINE * (len(lines) - 1)
    margin = styled.layout.margin
    axis_space = max(margin.b if margin.b is not None else 0, AXIS_SPACE)
    height = styled.layout.height
    added = axis_space + caption_space - (margin.b or 0)
    styled.update_layout(margin=dict(b=axis_space + caption_space),
                         height=None if height is None else height + added)
    styled.add_annotation(
        text="<br>".join(lines), xref="paper", yref="paper", x=0, y=0, xanchor="left",
        yanchor="top",
        yshift=-axis_space, showarrow=False, align="left",
        font=dict(size=11, color="#55606b"), name="caption",
    )
    return styled
