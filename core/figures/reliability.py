"""Plotly figures built from results; pure functions shared by the app and exports."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

OBSERVED_COLOR = "#1f5f8b"
PREDICTED_COLOR = "#f4b942"


def class_balance_figure(balance: pd.DataFrame) -> go.Figure:
    """Observed class shares beside mean predicted probabilities (calibration in the large).

    ``balance`` is :meth:`core.data.AuditData.class_balance`: columns ``class``, ``count``,
    ``share`` and ``mean predicted probability``. A calibrated model has the two bars of each
    class at the same height.
    """
    figure = go.Figure()
    figure.add_bar(
        x=balance["class"], y=balance["share"], name="observed share",
        marker_color=OBSERVED_COLOR, text=[f"{c:,} rows" for c in balance["count"]],
        textposition="outside", cliponaxis=False,
        hovertemplate="%{x}: %{y:.3f} observed (%{text})<extra></extra>",
    )
    figure.add_bar(
        x=balance["class"], y=balance["mean predicted probability"],
        name="mean predicted probability", marker_color=PREDICTED_COLOR,
        hovertemplate="%{x}: %{y:.3f} predicted<extra></extra>",
    )
    figure.update_layout(
        barmode="group", height=320, margin=dict(l=10, r=10, t=60, b=10),
        yaxis=dict(title="share of rows", rangemode="tozero", tickformat=".0%"),
        xaxis=dict(title="class", type="category"),
        legend=dict(orientation="h", yanchor="bottom", y=1.08, x=0),
    )
    return figure


NOTION_LABELS = {
    "positive": "P(y = positive class)",
    "top-label": "top-label confidence",
    "classwise": "class probability (one-vs-rest)",
}
BAND_COLOR = "rgba(31, 95, 139, 0.13)"
GAP_COLOR = "#c0392b"


def _axis_label(notion: str, class_name: str | None = None) -> str:
    label = NOTION_LABELS.get(notion, notion)
    return f"{label}: {class_name}" if class_name else label


def _add_reliability_traces(figure, table: pd.DataFrame, row: int, col: int,
                            show_legend: bool) -> None:
    """Diagonal, consistency band, observed frequencies with intervals, for one subplot."""
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
        marker=dict(color=OBSERVED_COLOR, size=7), line=dict(color=OBSERVED_COLOR, width=1.5),
        error_y=dict(
            type="data", symmetric=False, thickness=1.2, width=3, color=OBSERVED_COLOR,
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
) -> go.Figure:
    """Small multiples: one reliability diagram per group, same axes, sizes in the titles."""
    names = list(tables)
    rows = max(1, -(-len(names) // columns))
    titles = [f"{name} (n = {int(tables[name]['count'].sum()):,})" for name in names]
    figure = make_subplots(rows=rows, cols=columns, subplot_titles=titles,
                           horizontal_spacing=0.06, vertical_spacing=0.12 if rows > 1 else 0.1)
    for i, name in enumerate(names):
        _add_reliability_traces(figure, tables[name], i // columns + 1, i % columns + 1,
                                show_legend=i == 0)
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


# --------------------------------------------------------------------------- local calibration

GROUP_COLORS = ("#1f5f8b", "#d1495b", "#edae49", "#00798c", "#6a4c93", "#66a182", "#8d6a9f",
                "#2e4057")


def null_histogram_figure(null: np.ndarray, observed: float, title: str = "",
                          statistic_label: str = "KLCE²") -> go.Figure:
    """Histogram of the resampled null statistics with the observed value marked."""
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
    """p-value over the (prediction, feature) bandwidth grid; cells at or below α outlined."""
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


def lcb_figure(points: pd.DataFrame, trends: pd.DataFrame, feature: str,
               color: str | None = None, facet: str | None = None,
               max_points: int = 20_000) -> go.Figure:
    """LCB per query row against a feature (I-trustworthy Fig. 6), with per-group trends.

    ``points`` has columns ``feature``, ``lcb`` and the ``color`` / ``facet`` group columns;
    ``trends`` comes from :func:`core.lcb.lcb_trends` with its ``group`` column holding
    ``"<facet> | <color>"`` labels (or one of them). At most ``max_points`` points are drawn.
    """
    if len(points) > max_points:
        points = points.sample(max_points, random_state=0)
    facets = sorted(points[facet].astype(str).unique()) if facet else [None]
    columns = min(len(facets), 3)
    rows = -(-len(facets) // columns)
    figure = make_subplots(rows=rows, cols=columns, shared_yaxes=True,
                           subplot_titles=[f"{facet} = {f}" for f in facets] if facet else None,
                           horizontal_spacing=0.04, vertical_spacing=0.12)
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
                    fillcolor=_with_alpha(palette[c], 0.18), line=dict(width=0),
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
    figure.update_layout(height=380 * rows + 60, margin=dict(l=10, r=10, t=60, b=10),
                         legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0,
                                     title_text=color or ""))
    return figure


def _with_alpha(hex_color: str | None, alpha: float) -> str:
    hex_color = (hex_color or OBSERVED_COLOR).lstrip("#")
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r}, {g}, {b}, {alpha})"


def _bin_rows(in_bin: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows outside and inside the selected bin, each a seeded sample of at most
    ``max_points`` (what an LCE chart sends to the browser)."""
    rng = np.random.default_rng(0)
    parts = []
    for rows in (np.flatnonzero(~in_bin), np.flatnonzero(in_bin)):
        parts.append(rng.choice(rows, max_points, replace=False) if rows.size > max_points
                     else rows)
    return parts[0], parts[1]


