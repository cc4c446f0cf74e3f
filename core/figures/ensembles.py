"""Figures of the Ensembles page: the learned weights λ(x) against a feature or over a map,
and the three credal-set tests' p-values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.figures.palette import GAP_COLOR, GROUP_COLORS, OBSERVED_COLOR

# --------------------------------------------------------------------------- ensembles


def _member_color(index: int) -> str:
    return GROUP_COLORS[index % len(GROUP_COLORS)]


def credal_weights_figure(feature: np.ndarray, weights: np.ndarray,
                          member_names: list[str] | tuple[str, ...], feature_name: str,
                          max_points: int = 5_000) -> go.Figure:
    """Learned weights λ_m(x) of each member against one feature (which member is trusted
    where): one marker series per member, rows sorted by the feature; each row's weights
    sum to 1. At most ``max_points`` rows (evenly spaced in feature order) are drawn.

    Parameters
    ----------
    feature : array_like
        ``(n,)`` the feature's value per row.
    weights : array_like
        ``(n, M)`` learned weights.
    member_names : sequence of str
        The M members' names.
    feature_name : str
        The x-axis title.
    max_points : int, default 5000
        Most rows drawn.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    order = np.argsort(feature, kind="stable")
    if order.size > max_points:
        order = order[np.linspace(0, order.size - 1, max_points).astype(int)]
    figure = go.Figure()
    for m, name in enumerate(member_names):
        figure.add_scatter(
            x=feature[order], y=weights[order, m], mode="lines+markers", name=name,
            marker=dict(size=4, color=_member_color(m)),
            line=dict(width=1, color=_member_color(m)),
            hovertemplate=f"{name}<br>{feature_name} = %{{x:.3g}}<br>λ = %{{y:.3f}}"
                          "<extra></extra>",
        )
    figure.update_layout(
        height=360, margin=dict(l=10, r=10, t=40, b=10), hovermode="closest",
        xaxis_title=feature_name, yaxis=dict(title="weight λ_m(x)", range=[0, 1]),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0),
    )
    return figure


def credal_weights_map_figure(coords: np.ndarray, weights: np.ndarray,
                              member_names: list[str] | tuple[str, ...],
                              axis_titles: tuple[str, str] = ("component 1", "component 2"),
                              max_points: int = 20_000) -> go.Figure:
    """The learned weights over a 2-D embedding of the features: each row coloured by the
    member with the largest weight, more opaque the larger that weight (hover: all weights).
    At most ``max_points`` rows are drawn (an even subsample).

    Parameters
    ----------
    coords : array_like
        ``(n, 2)`` embedding coordinates.
    weights : array_like
        ``(n, M)`` learned weights.
    member_names : sequence of str
        The M members' names.
    axis_titles : tuple of str
        Titles of the two axes.
    max_points : int, default 20000
        Most rows drawn.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    rows = np.arange(coords.shape[0])
    if rows.size > max_points:
        rows = rows[np.linspace(0, rows.size - 1, max_points).astype(int)]
    top = weights.argmax(axis=1)
    figure = go.Figure()
    for m, name in enumerate(member_names):
        mine = rows[top[rows] == m]
        if not mine.size:
            continue
        text = ["<br>".join(f"{n}: {w:.2f}" for n, w in zip(member_names, weights[i],
                                                             strict=True)) for i in mine]
        figure.add_scatter(
            x=coords[mine, 0], y=coords[mine, 1], mode="markers", name=f"{name} leads",
            marker=dict(size=6, color=_member_color(m), line=dict(width=0),
                        opacity=np.clip(weights[mine, m], 0.25, 1.0)),
            text=text, hovertemplate="%{text}<extra></extra>",
        )
    figure.update_layout(
        height=420, margin=dict(l=10, r=10, t=40, b=10), hovermode="closest",
        xaxis_title=axis_titles[0], yaxis_title=axis_titles[1],
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0),
    )
    return figure


def credal_p_values_figure(table: pd.DataFrame, alpha: float = 0.05) -> go.Figure:
    """The p-values of the credal-set tests side by side (``CredalComparison.table()``:
    columns ``test``, ``p_value``, ``verdict``), with the level α marked; bars at or below α
    are red.

    Parameters
    ----------
    table : pandas.DataFrame
        As above.
    alpha : float, default 0.05
        The level marked.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    colors = [GAP_COLOR if p <= alpha else OBSERVED_COLOR for p in table["p_value"]]
    figure = go.Figure(go.Bar(
        x=table["p_value"], y=table["test"], orientation="h", marker_color=colors,
        text=[f"p = {p:.3f} ({v})" for p, v in zip(table["p_value"], table["verdict"],
                                                     strict=True)],
        textposition="outside", cliponaxis=False,
        hovertemplate="%{y}: p = %{x:.4f}<extra></extra>",
    ))
    figure.add_vline(x=alpha, line=dict(color="black", dash="dash", width=1.5),
                     annotation_text=f"α = {alpha:g}", annotation_position="top")
    figure.update_layout(
        height=80 + 60 * len(table), margin=dict(l=10, r=10, t=40, b=10),
        xaxis=dict(title="p-value", range=[0, 1.25]),
        yaxis=dict(autorange="reversed"), showlegend=False,
    )
    return figure

