"""Figures of the Local bias page: the LCB of every test row against a feature with per-group
polynomial trends and bootstrap bands (I-trustworthy Fig. 6).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.palette import GROUP_COLORS, with_alpha

#: Margins of the figure in pixels: the panels' titles above, the x-axis title and the
#: legend below.
TOP_MARGIN, BOTTOM_MARGIN = 40, 110
#: Pixels between the plot's bottom edge and the legend's top (under the x-axis title).
LEGEND_GAP = 58


def facet_bias(points: pd.DataFrame, facet: str) -> pd.Series:
    """Mean ``|LCB|`` of each facet level, the largest first (ties by name): the panel to look at
    first is the top left one."""
    size = points["lcb"].abs().groupby(points[facet].astype(str)).mean()
    return size.loc[sorted(size.index, key=lambda level: (
        -np.nan_to_num(size[level], nan=-1.0), level))]


def lcb_figure(points: pd.DataFrame, trends: pd.DataFrame, feature: str,
               color: str | None = None, facet: str | None = None,
               max_points: int = 20_000) -> go.Figure:
    """LCB per query row against a feature (I-trustworthy Fig. 6), with per-group trends.

    ``points`` has columns ``feature``, ``lcb`` and the ``color`` / ``facet`` group columns;
    ``trends`` comes from :func:`core.local.lcb_trends.lcb_trends` with its ``group`` column holding
    ``"<facet> | <color>"`` labels (or one of them). At most ``max_points`` points are drawn.
    Facets are ordered by their mean ``|LCB|``, largest first (``facet_bias``, named in each
    panel's title) and share one y scale, so that biases compare across panels; the legend
    lies under the plot, clear of the panels' titles.

    Parameters
    ----------
    points, trends : pandas.DataFrame
        As above.
    feature : str
        The x-axis feature.
    color, facet : str, optional
        Group columns for the colours and the panels.
    max_points : int, default 20000
        Points drawn at most.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    size = facet_bias(points, facet) if facet else None
    facets = list(size.index) if facet else [None]
    if len(points) > max_points:
        points = points.sample(max_points, random_state=0)
    columns = min(len(facets), 3)
    rows = -(-len(facets) // columns)
    titles = [f"{facet} = {f} · mean |LCB| {size[f]:.3f}" for f in facets] if facet else None
    figure = make_subplots(rows=rows, cols=columns, shared_yaxes=True,
                           subplot_titles=titles, horizontal_spacing=0.04,
                           vertical_spacing=0.12)
    colors = sorted(points[color].astype(str).unique()) if color else [None]
    palette = {c: GROUP_COLORS[i % len(GROUP_COLORS)] for i, c in enumerate(colors)}
    for k, f in enumerate(facets):
        row, col = k // columns + 1, k % columns + 1
        in_facet = points if f is None else points[points[facet].astype(str) == f]
        for c in colors:
            subset = in_facet if c is None else in_facet[in_facet[color].astype(str) == c]
            name = c or "rows"
            figure.add_scattergl(
                x=subset[feature], y=subset["lcb"], mode="markers", name=name,
                legendgroup=name, showlegend=k == 0,
                marker=dict(size=4, opacity=0.35, color=palette[c]),
                hovertemplate=f"{feature} %{{x}}<br>LCB %{{y:.3f}}<extra>{name}</extra>",
                row=row, col=col,
            )
            label = " | ".join(str(v) for v in (f, c) if v is not None) or "all"
            trend = trends[trends["group"] == label]
            if len(trend):
                figure.add_scatter(
                    x=list(trend["x"]) + list(trend["x"][::-1]),
                    y=list(trend["high"]) + list(trend["low"][::-1]), fill="toself",
                    fillcolor=with_alpha(palette[c], 0.18), line=dict(width=0),
                    hoverinfo="skip", showlegend=False, legendgroup=name, row=row, col=col,
                )
                figure.add_scatter(
                    x=trend["x"], y=trend["fit"], mode="lines",
                    line=dict(color=palette[c], width=3), showlegend=False, legendgroup=name,
                    hovertemplate=f"{label}: %{{y:.3f}} at {feature} %{{x:.3g}}<extra></extra>",
                    row=row, col=col,
                )
        figure.add_hline(y=0, line=dict(color="#7f8c8d", dash="dash", width=1), row=row,
                         col=col)
        figure.update_xaxes(title_text=feature, row=row, col=col)
    figure.update_yaxes(title_text="LCB (observed − predicted)", col=1)
    figure.update_yaxes(matches="y")  # one scale in every panel, rows included
    height = 380 * rows + 60
    plot_height = height - TOP_MARGIN - BOTTOM_MARGIN
    figure.update_layout(height=height,
                         margin=dict(l=10, r=10, t=TOP_MARGIN, b=BOTTOM_MARGIN),
                         legend=dict(orientation="h", yanchor="top", x=0,
                                     y=-LEGEND_GAP / plot_height, title_text=color or ""))
    return figure