def lce_scatter_figure(coords: np.ndarray, values: np.ndarray, in_bin: np.ndarray,
                       signed: bool, title: str = "", max_points: int = 50_000) -> go.Figure:
    """LCE landscape (Luo et al. Fig. 2, left): the embedding coloured by each point's LCE.

    Points of the selected confidence bin are coloured (diverging scale around 0 for the
    signed LCE: red over-confident, blue under-confident); the others are drawn faintly for
    context. At most ``max_points`` points of each kind are sent to the browser.
    """
    background, chosen = _bin_rows(in_bin, max_points)
    figure = go.Figure()
    figure.add_scattergl(
        x=coords[background, 0], y=coords[background, 1], mode="markers",
        marker=dict(size=3, color="#d5dbe0"), name="other bins", hoverinfo="skip",
    )
    bound = float(np.nanmax(np.abs(values[chosen]))) if chosen.size else 1.0
    figure.add_scattergl(
        x=coords[chosen, 0], y=coords[chosen, 1], mode="markers", name="selected bin",
        marker=dict(
            size=5, color=values[chosen],
            colorscale="RdBu_r" if signed else "Viridis",
            cmin=-bound if signed else 0.0, cmax=bound if bound > 0 else 1.0,
            colorbar=dict(title="LCE (signed)" if signed else "LCE"),
        ),
        hovertemplate="LCE %{marker.color:.3f}<extra></extra>",
    )
    figure.update_layout(
        title=title or None, height=560, margin=dict(l=10, r=10, t=50 if title else 20, b=40),
        xaxis=dict(title="embedding 1", showgrid=False, zeroline=False),
        yaxis=dict(title="embedding 2", showgrid=False, zeroline=False, scaleanchor="x"),
        legend=dict(orientation="h", yanchor="top", y=-0.12, x=0),
    )
    return figure


def lce_cdf_figure(values: np.ndarray, fraction: np.ndarray, bin_error: float,
                   mean_lce: float, max_points: int = 2_000) -> go.Figure:
    """CDF of the LCE inside one confidence bin against the bin's calibration error (Fig. 2,
    right): a curve lying right of the line means local errors the bin average hides. At
    most ``max_points`` steps are drawn (evenly spaced in rank, the first and last kept:
    the curve is unchanged to 1/max_points in height)."""
    if values.size > max_points:
        keep = np.linspace(0, values.size - 1, max_points).astype(int)
        values, fraction = values[keep], fraction[keep]
    figure = go.Figure()
    figure.add_scatter(x=values, y=fraction, mode="lines", line=dict(color=OBSERVED_COLOR,
                                                                     width=2.5),
                       name="LCE in the bin", hovertemplate="%{y:.0%} ≤ %{x:.3f}<extra></extra>")
    figure.add_vline(x=bin_error, line=dict(color=GAP_COLOR, width=2, dash="dash"),
                     annotation_text=f"bin error {bin_error:.3f}", annotation_position="top")
    figure.add_vline(x=mean_lce, line=dict(color="#7f8c8d", width=1.5, dash="dot"),
                     annotation_text=f"mean LCE {mean_lce:.3f}",
                     annotation_position="bottom right")
    figure.update_layout(height=340, margin=dict(l=10, r=10, t=40, b=10), showlegend=False,
                         xaxis_title="LCE", yaxis=dict(title="share of the bin's points",
                                                       tickformat=".0%", range=[0, 1.02]))
    return figure


