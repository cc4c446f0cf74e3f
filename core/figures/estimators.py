"""Figures of the Estimators page: cross-validated risk per estimator, risk curves and the
estimates beside the binned ECE².
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.palette import BAND_COLOR, GAP_COLOR, OBSERVED_COLOR, PREDICTED_COLOR

# --------------------------------------------------------------------------- estimators

ESTIMATE_COLORS = {"selected": OBSERVED_COLOR, "candidate": "#9fb7c9",
                   "binned": PREDICTED_COLOR}


def _estimator_names(table: pd.DataFrame) -> list[str]:
    return [f"{label} ({parameter} = {value:.3g})" for label, parameter, value in
            zip(table["label"], table["parameter"], table["value"], strict=True)]


def estimator_risk_figure(table: pd.DataFrame) -> go.Figure:
    """Validation risk (Gruber & Bach eq. 20) of each estimator at its chosen hyperparameter.

    ``table`` is the ``table`` of :class:`core.estimators.EstimatorSelection`. Left: the mean
    risk over the folds ± 1 standard error. Right: the risk above the selected estimator's,
    from per-fold paired differences ± 1 standard error — the folds share their rows, so this is the
    comparison that says whether one estimator is really better than another.

    Parameters
    ----------
    table : pandas.DataFrame
        As above.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    names = _estimator_names(table)
    colors = [ESTIMATE_COLORS["selected"] if s else ESTIMATE_COLORS["candidate"]
              for s in table["selected"]]
    figure = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04,
                           subplot_titles=("validation risk ± 1 s.e.",
                                           "risk above the selected (paired by fold) ± 1 s.e."))
    figure.add_scatter(x=table["risk"], y=names, mode="markers", row=1, col=1,
                       marker=dict(size=12, color=colors), showlegend=False,
                       error_x=dict(type="data", array=table["risk_se"], color="#555"),
                       hovertemplate="%{y}: risk %{x:.5f}<extra></extra>")
    figure.add_scatter(x=table["risk_gap"], y=names, mode="markers", row=1, col=2,
                       marker=dict(size=12, color=colors), showlegend=False,
                       error_x=dict(type="data", array=table["risk_gap_se"], color="#555"),
                       hovertemplate="%{y}: +%{x:.2e}<extra></extra>")
    figure.add_vline(x=0.0, line=dict(color="#7f8c8d", dash="dot", width=1), row=1, col=2)
    figure.update_xaxes(title_text="R̂ (eq. 20), lower is better", tickformat=".4f",
                        row=1, col=1)
    figure.update_xaxes(title_text="R̂ − R̂(selected)", exponentformat="e", row=1, col=2)
    figure.update_yaxes(autorange="reversed", row=1, col=1)
    figure.update_layout(height=110 + 48 * len(table), margin=dict(l=10, r=10, t=40, b=10))
    return figure


def estimator_curves_figure(curves: pd.DataFrame, table: pd.DataFrame) -> go.Figure:
    """Validation risk over each estimator's hyperparameter grid (one panel per estimator).

    ``curves`` and ``table`` come from :func:`core.estimators.select`. The band is ± 1
    standard error over the folds; the chosen value is marked, and for binning the fixed
    15 bins as well. Bandwidths and ridge constants are drawn on log axes.

    Parameters
    ----------
    curves, table : pandas.DataFrame
        As above.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    from core.estimators import ESTIMATORS  # figures stay importable without the registry

    keys = list(dict.fromkeys(curves["estimator"]))
    figure = make_subplots(rows=1, cols=len(keys), horizontal_spacing=0.06,
                           subplot_titles=[ESTIMATORS[k].label for k in keys])
    for col, key in enumerate(keys, start=1):
        curve = curves[curves["estimator"] == key]
        spec = ESTIMATORS[key]
        upper, lower = curve["risk"] + curve["risk_se"], curve["risk"] - curve["risk_se"]
        figure.add_scatter(x=pd.concat([curve["value"], curve["value"][::-1]]),
                           y=pd.concat([upper, lower[::-1]]), fill="toself", mode="lines",
                           line=dict(width=0), fillcolor=BAND_COLOR, hoverinfo="skip",
                           showlegend=False, row=1, col=col)
        figure.add_scatter(x=curve["value"], y=curve["risk"], mode="lines+markers",
                           line=dict(color=OBSERVED_COLOR, width=2), marker=dict(size=5),
                           showlegend=False, row=1, col=col,
                           hovertemplate=spec.parameter + " = %{x:.3g}: %{y:.5f}<extra></extra>")
        chosen = table[table["estimator"] == key].iloc[0]
        figure.add_scatter(x=[chosen["value"]], y=[chosen["risk"]], mode="markers",
                           marker=dict(symbol="star", size=15, color=GAP_COLOR),
                           name="chosen", showlegend=col == 1, row=1, col=col,
                           hovertemplate="chosen %{x:.3g}: %{y:.5f}<extra></extra>")
        fixed = table[table["estimator"] == "bins-15"]
        if key == "bins" and len(fixed):
            figure.add_scatter(x=fixed["value"], y=fixed["risk"], mode="markers",
                               marker=dict(symbol="diamond", size=11, color=PREDICTED_COLOR),
                               name="15 bins (fixed)", row=1, col=col,
                               hovertemplate="15 bins: %{y:.5f}<extra></extra>")
        figure.update_xaxes(title_text=spec.parameter, type="log" if spec.log_scale else "linear",
                            exponentformat="power", row=1, col=col)
    figure.update_yaxes(title_text="validation risk", tickformat=".4f", row=1, col=1)
    figure.update_layout(height=360, margin=dict(l=10, r=10, t=50, b=10),
                         legend=dict(orientation="h", yanchor="bottom", y=1.12, x=0))
    return figure


def estimator_estimates_figure(estimates: pd.DataFrame) -> go.Figure:
    """Calibration estimates side by side: each estimator's CE² on the test part (eq. 21,
    ± 1 standard error over the fold fits) and the binned ECE² values on all rows.

    ``estimates`` is :func:`core.estimators.estimates_table`; the selected estimator is dark,
    the binned values of the Reliability page are yellow.

    Parameters
    ----------
    estimates : pandas.DataFrame
        As above.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    binned = estimates["risk"].isna()
    colors = [ESTIMATE_COLORS["binned"] if b else ESTIMATE_COLORS["selected"] if s
              else ESTIMATE_COLORS["candidate"]
              for b, s in zip(binned, estimates["selected"], strict=True)]
    figure = go.Figure(go.Bar(
        x=estimates["ce2"], y=estimates["estimate"], orientation="h", marker_color=colors,
        error_x=dict(type="data", array=estimates["ce2_se"].fillna(0.0), color="#555"),
        text=[f"{v:.4f}" for v in estimates["ce2"]], textposition="inside",
        insidetextanchor="start", textfont=dict(color="white"), customdata=estimates["rows"],
        hovertemplate="%{y}: %{x:.5f} (%{customdata} rows)<extra></extra>",
    ))
    figure.update_layout(
        height=110 + 44 * len(estimates), margin=dict(l=10, r=10, t=30, b=10),
        xaxis=dict(title="squared calibration error CE²", rangemode="tozero"),
        yaxis=dict(autorange="reversed"), showlegend=False,
    )
    return figure

