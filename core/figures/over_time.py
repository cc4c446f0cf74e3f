"""Figures of the Over time page and the monitoring report: a metric per period with its
band, the calibration e-process on a log scale with its alarm line, per-group small
multiples, and the confidence sequence of the champion/challenger Brier difference."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.palette import BAND_COLOR, GAP_COLOR, GROUP_COLORS, OBSERVED_COLOR
from core.figures.style import apply_style
from core.monitor.monitoring import MonitorResult
from core.monitor.periods import ALL_ROWS
from core.monitor.series import shown_rows

#: The metrics :func:`period_metric_figure` draws: column, title, axis label.
PERIOD_METRICS = {
    "gap": ("Mean gap per period (outcome − forecast)", "mean gap"),
    "ece": ("ECE per period (L1, 15 equal-width bins)", "ECE"),
    "brier": ("Brier score per period", "Brier score"),
}
ALARM_COLOR = "#b3261e"


def _x(result: MonitorResult, rows: np.ndarray) -> tuple[np.ndarray, str]:
    # a threshold is drawn as a two-point line, not add_hline: on a log axis a shape's y is
    # read as an exponent
    """The x values of ``rows``: their times when the column holds dates, else row numbers."""
    if result.time_labels.size and np.issubdtype(result.time_labels.dtype, np.datetime64):
        return result.time_labels[result.positions(rows)], result.time_column
    return rows + 1, "row (in time order)"


def period_metric_figure(result: MonitorResult, metric: str = "gap") -> go.Figure:
    """The overall metric per period with its interval as a band (gap: Wald; ECE, Brier:
    bootstrap), the period's rows on hover; for the gap, the zero line.

    Parameters
    ----------
    result : MonitorResult
        What :func:`core.monitor.monitor_audit` returned.
    metric : {"gap", "ece", "brier"}
        The metric drawn.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    title, axis = PERIOD_METRICS[metric]
    table = result.table[result.table["group"] == ALL_ROWS]
    figure = go.Figure()
    figure.add_scatter(x=table["period"], y=table[f"{metric}_high"], mode="lines",
                       line=dict(width=0), showlegend=False, hoverinfo="skip")
    figure.add_scatter(x=table["period"], y=table[f"{metric}_low"], mode="lines",
                       line=dict(width=0), fill="tonexty", fillcolor=BAND_COLOR,
                       name=f"{int(0.95 * 100)}% interval (per period)", hoverinfo="skip")
    figure.add_scatter(x=table["period"], y=table[metric], mode="lines+markers",
                       name=axis, line=dict(color=OBSERVED_COLOR, width=2.5),
                       customdata=table[["rows"]].to_numpy(),
                       hovertemplate="%{x}<br>" + axis + " %{y:.4f}<br>%{customdata[0]:,} rows"
                                     "<extra></extra>")
    if metric == "gap":
        figure.add_hline(y=0, line=dict(color="#7f8c8d", dash="dash", width=1))
    figure.update_layout(title=title, xaxis_title="period", yaxis_title=axis, height=380,
                         xaxis=dict(type="category"))
    return apply_style(figure, "per-period intervals are fixed-sample, valid for one period "
                               "read once · the alarm is the e-process below")


