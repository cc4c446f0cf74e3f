"""Figures of the Trust test page: the null histogram with the observed statistic and the
p-value heat map over the bandwidth grid.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.palette import GAP_COLOR


def null_histogram_figure(null: np.ndarray, observed: float, title: str = "",
                          statistic_label: str = "KLCE²") -> go.Figure:
    """Histogram of the resampled null statistics with the observed value marked.

    Parameters
    ----------
    null : array_like
        The B resampled statistics.
    observed : float
        The observed statistic.
    title : str
        The figure's title.
    statistic_label : str
        The x-axis title.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    figure = go.Figure()
    figure.add_histogram(x=null, nbinsx=40, marker_color="#9fb7c9", name="null (resampled)",
                         hovertemplate="%{x:.3g}: %{y} resamples<extra></extra>")
    figure.add_vline(x=observed, line=dict(color=GAP_COLOR, width=2.5),
                     annotation_text=f"observed {observed:.3g}", annotation_position="top")
    figure.update_layout(
        title=title or None, height=320, margin=dict(l=10, r=10, t=50 if title else 30, b=10),
        xaxis_title=statistic_label, yaxis_title="resamples", showlegend=False, bargap=0.02,
    )
    return figure


def p_value_heatmap_figure(prob_bandwidths: np.ndarray, feature_bandwidths: np.ndarray,
                           p_values: np.ndarray, alpha: float = 0.05) -> go.Figure:
    """p-value over the (prediction, feature) bandwidth grid; cells at or below α outlined.

    Parameters
    ----------
    prob_bandwidths, feature_bandwidths : array_like
        The grid's bandwidths.
    p_values : array_like
        ``(len(prob_bandwidths), len(feature_bandwidths))`` p-values.
    alpha : float, default 0.05
        The level outlined.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fmt = [f"{b:.3g}" for b in feature_bandwidths]
    rows = [f"{b:.3g}" for b in prob_bandwidths]
    text = [[f"{p:.3f}" for p in row] for row in p_values]
    figure = go.Figure(go.Heatmap(
        z=np.log10(p_values), x=fmt, y=rows, text=text, texttemplate="%{text}",
        colorscale="RdBu", zmin=-3, zmax=0,
        colorbar=dict(title="p-value", tickvals=[-3, -2, np.log10(0.05), -1, 0],
                      ticktext=["0.001", "0.01", "0.05", "0.1", "1"]),
        hovertemplate="σ_p = %{y}, σ_x = %{x}: p = %{text}<extra></extra>",
    ))
    significant = np.argwhere(p_values <= alpha)
    for i, j in significant:
        figure.add_shape(type="rect", x0=j - 0.5, x1=j + 0.5, y0=i - 0.5, y1=i + 0.5,
                         line=dict(color="black", width=2))
    figure.update_layout(
        height=360, margin=dict(l=10, r=10, t=30, b=10),
        xaxis=dict(title="feature bandwidth σ_x", type="category"),
        yaxis=dict(title="prediction bandwidth σ_p", type="category"),
    )
    return figure