def mlce_curve_figure(curve: pd.DataFrame, mce: float, selected: float | None = None
                      ) -> go.Figure:
    """MLCE against the kernel bandwidth γ (Luo et al. Fig. 1/3), with the global MCE that
    the curve approaches as γ → ∞ and the mean LCE beside it."""
    figure = go.Figure()
    figure.add_scatter(x=curve["gamma"], y=curve["mlce"], mode="lines+markers", name="MLCE",
                       line=dict(color=OBSERVED_COLOR, width=2.5))
    figure.add_scatter(x=curve["gamma"], y=curve["mean_lce"], mode="lines+markers",
                       name="mean LCE", line=dict(color=PREDICTED_COLOR, width=2))
    figure.add_hline(y=mce, line=dict(color=GAP_COLOR, dash="dash", width=1.5),
                     annotation_text=f"global MCE {mce:.3f}", annotation_position="top left")
    if selected is not None:
        figure.add_vline(x=selected, line=dict(color="#7f8c8d", dash="dot", width=1))
    figure.update_layout(height=340, margin=dict(l=10, r=10, t=30, b=10),
                         xaxis=dict(title="kernel bandwidth γ", type="log"),
                         yaxis=dict(title="calibration error", rangemode="tozero"),
                         legend=dict(orientation="h", yanchor="bottom", y=1.01, x=0))
    return figure


def lce_profile_figure(feature: np.ndarray, values: np.ndarray, in_bin: np.ndarray,
                       signed: bool, feature_name: str, title: str = "",
                       max_points: int = 50_000) -> go.Figure:
    """The 1-D LCE landscape for a single audit feature: each row's LCE (Luo et al., eq. 4)
    against the feature's value.

    Points of the selected confidence bin are coloured by their LCE (diverging around 0 for
    the signed LCE: red over-confident, blue under-confident); the other bins are drawn faintly
    for context. At most ``max_points`` points of each kind are sent to the browser.
    """
    background, chosen = _bin_rows(in_bin, max_points)
    figure = go.Figure()
    figure.add_scattergl(
        x=feature[background], y=values[background], mode="markers",
        marker=dict(size=3, color="#d5dbe0"), name="other bins", hoverinfo="skip",
    )
    bound = float(np.nanmax(np.abs(values[chosen]))) if chosen.size else 1.0
    figure.add_scattergl(
        x=feature[chosen], y=values[chosen], mode="markers", name="selected bin",
        marker=dict(
            size=5, color=values[chosen],
            colorscale="RdBu_r" if signed else "Viridis",
            cmin=-bound if signed else 0.0, cmax=bound if bound > 0 else 1.0,
            colorbar=dict(title="LCE (signed)" if signed else "LCE"),
        ),
        hovertemplate=f"{feature_name} %{{x:.4g}}<br>LCE %{{y:.3f}}<extra></extra>",
    )
    if signed:
        figure.add_hline(y=0.0, line=dict(color="#7f8c8d", width=1, dash="dot"))
    figure.update_layout(
        title=title or None, height=460, margin=dict(l=10, r=10, t=50 if title else 20, b=40),
        xaxis=dict(title=feature_name, showgrid=False, zeroline=False),
        yaxis=dict(title="LCE (signed: confidence − accuracy)" if signed else "LCE",
                   zeroline=False),
        legend=dict(orientation="h", yanchor="top", y=-0.14, x=0),
    )
    return figure


# --------------------------------------------------------------------------- estimators

ESTIMATE_COLORS = {"selected": OBSERVED_COLOR, "candidate": "#9fb7c9",
                   "binned": PREDICTED_COLOR}


def _estimator_names(table: pd.DataFrame) -> list[str]:
    return [f"{label} ({parameter} = {value:.3g})" for label, parameter, value in
            zip(table["label"], table["parameter"], table["value"], strict=True)]


def estimator_risk_figure(table: pd.DataFrame) -> go.Figure:
    """Validation risk (Gruber & Bach eq. 20) of each estimator at its chosen hyperparameter.

    ``table`` is :attr:`core.estimators.EstimatorSelection.table`. Left: the mean risk over the
    folds ± 1 standard error. Right: the risk above the selected estimator's, from per-fold
    paired differences ± 1 standard error — the folds share their rows, so this is the
    comparison that says whether one estimator is really better than another.
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


# --------------------------------------------------------------------------- smooth and cumulative

#: Widest ribbon of the smooth reliability diagram (at the density's peak), in y units.
RIBBON_WIDTH = 0.05


def smooth_reliability_figure(diagram, title: str = "",
                              class_name: str | None = None) -> go.Figure:
    """Smooth reliability diagram (Błasiok & Nakkiran 2023) from
    :func:`core.smooth.smooth_reliability`: the kernel-smoothed curve ``μ̂(t)`` drawn as a
    ribbon whose width is proportional to the density of the predictions ``δ̂(t)`` (their
    rendering: the curve is thick where predictions are many), over the bootstrap band. The
    smooth ECE is the density-weighted distance of the ribbon from the diagonal.
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
        fill="toself", fillcolor=_with_alpha(GAP_COLOR, 0.85), line=dict(width=0),
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
#: every stretch are kept, :meth:`core.cumulative.CumulativeDifferences.thinned`).
CUMULATIVE_POINTS = 5_000


