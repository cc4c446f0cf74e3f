"""Figures of the Reliability page: reliability diagrams with their bands and histograms, one
or a grid of them per group, the smooth reliability diagram and the cumulative differences.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.palette import BAND_COLOR, GAP_COLOR, OBSERVED_COLOR, PREDICTED_COLOR, with_alpha

NOTION_LABELS = {
    "positive": "P(y = positive class)",
    "top-label": "top-label confidence",
    "classwise": "class probability (one-vs-rest)",
}


def _axis_label(notion: str, class_name: str | None = None) -> str:
    label = NOTION_LABELS.get(notion, notion)
    return f"{label}: {class_name}" if class_name else label


def _add_reliability_traces(figure, table: pd.DataFrame, row: int, col: int,
                            show_legend: bool, color: str = OBSERVED_COLOR) -> None:
    """Diagonal, consistency band, observed frequencies with intervals (in ``color``), for
    one subplot."""
    filled = table[table["count"] > 0]
    figure.add_scatter(
        x=[0, 1], y=[0, 1], mode="lines", line=dict(color="#7f8c8d", dash="dash", width=1),
        name="perfect calibration", showlegend=show_legend, hoverinfo="skip", row=row, col=col,
    )
    band = filled.dropna(subset=["band_low", "band_high"])
    if len(band):
        figure.add_scatter(
            x=list(band["mean_confidence"]) + list(band["mean_confidence"][::-1]),
            y=list(band["band_high"]) + list(band["band_low"][::-1]),
            fill="toself", fillcolor=BAND_COLOR, line=dict(width=0), mode="lines",
            name="consistency band (if calibrated)", showlegend=show_legend, hoverinfo="skip",
            row=row, col=col,
        )
    figure.add_scatter(
        x=filled["mean_confidence"], y=filled["frequency"], mode="lines+markers",
        marker=dict(color=color, size=7), line=dict(color=color, width=1.5),
        error_y=dict(
            type="data", symmetric=False, thickness=1.2, width=3, color=color,
            array=filled["ci_high"] - filled["frequency"],
            arrayminus=filled["frequency"] - filled["ci_low"],
        ),
        customdata=filled[["count", "bin_lower", "bin_upper", "ci_low", "ci_high"]].to_numpy(),
        hovertemplate=(
            "bin (%{customdata[1]:.3f}, %{customdata[2]:.3f}]<br>mean confidence %{x:.3f}"
            "<br>observed %{y:.3f} [%{customdata[3]:.3f}, %{customdata[4]:.3f}]"
            "<br>%{customdata[0]:,} rows<extra></extra>"
        ),
        name="observed frequency (95% interval)", showlegend=show_legend, row=row, col=col,
    )


def reliability_figure(
    table: pd.DataFrame, title: str = "", class_name: str | None = None
) -> go.Figure:
    """Reliability diagram over a histogram of the confidences, from ``reliability_table``.

    Top: observed frequency per bin against its mean confidence, with the bin's binomial
    interval as error bars and the consistency band (where the frequency would fall if the
    model were calibrated); bins without rows are not drawn. Bottom: rows per bin.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`core.metrics.reliability_table`.
    title : str
        The figure's title.
    class_name : str, optional
        The class of a classwise diagram, for the axis title.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    notion = table.attrs.get("notion", "")
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.74, 0.26],
                           vertical_spacing=0.04)
    _add_reliability_traces(figure, table, 1, 1, show_legend=True)
    figure.add_bar(
        x=(table["bin_lower"] + table["bin_upper"]) / 2, y=table["count"],
        width=table["bin_upper"] - table["bin_lower"], marker_color=PREDICTED_COLOR,
        marker_line=dict(color="white", width=1), name="rows per bin", showlegend=False,
        customdata=table[["bin_lower", "bin_upper"]].to_numpy(),
        hovertemplate="(%{customdata[0]:.3f}, %{customdata[1]:.3f}]: %{y:,} rows<extra></extra>",
        row=2, col=1,
    )
    figure.update_xaxes(range=[0, 1], row=1, col=1)
    figure.update_xaxes(range=[0, 1], title_text=_axis_label(notion, class_name), row=2, col=1)
    figure.update_yaxes(range=[0, 1], title_text="observed frequency", row=1, col=1)
    figure.update_yaxes(title_text="rows", rangemode="tozero", row=2, col=1)
    figure.update_layout(
        title=title or None, height=560, margin=dict(l=10, r=10, t=50 if title else 20, b=10),
        legend=dict(orientation="h", yanchor="bottom", y=1.01, x=0), hovermode="closest",
    )
    return figure


