"""Figures of the Recalibration page: MLCE curves per method, KLCE p-values against α and the
local bias before and after. Every figure takes ``colors`` (method → colour,
:func:`core.figures.palette.method_colors` of the comparison's methods) so that a method has
one colour across the page.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.figures.palette import BASELINE_COLOR, GAP_COLOR, method_colors, with_alpha
from core.recalibration.ranking import UNCALIBRATED


def mlce_comparison_figure(curves: dict[str, pd.DataFrame], gamma: float | None = None,
                           colors: Mapping[str, str] | None = None) -> go.Figure:
    """MLCE against γ for every method on one chart (Luo et al., Fig. 3): lower is better at
    every γ; the first curve (the uncalibrated model) is drawn dashed in grey.

    Parameters
    ----------
    curves : dict of str to pandas.DataFrame
        Each method's MLCE curve (``gamma``, ``mlce``), the uncalibrated model first.
    gamma : float, optional
        A bandwidth to mark.
    colors : mapping of str to str, optional
        Each method's colour (default: :func:`~core.figures.palette.method_colors` of
        ``curves``).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    colors = colors or method_colors(curves)
    figure = go.Figure()
    for i, (name, curve) in enumerate(curves.items()):
        figure.add_scatter(
            x=curve["gamma"], y=curve["mlce"], mode="lines+markers", name=name,
            line=dict(color=colors[name], width=2.5 if i else 2,
                      dash="dash" if i == 0 else "solid"),
            hovertemplate=f"{name}<br>γ = %{{x:.3g}}: MLCE %{{y:.3f}}<extra></extra>")
    if gamma is not None:
        figure.add_vline(x=gamma, line=dict(color="#7f8c8d", dash="dot", width=1),
                         annotation_text=f"γ = {gamma:g} (table)", annotation_position="top")
    figure.update_layout(height=380, margin=dict(l=10, r=10, t=40, b=10),
                         xaxis=dict(title="kernel bandwidth γ", type="log"),
                         yaxis=dict(title="MLCE (max local calibration error)",
                                    rangemode="tozero"),
                         legend=dict(orientation="v", x=1.01, y=1))
    return figure


def klce_pvalue_figure(table: pd.DataFrame, alpha: float = 0.05,
                       colors: Mapping[str, str] | None = None) -> go.Figure:
    """The aggregated KLCE test's p-value of every method (a bar each in the method's colour,
    log scale) against α: bars at or below the line reject local calibration (I-trustworthy,
    Fig. 4) and are hatched with a red outline. ``table`` has columns ``method``, ``klce_p``
    and optionally ``klce_p_sd`` (error bars).

    Parameters
    ----------
    table : pandas.DataFrame
        As above.
    alpha : float, default 0.05
        The level drawn.
    colors : mapping of str to str, optional
        Each method's colour (default: :func:`~core.figures.palette.method_colors` of
        ``table["method"]``).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    rejected = (table["klce_p"] <= alpha).to_numpy()
    colors = colors or method_colors(table["method"])
    errors = dict(type="data", array=table["klce_p_sd"], thickness=1.2) \
        if "klce_p_sd" in table else None
    figure = go.Figure(go.Bar(
        x=table["method"], y=table["klce_p"], error_y=errors,
        marker=dict(color=[colors[m] for m in table["method"]],
                    pattern=dict(shape=["/" if r else "" for r in rejected],
                                 fgcolor="white", solidity=0.3),
                    line=dict(color=[GAP_COLOR if r else "white" for r in rejected],
                              width=[2.5 if r else 1 for r in rejected])),
        customdata=np.where(rejected, "rejects local calibration", "does not reject"),
        text=[f"{p:.3f}" for p in table["klce_p"]], textposition="outside", cliponaxis=False,
        hovertemplate="%{x}: p = %{y:.4f}, %{customdata}<extra></extra>"))
    figure.add_hline(y=alpha, line=dict(color="black", dash="dash", width=1.5),
                     annotation_text=f"α = {alpha:g}", annotation_position="top right")
    low = max(min(float(table["klce_p"].min()), alpha) / 3, 1e-4)
    figure.update_layout(height=360, margin=dict(l=10, r=10, t=40, b=10), showlegend=False,
                         yaxis=dict(title="KLCE p-value (aggregated over bandwidths)",
                                    type="log", range=[np.log10(low), 0.15],
                                    tickvals=[0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1],
                                    ticktext=["0.0005", "0.001", "0.005", "0.01", "0.05",
                                              "0.1", "0.5", "1"]),
                         xaxis=dict(title=None, type="category"))
    return figure


def lcb_before_after_figure(trends: pd.DataFrame, feature: str,
                            colors: Mapping[str, str] | None = None) -> go.Figure:
    """Trend of the local bias LCB against one feature before and after a recalibration,
    with bootstrap bands (``core.recalibration.before_after.lcb_before_after``); a repaired model
    has its curve on the zero line. ``before`` is drawn in the uncalibrated model's colour,
    ``after: <method>`` in the method's.

    Parameters
    ----------
    trends : pandas.DataFrame
        As above.
    feature : str
        The x-axis feature.
    colors : mapping of str to str, optional
        Each method's colour (default: :func:`~core.figures.palette.method_colors` of the
        methods in ``trends``).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    labels = list(dict.fromkeys(trends["group"]))
    methods = {label: UNCALIBRATED if label == "before" else label.removeprefix("after: ")
               for label in labels}
    colors = colors or method_colors(methods.values())
    figure = go.Figure()
    for i, (label, part) in enumerate(trends.groupby("group", sort=False)):
        color = colors.get(methods[label], BASELINE_COLOR)
        figure.add_scatter(x=list(part["x"]) + list(part["x"][::-1]),
                           y=list(part["high"]) + list(part["low"][::-1]), fill="toself",
                           fillcolor=with_alpha(color, 0.18), line=dict(width=0),
                           hoverinfo="skip", showlegend=False)
        figure.add_scatter(x=part["x"], y=part["fit"], mode="lines", name=str(label),
                           line=dict(color=color, width=3, dash="dash" if i == 0 else "solid"),
                           hovertemplate=f"{label}<br>{feature} = %{{x:.3g}}: "
                                         "LCB %{y:+.3f}<extra></extra>")
    figure.add_hline(y=0, line=dict(color="black", width=1))
    figure.update_layout(height=360, margin=dict(l=10, r=10, t=30, b=10),
                         xaxis_title=feature,
                         yaxis_title="local bias LCB (observed − predicted)",
                         legend=dict(orientation="h", yanchor="bottom", y=1.01, x=0))
    return figure