def cumulative_figure(path, title: str = "", class_name: str | None = None,
                      max_points: int = CUMULATIVE_POINTS) -> go.Figure:
    """Cumulative differences (Arrieta-Ibarra et al. 2022) from
    :func:`core.cumulative.cumulative_differences`: ``C_k`` against the share ``k/n`` of rows
    ordered by prediction, with the pointwise ±2σ_k range of a calibrated model. The slope of
    the path over a stretch is the average (observed − predicted) of those rows; the range of
    the path is Kuiper's H. At most about ``max_points`` points are drawn (extremes kept).
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


# --------------------------------------------------------------------------- ensembles


def _member_color(index: int) -> str:
    return GROUP_COLORS[index % len(GROUP_COLORS)]


def credal_weights_figure(feature: np.ndarray, weights: np.ndarray,
                          member_names: list[str] | tuple[str, ...], feature_name: str,
                          max_points: int = 5_000) -> go.Figure:
    """Learned weights λ_m(x) of each member against one feature (which member is trusted
    where): one marker series per member, rows sorted by the feature; each row's weights
    sum to 1. At most ``max_points`` rows (evenly spaced in feature order) are drawn."""
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
    At most ``max_points`` rows are drawn (an even subsample)."""
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
    are red."""
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


# --------------------------------------------------------------------------- recalibration

METHOD_COLORS = ("#7f8c8d", "#1f5f8b", "#d1495b", "#edae49", "#00798c", "#6a4c93", "#66a182",
                 "#8d6a9f", "#2e4057", "#c0392b", "#16a085", "#e67e22", "#34495e", "#9b59b6",
                 "#27ae60", "#b9770e", "#5d6d7e")


def mlce_comparison_figure(curves: dict[str, pd.DataFrame], gamma: float | None = None
                           ) -> go.Figure:
    """MLCE against γ for every method on one chart (Luo et al., Fig. 3): lower is better at
    every γ; the first curve (the uncalibrated model) is drawn dashed in grey."""
    figure = go.Figure()
    for i, (name, curve) in enumerate(curves.items()):
        figure.add_scatter(
            x=curve["gamma"], y=curve["mlce"], mode="lines+markers", name=name,
            line=dict(color=METHOD_COLORS[i % len(METHOD_COLORS)], width=2.5 if i else 2,
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


def klce_pvalue_figure(table: pd.DataFrame, alpha: float = 0.05) -> go.Figure:
    """The aggregated KLCE test's p-value of every method (a bar each, log scale) against α:
    bars at or below the line reject local calibration (I-trustworthy, Fig. 4). ``table`` has
    columns ``method``, ``klce_p`` and optionally ``klce_p_sd`` (error bars)."""
    rejected = table["klce_p"] <= alpha
    errors = dict(type="data", array=table["klce_p_sd"], thickness=1.2) \
        if "klce_p_sd" in table else None
    figure = go.Figure(go.Bar(
        x=table["method"], y=table["klce_p"], error_y=errors,
        marker_color=np.where(rejected, GAP_COLOR, OBSERVED_COLOR),
        text=[f"{p:.3f}" for p in table["klce_p"]], textposition="outside", cliponaxis=False,
        hovertemplate="%{x}: p = %{y:.4f}<extra></extra>"))
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


def lcb_before_after_figure(trends: pd.DataFrame, feature: str) -> go.Figure:
    """Trend of the local bias LCB against one feature before and after a recalibration,
    with bootstrap bands (``core.recalibration.compare.lcb_before_after``); a repaired model
    has its curve on the zero line."""
    figure = go.Figure()
    for i, (label, part) in enumerate(trends.groupby("group", sort=False)):
        color = (PREDICTED_COLOR, OBSERVED_COLOR)[i % 2]
        figure.add_scatter(x=list(part["x"]) + list(part["x"][::-1]),
                           y=list(part["high"]) + list(part["low"][::-1]), fill="toself",
                           fillcolor=_with_alpha(color, 0.18), line=dict(width=0),
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