def reliability_grid(
    tables: dict[str, pd.DataFrame], columns: int = 3, class_name: str | None = None,
    colors: Mapping[str, str] | None = None,
) -> go.Figure:
    """Small multiples: one reliability diagram per group, same axes, sizes in the titles.

    Parameters
    ----------
    tables : dict of str to pandas.DataFrame
        One reliability table per group.
    columns : int, default 3
        Panels per row.
    class_name : str, optional
        The class of classwise diagrams.
    colors : mapping of str to str, optional
        A colour per panel (the Recalibration page's method colours); default: all in the
        observed colour.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    names = list(tables)
    rows = max(1, -(-len(names) // columns))
    titles = [f"{name} (n = {int(tables[name]['count'].sum()):,})" for name in names]
    figure = make_subplots(rows=rows, cols=columns, subplot_titles=titles,
                           horizontal_spacing=0.06, vertical_spacing=0.12 if rows > 1 else 0.1)
    for i, name in enumerate(names):
        _add_reliability_traces(figure, tables[name], i // columns + 1, i % columns + 1,
                                show_legend=i == 0,
                                color=(colors or {}).get(name, OBSERVED_COLOR))
    notion = next(iter(tables.values())).attrs.get("notion", "") if tables else ""
    figure.update_xaxes(range=[0, 1])
    figure.update_yaxes(range=[0, 1])
    for col in range(1, columns + 1):
        figure.update_xaxes(title_text=_axis_label(notion, class_name), row=rows, col=col)
    figure.update_yaxes(title_text="observed", col=1)
    figure.update_layout(height=320 * rows + 100, margin=dict(l=10, r=10, t=90, b=10),
                         legend=dict(orientation="h", yanchor="top", y=0.995, x=0,
                                     yref="container"))
    return figure


# --------------------------------------------------------------------------- smooth and cumulative

#: Widest ribbon of the smooth reliability diagram (at the density's peak), in y units.
RIBBON_WIDTH = 0.05


def smooth_reliability_figure(diagram, title: str = "",
                              class_name: str | None = None) -> go.Figure:
    """Smooth reliability diagram (Błasiok & Nakkiran 2023) from
    :func:`core.metrics.smooth.smooth_reliability`: the kernel-smoothed curve ``μ̂(t)`` drawn as a
    ribbon whose width is proportional to the density of the predictions ``δ̂(t)`` (their
    rendering: the curve is thick where predictions are many), over the bootstrap band. The
    smooth ECE is the density-weighted distance of the ribbon from the diagonal.

    Parameters
    ----------
    diagram : SmoothReliability
        What :func:`core.metrics.smooth.smooth_reliability` returned.
    title : str
        The figure's title.
    class_name : str, optional
        The class of a classwise diagram.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    t = diagram.grid
    finite = np.isfinite(diagram.curve)
    figure = go.Figure()
    figure.add_scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration",
                       line=dict(color="#7f8c8d", dash="dash", width=1), hoverinfo="skip")
    band = finite & np.isfinite(diagram.band_low) & np.isfinite(diagram.band_high)
    if band.any():
        level = round(100 * diagram.level)
        figure.add_scatter(
            x=np.concatenate([t[band], t[band][::-1]]),
            y=np.concatenate([diagram.band_high[band], diagram.band_low[band][::-1]]),
            fill="toself", fillcolor=BAND_COLOR, line=dict(width=0), mode="lines",
            name=f"{level}% bootstrap band", hoverinfo="skip",
        )
    half = RIBBON_WIDTH / 2 * diagram.density / max(float(diagram.density.max()), 1e-300)
    x, mu, h = t[finite], diagram.curve[finite], half[finite]
    figure.add_scatter(
        x=np.concatenate([x, x[::-1]]), y=np.concatenate([mu + h, (mu - h)[::-1]]),
        fill="toself", fillcolor=with_alpha(GAP_COLOR, 0.85), line=dict(width=0),
        mode="lines", name="smoothed curve (width ∝ density)", hoverinfo="skip",
    )
    figure.add_scatter(
        x=x, y=mu, mode="lines", line=dict(color=GAP_COLOR, width=1), showlegend=False,
        customdata=diagram.density[finite],
        hovertemplate="prediction %{x:.3f}<br>smoothed frequency %{y:.3f}"
                      "<br>density %{customdata:.2f}<extra></extra>",
    )
    interval = ("" if not np.isfinite(diagram.smece_low) else
                f" [{diagram.smece_low:.4f}, {diagram.smece_high:.4f}]")
    figure.add_annotation(
        x=0.02, y=0.98, xref="x", yref="y", xanchor="left", yanchor="top", showarrow=False,
        align="left", bgcolor="rgba(255, 255, 255, 0.8)",
        text=f"smECE {diagram.smece:.4f}{interval}<br>σ = {diagram.bandwidth:.4f}",
    )
    figure.update_layout(
        title=title or None, height=520, margin=dict(l=10, r=10, t=50 if title else 20, b=10),
        xaxis=dict(range=[0, 1], title=_axis_label(diagram.notion, class_name)),
        yaxis=dict(range=[0, 1], title="smoothed observed frequency"),
        legend=dict(orientation="h", yanchor="bottom", y=1.01, x=0), hovermode="closest",
    )
    return figure