def eprocess_figure(result: MonitorResult) -> go.Figure:
    """The overall calibration e-process (and its components) on a log scale, with the alarm
    line 1/α and the alarm row marked.

    Parameters
    ----------
    result : MonitorResult
        What :func:`core.monitor.monitor_audit` returned.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    process = result.eprocess
    rows = shown_rows(result.n, (process.alarm,))
    at = result.positions(rows)
    x, x_title = _x(result, rows)
    figure = go.Figure()
    for k, (name, values) in enumerate(process.components.items()):
        figure.add_scatter(x=x, y=values[at], mode="lines", name=f"{name} e-process",
                           line=dict(color=GROUP_COLORS[(k + 2) % len(GROUP_COLORS)], width=1,
                                     dash="dot"))
    figure.add_scatter(x=x, y=process.e_values[at], mode="lines",
                       name=f"e-value ({process.method})",
                       line=dict(color=OBSERVED_COLOR, width=2.5),
                       customdata=result.periods[at],
                       hovertemplate="%{customdata}<br>e = %{y:.3g}<extra></extra>")
    figure.add_scatter(x=x[[0, -1]], y=[process.threshold] * 2, mode="lines",
                       name=f"alarm line 1/α = {process.threshold:g}",
                       line=dict(color=ALARM_COLOR, dash="dash", width=1.5))
    if process.alarm is not None:
        ax, _ = _x(result, np.array([process.alarm]))
        figure.add_scatter(x=ax, y=[process.e_values[result.positions(process.alarm)]],
                           mode="markers", name=f"alarm ({result.period_of(process.alarm)})",
                           marker=dict(color=ALARM_COLOR, size=12, symbol="x"))
    figure.update_layout(title="Calibration e-process, all rows (log scale)",
                         xaxis_title=x_title, yaxis_title="e-value", yaxis_type="log",
                         height=400)
    return apply_style(figure, f"P(a calibrated model ever crosses the line) ≤ α = "
                               f"{process.alpha:g}, however often it is read · anytime-valid "
                               f"p-value now {process.p_value:.3g}")


def _small_multiples(titles: list[str], shared_yaxes: bool = False
                     ) -> tuple[go.Figure, int, int]:
    """A grid of at most three panels a row, one per title, sharing the time axis; returns
    the figure and its numbers of columns and rows."""
    cols = min(3, len(titles))
    rows = math.ceil(len(titles) / cols)
    figure = make_subplots(rows=rows, cols=cols, subplot_titles=titles, shared_xaxes=True,
                           shared_yaxes=shared_yaxes, vertical_spacing=0.12)
    return figure, cols, rows


def _groups(result: MonitorResult) -> list[tuple[str, object]]:
    return [(f"{attribute} = {level}", process) for attribute, family in result.groups.items()
            for level, process in family.processes.items()]


def group_eprocess_figure(result: MonitorResult) -> go.Figure | None:
    """Small multiples: each group's e-process (log scale) with its alarm line G/α; None
    without groups.

    Parameters
    ----------
    result : MonitorResult
        What :func:`core.monitor.monitor_audit` returned.

    Returns
    -------
    plotly.graph_objects.Figure or None
        None without groups.
    """
    groups = _groups(result)
    if not groups:
        return None
    figure, cols, rows_n = _small_multiples([g for g, _ in groups])
    alarms = tuple(p.alarm for _, p in groups)
    rows = shown_rows(result.n, alarms)
    at = result.positions(rows)
    x, x_title = _x(result, rows)
    for k, (name, process) in enumerate(groups):
        r, c = k // cols + 1, k % cols + 1
        color = ALARM_COLOR if process.alarm is not None else OBSERVED_COLOR
        figure.add_scatter(x=x, y=process.e_values[at], mode="lines", name=name,
                           line=dict(color=color, width=2), showlegend=False,
                           hovertemplate=name + "<br>e = %{y:.3g}<extra></extra>", row=r, col=c)
        figure.add_scatter(x=x[[0, -1]], y=[process.threshold] * 2, mode="lines",
                           showlegend=False, hoverinfo="skip",
                           line=dict(color=ALARM_COLOR, dash="dash", width=1), row=r, col=c)
        figure.update_yaxes(type="log", row=r, col=c)
    figure.update_layout(title="Calibration e-process per group (log scale; red: alarmed)",
                         height=240 * rows_n + 80)
    threshold = groups[0][1].threshold
    return apply_style(figure, f"x: {x_title} · dashed: the alarm line G/α = {threshold:g} "
                               f"(Bonferroni over {len(groups)} groups: family-wise false-alarm "
                               f"rate ≤ {result.settings.alpha:g})")


def group_gap_figure(result: MonitorResult) -> go.Figure | None:
    """Small multiples: each group's mean gap per period with its interval; None without
    groups.

    Parameters
    ----------
    result : MonitorResult
        What :func:`core.monitor.monitor_audit` returned.

    Returns
    -------
    plotly.graph_objects.Figure or None
        None without groups.
    """
    table = result.table[result.table["group"] != ALL_ROWS]
    names = list(pd.unique(table["group"]))
    if not names:
        return None
    figure, cols, rows_n = _small_multiples(names, shared_yaxes=True)
    for k, name in enumerate(names):
        part = table[table["group"] == name]
        r, c = k // cols + 1, k % cols + 1
        figure.add_scatter(
            x=part["period"], y=part["gap"], mode="markers", showlegend=False,
            marker=dict(color=GAP_COLOR, size=5),
            error_y=dict(type="data", symmetric=False, array=part["gap_high"] - part["gap"],
                         arrayminus=part["gap"] - part["gap_low"], thickness=1, width=0),
            customdata=part[["rows"]].to_numpy(),
            hovertemplate=name + "<br>%{x}: gap %{y:.3f}<br>%{customdata[0]:,} rows"
                                 "<extra></extra>", row=r, col=c)
        figure.add_hline(y=0, line=dict(color="#7f8c8d", dash="dash", width=1), row=r, col=c)
        figure.update_xaxes(type="category", row=r, col=c)
    figure.update_layout(title="Mean gap per period and group (outcome − forecast)",
                         height=240 * rows_n + 80)
    return apply_style(figure, "bars: 95% Wald intervals, fixed-sample per period and group")


def brier_sequence_figure(result: MonitorResult) -> go.Figure | None:
    """The confidence sequence of the running Brier difference (champion − challenger;
    above 0: the challenger is better); None without a challenger.

    Parameters
    ----------
    result : MonitorResult
        What :func:`core.monitor.monitor_audit` returned.

    Returns
    -------
    plotly.graph_objects.Figure or None
        None without a challenger.
    """
    comparison = result.comparison
    if comparison is None:
        return None
    sequence = comparison.sequence
    rows = shown_rows(result.n, (comparison.alarm,))
    at = result.positions(rows)
    x, x_title = _x(result, rows)
    figure = go.Figure()
    figure.add_scatter(x=x, y=sequence.upper[at], mode="lines", line=dict(width=0),
                       showlegend=False, hoverinfo="skip")
    figure.add_scatter(x=x, y=sequence.lower[at], mode="lines", line=dict(width=0),
                       fill="tonexty", fillcolor=BAND_COLOR,
                       name=f"{1 - sequence.alpha:.0%} confidence sequence", hoverinfo="skip")
    figure.add_scatter(x=x, y=sequence.estimate[at], mode="lines",
                       name="running mean difference", line=dict(color=OBSERVED_COLOR, width=2))
    figure.add_hline(y=0, line=dict(color="#7f8c8d", dash="dash", width=1))
    challenger = result.settings.challenger
    figure.update_layout(
        title=f"Brier score: {result.model} (champion) − {challenger} (challenger)",
        xaxis_title=x_title, yaxis_title="running mean difference", height=380)
    return apply_style(figure, "above 0: the challenger scores better · the band holds at every "
                               "row at once (empirical-Bernstein, Choe & Ramdas 2023) · "
                               f"anytime p-value of 'challenger better' {comparison.p_value:.3g}")
