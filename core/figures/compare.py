"""Figures of the Compare models page: both models' reliability diagrams overlaid, the per-group
dumbbell chart (champion → challenger) and the paired differences with their intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.compare.comparison import CRITERION_NAMES, ComparisonResult
from core.data.distributions import norm_ppf
from core.figures.palette import GAP_COLOR, OBSERVED_COLOR, PREDICTED_COLOR

#: Champion (A) and challenger (B) colours.
MODEL_COLORS = (OBSERVED_COLOR, "#d1495b")
BETTER_COLOR = "#009E73"


def reliability_overlay_figure(result: ComparisonResult) -> go.Figure:
    """Both models' reliability diagrams on the same equal-width bins: observed frequency
    against mean confidence per bin with the bins' binomial intervals (top), rows per bin
    (bottom). A model on the diagonal is calibrated; where the two curves part, the models
    differ in calibration.

    Parameters
    ----------
    result : ComparisonResult
        The paired comparison.
    """
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.74, 0.26],
                           vertical_spacing=0.04)
    figure.add_scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration",
                       line=dict(color="#7f8c8d", dash="dash", width=1), row=1, col=1)
    names = (result.champion, result.challenger)
    for i, name in enumerate(names):
        table = result.reliability[name]
        filled = table[table["count"] > 0]
        role = "champion" if i == 0 else "challenger"
        color = MODEL_COLORS[i]
        figure.add_scatter(
            x=filled["mean_confidence"], y=filled["frequency"], mode="lines+markers",
            name=f"{name} ({role})", line=dict(color=color, width=2.5),
            marker=dict(size=7, symbol="circle" if i == 0 else "diamond"),
            error_y=dict(type="data", symmetric=False, thickness=1.2, width=3,
                         array=filled["ci_high"] - filled["frequency"],
                         arrayminus=filled["frequency"] - filled["ci_low"]),
            hovertemplate=f"{name}<br>confidence %{{x:.3f}}<br>observed %{{y:.3f}}"
                          "<extra></extra>", row=1, col=1)
        centres = (table["bin_lower"] + table["bin_upper"]) / 2
        figure.add_bar(x=centres, y=table["count"], name=f"{name} rows",
                       marker_color=color, opacity=0.55, showlegend=False,
                       width=(table["bin_upper"] - table["bin_lower"]) * 0.45,
                       offset=-(table["bin_upper"] - table["bin_lower"]) * (0.45 - 0.45 * i),
                       hovertemplate=f"{name}: %{{y:,}} rows<extra></extra>", row=2, col=1)
    notion = result.parameters.get("notion", "")
    figure.update_layout(height=560, margin=dict(l=10, r=10, t=40, b=10), barmode="overlay",
                         legend=dict(orientation="h", y=1.08, x=0))
    figure.update_yaxes(title_text="observed frequency", range=[0, 1], row=1, col=1)
    figure.update_yaxes(title_text="rows", row=2, col=1)
    figure.update_xaxes(title_text=f"predicted probability ({notion})", range=[0, 1],
                        row=2, col=1)
    return figure


def dumbbell_figure(result: ComparisonResult, criterion: str = "brier") -> go.Figure:
    """Per group, the champion's score → the challenger's (one line per group level), the
    challenger's end coloured by the simultaneous verdict: red where it is significantly
    worse, green where better, grey where no difference is established.

    Parameters
    ----------
    result : ComparisonResult
        The paired comparison.
    criterion : str, default "brier"
        The criterion drawn.
    """
    groups = result.groups
    groups = groups[groups["criterion"] == criterion].iloc[::-1]
    colors = {"worse": GAP_COLOR, "better": BETTER_COLOR}
    figure = go.Figure()
    for row in groups.itertuples():
        figure.add_scatter(x=[row.value_a, row.value_b], y=[row.slice, row.slice],
                           mode="lines", line=dict(color="#b0b7bf", width=3),
                           hoverinfo="skip", showlegend=False)
    labels = [f"{r.slice} ({r.rows:,} rows)" for r in groups.itertuples()]
    figure.add_scatter(
        x=groups["value_a"], y=groups["slice"], mode="markers", name=result.champion,
        marker=dict(color=MODEL_COLORS[0], size=11), customdata=labels,
        hovertemplate=f"{result.champion}: %{{x:.4f}}<br>%{{customdata}}<extra></extra>")
    ends = [colors.get(d, "#7f8c8d") for d in groups["direction"]]
    figure.add_scatter(
        x=groups["value_b"], y=groups["slice"], mode="markers", name=result.challenger,
        marker=dict(color=ends, size=13, symbol="diamond",
                    line=dict(color=MODEL_COLORS[1], width=2)),
        customdata=np.column_stack([labels, groups["direction"], groups["p_adjusted"]]),
        hovertemplate=f"{result.challenger}: %{{x:.4f}}<br>%{{customdata[0]}}<br>"
                      "%{customdata[1]} (adjusted p = %{customdata[2]:.3g})<extra></extra>")
    figure.update_layout(
        height=max(260, 46 * len(groups) + 120), margin=dict(l=10, r=10, t=40, b=10),
        xaxis=dict(title=f"{CRITERION_NAMES[criterion]} (lower is better)"),
        yaxis=dict(title=None, type="category"),
        legend=dict(orientation="h", y=1.1, x=0))
    return figure


def differences_figure(table: pd.DataFrame, alpha: float = 0.05) -> go.Figure:
    """Every criterion's paired difference B − A with its interval, each on its own scale
    (the difference divided by its standard error: a z score), so criteria of different units
    share one axis; beyond ±z_{1−α/2} the difference is significant.

    Parameters
    ----------
    table : DataFrame
        The comparison's table of differences.
    alpha : float, default 0.05
        The level of the intervals.
    """
    z = table["difference"] / table["std_error"].where(table["std_error"] > 0)
    low = table["ci_low"] / table["std_error"].where(table["std_error"] > 0)
    high = table["ci_high"] / table["std_error"].where(table["std_error"] > 0)
    colors = np.where(table["p_value"] > alpha, "#7f8c8d",
                      np.where(table["difference"] > 0, GAP_COLOR, BETTER_COLOR))
    figure = go.Figure(go.Scatter(
        x=z, y=table["name"], mode="markers", marker=dict(size=12, color=colors),
        error_x=dict(type="data", symmetric=False, array=high - z, arrayminus=z - low),
        customdata=np.column_stack([table["difference"], table["p_value"]]),
        hovertemplate="%{y}: B − A = %{customdata[0]:.4g} (p = %{customdata[1]:.3g})"
                      "<extra></extra>"))
    figure.add_vline(x=0, line=dict(color="black", width=1))
    critical = float(norm_ppf(1.0 - alpha / 2.0))
    for edge in (-critical, critical):
        figure.add_vline(x=edge, line=dict(color=PREDICTED_COLOR, dash="dot", width=1))
    figure.update_layout(height=300, margin=dict(l=10, r=10, t=30, b=10), showlegend=False,
                         xaxis=dict(title="standardised difference (B − A) / se: "
                                          "left = challenger better, right = worse"),
                         yaxis=dict(type="category", autorange="reversed"))
    return figure