#: Points of the cumulative-differences path a figure draws at most (about; the extremes of
#: every stretch are kept, :meth:`core.metrics.cumulative.CumulativeDifferences.thinned`).
CUMULATIVE_POINTS = 5_000


def cumulative_figure(path, title: str = "", class_name: str | None = None,
                      max_points: int = CUMULATIVE_POINTS) -> go.Figure:
    """Cumulative differences (Arrieta-Ibarra et al. 2022) from
    :func:`core.metrics.cumulative.cumulative_differences`: ``C_k`` against the share ``k/n`` of
    rows ordered by prediction, with the pointwise ±2σ_k range of a calibrated model. The slope of
    the path over a stretch is the average (observed − predicted) of those rows; the range of
    the path is Kuiper's H. At most about ``max_points`` points are drawn (extremes kept).

    Parameters
    ----------
    path : CumulativeDifferences
        What :func:`core.metrics.cumulative.cumulative_differences` returned.
    title : str
        The figure's title.
    class_name : str, optional
        The class of a classwise path, for the caption.
    max_points : int, default 5000
        Points drawn at most.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    shown = path.thinned(max_points)
    x = shown.fraction
    figure = go.Figure()
    figure.add_scatter(
        x=np.concatenate([x, x[::-1]]),
        y=np.concatenate([2 * shown.sigma_path, -2 * shown.sigma_path[::-1]]),
        fill="toself", fillcolor=BAND_COLOR, line=dict(width=0), mode="lines",
        name="±2σ if calibrated (pointwise)", hoverinfo="skip",
    )
    figure.add_hline(y=0, line=dict(color="#7f8c8d", dash="dash", width=1))
    figure.add_scatter(
        x=x, y=shown.cumulative, mode="lines", line=dict(color=OBSERVED_COLOR, width=2),
        name="cumulative observed − predicted", customdata=shown.scores,
        hovertemplate="first %{x:.1%} of rows (prediction ≤ %{customdata:.3f})"
                      "<br>C = %{y:.4f}<extra></extra>",
    )
    ticks = np.linspace(0.0, 1.0, 6)
    at = np.clip(np.searchsorted(path.fraction, ticks), 1, path.fraction.size - 1)
    labels = [f"{f:.0%}<br>p ≤ {s:.2f}" for f, s in zip(ticks, path.scores[at], strict=True)]
    labels[0] = "0%"
    figure.add_annotation(
        x=0.02, y=0.98, xref="paper", yref="paper", xanchor="left", yanchor="top",
        showarrow=False, align="left", bgcolor="rgba(255, 255, 255, 0.8)",
        text=f"Kuiper H {path.kuiper:.4f} · KS G {path.ks:.4f} · σ {path.sigma:.4f}",
    )
    figure.update_layout(
        title=title or None, height=420, margin=dict(l=10, r=10, t=50 if title else 20, b=10),
        xaxis=dict(range=[-0.01, 1.01], tickvals=ticks, ticktext=labels,
                   title="share of rows, ordered by " + _axis_label(path.notion, class_name)),
        yaxis=dict(title="cumulative (observed − predicted) / n", zeroline=False),
        legend=dict(orientation="h", yanchor="bottom", y=1.01, x=0), hovermode="closest",
    )
    return figure

